package amqpx

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Hostile header tables (issue 19): the shapes are a nesting depth, a
// width (entries at the top or in a nested table), a padding size near
// frame_max, and raw bytes as a table of their own.

// tableBytes is a header table's content: x-acemq-id, a table nested
// depth deep under "deep", width entries (at the top, or nested), padding
// bytes under "padding", then raw as the value of "raw" (a longstr).
func tableBytes(depth, width int, nestedWidth bool, padding int, raw []byte) []byte {
	var b []byte
	b = appendStringEntry(b, wire.HeaderID, "fuzz-id")
	if depth > 0 {
		inner := appendStringEntry(nil, "leaf", "x")
		for range depth - 1 {
			inner = appendTableEntry(nil, "n", inner)
		}
		b = appendTableEntry(b, "deep", inner)
	}
	var wide []byte
	for i := range width {
		wide = appendStringEntry(wide, fmt.Sprintf("w%05d", i), "")
	}
	if nestedWidth {
		b = appendTableEntry(b, "wide", wide)
	} else {
		b = append(b, wide...)
	}
	if padding > 0 {
		b = appendStringEntry(b, "padding", strings.Repeat("p", padding))
	}
	if raw != nil {
		b = appendStringEntry(b, "raw", string(raw))
	}
	return b
}

func appendTableEntry(b []byte, key string, content []byte) []byte {
	b = append(b, byte(len(key)))
	b = append(b, key...)
	b = append(b, 'F')
	b = binary.BigEndian.AppendUint32(b, uint32(len(content)))
	return append(b, content...)
}

// headerFrame is a content header frame on channel 1 with content-type
// text/plain and table as its headers.
func headerFrame(table []byte) []byte {
	p := []byte{0, 60, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0xA0, 0} // class, weight, body size 5, flags
	p = append(p, byte(len("text/plain")))
	p = append(p, "text/plain"...)
	p = binary.BigEndian.AppendUint32(p, uint32(len(table)))
	p = append(p, table...)
	f := []byte{2, 0, 1}
	f = binary.BigEndian.AppendUint32(f, uint32(len(p)))
	f = append(f, p...)
	return append(f, 0xCE)
}

// readLimits reads table content as amqp091-go's reader would, written
// again here from its rules (read.go): the deepest container level, the
// widest container, whether it parses.
func readLimits(b []byte, depth int) (deepest, widest int, ok bool) {
	deepest, n := depth, 0
	keys := map[string]bool{}
	for i := 0; i < len(b); n++ {
		k := int(b[i])
		if i+1+k >= len(b) {
			return 0, 0, false
		}
		keys[string(b[i+1:i+1+k])] = true
		end, d, w, ok := readValue(b, i+1+k, depth)
		if !ok {
			return 0, 0, false
		}
		deepest, widest, i = max(deepest, d), max(widest, w), end
	}
	if n > amqpMaxEntries && len(keys) >= amqpMaxEntries {
		widest = max(widest, n)
	}
	return deepest, widest, true
}

func readValue(b []byte, i, depth int) (end, deepest, widest int, ok bool) {
	typ := b[i]
	if n, fixed := fixedFieldSize(typ); fixed {
		return i + 1 + n, depth, 0, i+1+n <= len(b)
	}
	if i+5 > len(b) {
		return 0, 0, 0, false
	}
	end = i + 5 + int(binary.BigEndian.Uint32(b[i+1:]))
	if end > len(b) {
		return 0, 0, 0, false
	}
	switch typ {
	case 'S', 'x':
		return end, depth, 0, true
	case 'F':
		d, w, ok := readLimits(b[i+5:end], depth+1)
		return end, d, w, ok
	}
	return 0, 0, 0, false // no arrays in these shapes
}

// filteredTable is the headers of a frame the filter returned, checked to
// be a whole frame.
func filteredTable(t *testing.T, out []byte) []byte {
	t.Helper()
	if len(out) < 8 || out[len(out)-1] != 0xCE || int(binary.BigEndian.Uint32(out[3:7])) != len(out)-8 {
		t.Fatalf("the filter's frame is not whole: % x…", out[:min(len(out), 16)])
	}
	at, end, ok := headersAt(out[7 : len(out)-1])
	if !ok {
		t.Fatal("the filter's frame has no headers")
	}
	return out[7+at+4 : 7+end]
}

