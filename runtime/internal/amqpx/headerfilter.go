package amqpx

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/wire"
)

// amqp091-go (v1.16 and v1.17, read.go) refuses a field table nested more
// than 32 deep or holding more than 8192 entries (a table's distinct keys,
// an array's elements), and an encoding it cannot parse; it refuses it by
// closing the whole connection (FRAME_ERROR), after which the broker puts
// the message back at the head of its queue and the next delivery closes
// the next connection: a livelock that takes every publisher and consumer
// of the connection with it, with no delivery ever seen by the runtime.
// TestFrameErrorsIsolateAndBackOff, which dials with the filter off, sees
// amqp091-go close the connection so; the day it does not, the filter can
// go.
//
// headerFilter sits under amqp091-go on the socket and reads every content
// header frame the broker sends before amqp091-go does. A frame whose
// header table amqp091-go would refuse is rewritten: the top-level headers
// it cannot read are dropped (all foreign ones when the table itself is
// too wide; the runtime's own x-acemq-* headers and the replay stamps are
// kept when readable), x-acemq-dropped-headers says which and why, and
// headerUnreadable carries the reason. The consumer parks such a delivery
// (its handler never sees it); Pull, Browse and Replay read it as it now
// is. Every other frame passes through byte for byte. Under amqps the
// frames are encrypted below amqp091-go's TLS and the filter is not in
// place: a consumer whose connection keeps dying on frame errors is
// isolated and backed off instead (framefail.go).

// Limits of amqp091-go's reader (read.go: maxFieldDepth,
// maxContainerElements).
const (
	amqpMaxDepth   = 32
	amqpMaxEntries = 8192
)

// headerUnreadable is written by the filter only (one a producer forges is
// dropped): the reason a delivery's headers were cut.
const headerUnreadable = wire.HeaderUnreadable

// maxFilteredFrame bounds the header frames the filter reads whole; a
// larger one (beyond any frame_max) passes through for amqp091-go to
// refuse.
const maxFilteredFrame = 16 << 20

// measureDepth bounds how deep the filter follows a nesting to say how
// deep it goes; past it the reason says "more than".
const measureDepth = 1000

// HeaderFilterConn is the socket under amqp091-go with headerFilter on
// its reads.
type HeaderFilterConn struct {
	net.Conn
	in   *bufio.Reader
	out  []byte // a rewritten (or whole read) header frame, not yet read
	pass int    // bytes of the current frame still to pass through
	buf  []byte // reused for header frames
}

func (f *HeaderFilterConn) Read(p []byte) (int, error) {
	if f.in == nil {
		f.in = bufio.NewReaderSize(f.Conn, 32<<10)
	}
	for len(f.out) == 0 && f.pass == 0 {
		if err := f.next(); err != nil {
			return 0, err
		}
	}
	if len(f.out) > 0 {
		n := copy(p, f.out)
		f.out = f.out[n:]
		return n, nil
	}
	n, err := f.in.Read(p[:min(len(p), f.pass)])
	f.pass -= n
	return n, err
}

// next reads the next frame's header: a content header frame is read
// whole (and rewritten when it must be), any other frame passes through.
func (f *HeaderFilterConn) next() error {
	h, err := f.in.Peek(7)
	if err != nil {
		return err
	}
	if string(h[:4]) == "AMQP" {
		f.pass = 8 // the broker's protocol header: a version it does not speak
		return nil
	}
	size := int(binary.BigEndian.Uint32(h[3:7]))
	if h[0] != 2 || size > maxFilteredFrame {
		f.pass = 7 + size + 1
		return nil
	}
	if cap(f.buf) < 8+size {
		f.buf = make([]byte, 8+size)
	}
	frame := f.buf[:8+size]
	if _, err := io.ReadFull(f.in, frame); err != nil {
		return err
	}
	f.out = filterHeaderFrame(frame)
	return nil
}

// filterHeaderFrame returns frame, or a rewritten copy when its header
// table holds what amqp091-go cannot read (or a forged headerUnreadable).
func filterHeaderFrame(frame []byte) []byte {
	p := frame[7 : len(frame)-1]
	at, end, ok := headersAt(p)
	if !ok {
		return frame
	}
	table, changed := cleanTable(p[at+4 : end])
	if !changed {
		return frame
	}
	out := make([]byte, 0, 7+at+4+len(table)+len(p)-end+1)
	out = append(out, frame[:7]...)
	out = append(out, p[:at]...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(table)))
	out = append(out, table...)
	out = append(out, p[end:]...)
	out = append(out, 0xCE)
	binary.BigEndian.PutUint32(out[3:7], uint32(len(out)-8))
	return out
}

// headersAt finds the header table in a content header payload p: the
// offset of its length and its end. ok is false when there is none, or p
// is not what amqp091-go reads (left for it to refuse).
func headersAt(p []byte) (at, end int, ok bool) {
	const flagsAt = 12 // class 2, weight 2, body size 8
	if len(p) < flagsAt+2 {
		return 0, 0, false
	}
	flags := binary.BigEndian.Uint16(p[flagsAt:])
	if flags&0x2000 == 0 || flags&1 != 0 {
		return 0, 0, false
	}
	at = flagsAt + 2
	for _, bit := range []uint16{0x8000, 0x4000} { // content-type, content-encoding
		if flags&bit != 0 {
			if at >= len(p) {
				return 0, 0, false
			}
			at += 1 + int(p[at])
		}
	}
	if at+4 > len(p) {
		return 0, 0, false
	}
	end = at + 4 + int(binary.BigEndian.Uint32(p[at:]))
	if end > len(p) || end < at {
		return 0, 0, false
	}
	return at, end, true
}

// entry is one top-level header of a table being cleaned.
type entry struct {
	key      string
	raw      []byte // key and value as encoded
	problem  string // why amqp091-go cannot read the value; "" when it can
	readable bool
}

// cleanTable returns a header table amqp091-go can read, and whether it had
// to change anything: the entries it cannot read dropped (every foreign
// one when the table is too wide), those it cannot split off dropped, a
// forged headerUnreadable dropped, and x-acemq-dropped-headers and
// headerUnreadable saying what and why.
func cleanTable(b []byte) ([]byte, bool) {
	if readableTable(b) {
		return b, false
	}
	entries, tail := splitEntries(b)
	var why []string
	if tail != "" {
		why = append(why, tail)
	}
	wide := tooWide(entries)
	if wide {
		why = append(why, fmt.Sprintf("the header table holds %d entries (amqp091-go reads %d)", len(entries), amqpMaxEntries))
	}
	var kept, dropped []entry
	for _, e := range entries {
		switch {
		case e.key == headerUnreadable:
			dropped = append(dropped, e)
		case !e.readable:
			why = append(why, fmt.Sprintf("header %q %s", e.key, e.problem))
			dropped = append(dropped, e)
		case wide && !keptHeaders[e.key]:
			dropped = append(dropped, e)
		default:
			kept = append(kept, e)
		}
	}
	if len(dropped) == 0 && len(why) == 0 {
		return b, false // many entries, few distinct keys: amqp091-go reads them
	}
	out := make([]byte, 0, len(b))
	for _, e := range kept {
		if e.key != wire.HeaderDropped {
			out = append(out, e.raw...)
		}
	}
	reason := strings.Join(why, "; ")
	if len(why) == 0 {
		reason = "a forged " + headerUnreadable + " (only the runtime writes it)"
	} else {
		out = appendStringEntry(out, headerUnreadable, core.CapReason(reason))
	}
	return appendStringEntry(out, wire.HeaderDropped, core.CapReason(unreadableNote(dropped, reason))), true
}

// readableTable is the filter's fast path: b is a table amqp091-go reads
// and holds no headerUnreadable.
func readableTable(b []byte) bool {
	n := 0
	for i := 0; i < len(b); n++ {
		klen := int(b[i])
		if i+1+klen >= len(b) || string(b[i+1:i+1+klen]) == headerUnreadable {
			return false
		}
		end, problem, ok := scanField(b, i+1+klen, 0)
		if !ok || problem != "" {
			return false
		}
		i = end
	}
	return n <= amqpMaxEntries
}

// tooWide reports a table of entries amqp091-go refuses for its width: it
// refuses an entry read while the table already holds amqpMaxEntries
// distinct keys (counted here as more entries than that with at least that
// many distinct keys).
func tooWide(entries []entry) bool {
	if len(entries) <= amqpMaxEntries {
		return false
	}
	seen := make(map[string]struct{}, len(entries))
	for _, e := range entries {
		seen[e.key] = struct{}{}
	}
	return len(seen) >= amqpMaxEntries
}

// unreadableNote is x-acemq-dropped-headers for headers the filter dropped.
func unreadableNote(dropped []entry, reason string) string {
	names := make([]string, 0, min(len(dropped), 20))
	for _, e := range dropped[:min(len(dropped), 20)] {
		names = append(names, e.key)
	}
	list := strings.Join(names, ", ")
	if len(dropped) > len(names) {
		list += fmt.Sprintf(" and %d more", len(dropped)-len(names))
	}
	return fmt.Sprintf("dropped %s (%s): unreadable: %s", core.Plural(len(dropped), "header", "headers"), list, reason)
}

func appendStringEntry(b []byte, key, v string) []byte {
	b = append(b, byte(len(key)))
	b = append(b, key...)
	b = append(b, 'S')
	b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
	return append(b, v...)
}

// splitEntries splits a table's bytes into its top-level entries, each
// checked; tail says why the bytes after the last whole entry could not be
// split ("" when none are left).
func splitEntries(b []byte) ([]entry, string) {
	var out []entry
	for i := 0; i < len(b); {
		klen := int(b[i])
		if i+1+klen >= len(b) {
			return out, fmt.Sprintf("the header table is cut short after %d entries", len(out))
		}
		key := string(b[i+1 : i+1+klen])
		end, problem, ok := scanField(b, i+1+klen, 0)
		if !ok {
			return out, fmt.Sprintf("the header table cannot be read from header %q on: %s", key, problem)
		}
		out = append(out, entry{key: key, raw: b[i:end], problem: problem, readable: problem == ""})
		i = end
	}
	return out, ""
}