// FuzzHeaderFilter: whatever the shape, the filter returns a whole frame
// whose table amqp091-go's rules read (depth ≤ 32, width ≤ 8192), keeps
// x-acemq-id, and leaves a readable table byte for byte as it was.
func FuzzHeaderFilter(f *testing.F) {
	f.Add(uint16(40), uint16(0), false, uint32(0), []byte(nil))    // nested 40 deep
	f.Add(uint16(33), uint16(0), false, uint32(0), []byte(nil))    // one past the limit
	f.Add(uint16(32), uint16(0), false, uint32(0), []byte(nil))    // at the limit
	f.Add(uint16(0), uint16(8193), false, uint32(0), []byte(nil))  // 8,193 entries
	f.Add(uint16(0), uint16(8191), false, uint32(0), []byte(nil))  // 8,192 with the id
	f.Add(uint16(0), uint16(8193), true, uint32(0), []byte(nil))   // a nested table of 8,193
	f.Add(uint16(3), uint16(2), false, uint32(130_400), []byte{0}) // near frame_max
	f.Add(uint16(2000), uint16(1), true, uint32(1), []byte("F\x00\x00\x00\x09"))
	f.Fuzz(func(t *testing.T, depth, width uint16, nested bool, padding uint32, raw []byte) {
		table := tableBytes(int(depth%2048), int(width%9000), nested, int(padding%131_072), raw)
		in := headerFrame(table)
		out := filterHeaderFrame(bytes.Clone(in))
		got := filteredTable(t, out)
		d, w, ok := readLimits(got, 0)
		if !ok || d > amqpMaxDepth || w > amqpMaxEntries {
			t.Fatalf("depth %d width %d nested %v: the filtered table reads ok=%v depth %d width %d", depth, width, nested, ok, d, w)
		}
		if !bytes.Contains(got, []byte("\x0ax-acemq-idS\x00\x00\x00\x07fuzz-id")) {
			t.Errorf("depth %d width %d: x-acemq-id dropped", depth, width)
		}
		d, w, ok = readLimits(table, 0)
		readable := ok && d <= amqpMaxDepth && w <= amqpMaxEntries
		if readable != bytes.Equal(in, out) {
			t.Errorf("depth %d width %d nested %v: readable=%v (depth %d width %d) but changed=%v", depth, width, nested, readable, d, w, !bytes.Equal(in, out))
		}
		if !readable && !bytes.Contains(got, []byte(wire.HeaderUnreadable)) {
			t.Errorf("depth %d width %d: cut without %s", depth, width, wire.HeaderUnreadable)
		}
	})
}

// FuzzFitFrame: a copy whose headers are near or over frame_max fits it
// after FitFrame, with its kept headers untouched (unless one alone is
// over keptCut) and x-acemq-dropped-headers saying so; one that fits is
// left as it was.
func FuzzFitFrame(f *testing.F) {
	f.Add(uint32(130_400), uint16(1), uint16(36), uint32(131_072))
	f.Add(uint32(131_000), uint16(50), uint16(36), uint32(131_072))
	f.Add(uint32(4096), uint16(3), uint16(36), uint32(4096))
	f.Add(uint32(10), uint16(0), uint16(5000), uint32(4096))
	f.Fuzz(func(t *testing.T, padding uint32, others uint16, idLen uint16, frameMax uint32) {
		fm := 4096 + int(frameMax%(1<<20))
		h := amqp.Table{"padding": strings.Repeat("p", int(padding%(1<<20))), wire.HeaderID: strings.Repeat("i", int(idLen%8000)),
			wire.HeaderFirstSeen: "2026-01-02T03:04:05.000Z", wire.HeaderAttempt: int64(2), wire.HeaderError: strings.Repeat("e", core.MaxErrorLen)}
		for i := range int(others % 200) {
			h[fmt.Sprint("h", i)] = amqp.Table{"n": int64(i), "s": strings.Repeat("x", i*7)}
		}
		msg := amqp.Publishing{Headers: h, ContentType: "text/plain", CorrelationId: "corr", Type: "t", MessageId: "m", DeliveryMode: 2}
		before := HeaderFrameSize(msg)
		changed := FitFrame(&msg, fm)
		if changed != (before > fm) {
			t.Fatalf("size %d, frame_max %d: changed=%v", before, fm, changed)
		}
		if after := HeaderFrameSize(msg); after > fm {
			t.Fatalf("size %d → %d, still over frame_max %d", before, after, fm)
		}
		if !changed {
			return
		}
		note, _ := msg.Headers[wire.HeaderDropped].(string)
		if !strings.Contains(note, fmt.Sprint("frame_max ", fm)) {
			t.Errorf("%s = %q", wire.HeaderDropped, note)
		}
		if id, _ := msg.Headers[wire.HeaderID].(string); len(id) != min(int(idLen%8000), keptCut) && len(id) != int(idLen%8000) {
			t.Errorf("x-acemq-id of %d bytes became %d", idLen%8000, len(id))
		}
		if msg.Headers[wire.HeaderFirstSeen] != "2026-01-02T03:04:05.000Z" || msg.Headers[wire.HeaderAttempt] != int64(2) || msg.CorrelationId != "corr" || msg.Type != "t" {
			t.Errorf("identity changed: %v %v %q %q", msg.Headers[wire.HeaderFirstSeen], msg.Headers[wire.HeaderAttempt], msg.CorrelationId, msg.Type)
		}
	})
}