// scanField checks the field value at b[i:] as amqp091-go reads it at
// depth (the table holding it is at depth): its end, and the problem
// amqp091-go would have with it. ok is false when its end cannot be found.
func scanField(b []byte, i, depth int) (end int, problem string, ok bool) {
	if i >= len(b) {
		return 0, "a value is missing", false
	}
	typ, i := b[i], i+1
	if n, fixed := fixedFieldSize(typ); fixed {
		if i+n > len(b) {
			return 0, "a value is cut short", false
		}
		return i + n, "", true
	}
	if i+4 > len(b) {
		return 0, "a length is cut short", false
	}
	n := int(binary.BigEndian.Uint32(b[i:]))
	start, end := i+4, i+4+n
	if end > len(b) || n > 1<<31-1 {
		return 0, fmt.Sprintf("a length of %d bytes runs past its table", n), false
	}
	switch typ {
	case 'S', 'x':
		return end, "", true
	case 'F':
		return end, checkContainer(b[start:end], depth+1, true), true
	case 'A':
		return end, checkContainer(b[start:end], depth+1, false), true
	}
	return 0, fmt.Sprintf("field type %q is not one amqp091-go reads", typ), false
}

// fixedFieldSize is the value size of a field type of fixed size.
func fixedFieldSize(typ byte) (int, bool) {
	switch typ {
	case 't', 'B', 'b':
		return 1, true
	case 's', 'u':
		return 2, true
	case 'I', 'i', 'f':
		return 4, true
	case 'l', 'd', 'T':
		return 8, true
	case 'D':
		return 5, true
	case 'V':
		return 0, true
	}
	return 0, false
}

// checkContainer checks a nested table (or array) at depth: "" when
// amqp091-go reads it, else why not.
func checkContainer(b []byte, depth int, table bool) string {
	if depth > amqpMaxDepth {
		return fmt.Sprintf("nests %s deep (amqp091-go reads %d)", depthOf(b, depth, table), amqpMaxDepth)
	}
	n := 0
	for i := 0; i < len(b); n++ {
		if table {
			klen := int(b[i])
			if i+1+klen >= len(b) {
				return "holds a table that is cut short"
			}
			i += 1 + klen
		}
		end, problem, ok := scanField(b, i, depth)
		if !ok || problem != "" {
			return problem
		}
		i = end
	}
	switch {
	case !table && n > amqpMaxEntries:
		return fmt.Sprintf("holds an array of %d entries (amqp091-go reads %d)", n, amqpMaxEntries)
	case table && n > amqpMaxEntries && tooWide(nestedKeys(b)):
		return fmt.Sprintf("holds a table of %d entries (amqp091-go reads %d)", n, amqpMaxEntries)
	}
	return ""
}

// nestedKeys are the entries (keys only) of the table b, as far as they
// can be split.
func nestedKeys(b []byte) []entry {
	var out []entry
	for i := 0; i < len(b); {
		klen := int(b[i])
		if i+1+klen >= len(b) {
			break
		}
		end, _, ok := scanFieldShallow(b, i+1+klen)
		if !ok {
			break
		}
		out = append(out, entry{key: string(b[i+1 : i+1+klen])})
		i = end
	}
	return out
}

// depthOf says how deep the nesting in b (a container at depth) goes, up
// to measureDepth: "40 tables", "more than 1000 tables".
func depthOf(b []byte, depth int, table bool) string {
	d := maxDepth(b, depth, table)
	if d > measureDepth {
		return fmt.Sprintf("more than %d tables", measureDepth)
	}
	return fmt.Sprintf("%d tables", d)
}

// maxDepth is the deepest container level in b (itself at depth),
// following nestings up to measureDepth + 1.
func maxDepth(b []byte, depth int, table bool) int {
	deepest := depth
	if depth > measureDepth {
		return depth
	}
	for i := 0; i < len(b); {
		if table {
			i += 1 + int(b[i])
		}
		if i >= len(b) {
			break
		}
		typ := b[i]
		end, _, ok := scanFieldShallow(b, i)
		if !ok {
			break
		}
		if typ == 'F' || typ == 'A' {
			deepest = max(deepest, maxDepth(b[i+5:end], depth+1, typ == 'F'))
		}
		i = end
	}
	return deepest
}

// scanFieldShallow is the end of the field at b[i:] without looking inside.
func scanFieldShallow(b []byte, i int) (int, string, bool) {
	typ := b[i]
	if n, fixed := fixedFieldSize(typ); fixed {
		return i + 1 + n, "", i+1+n <= len(b)
	}
	if i+5 > len(b) {
		return 0, "", false
	}
	end := i + 5 + int(binary.BigEndian.Uint32(b[i+1:]))
	return end, "", end <= len(b) && end >= i+5
}

// UnreadableError is why a delivery cut by the header filter is parked.
type UnreadableError struct{ Why string }

func (e *UnreadableError) Error() string { return "its headers could not be read: " + e.Why }
