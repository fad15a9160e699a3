package amqpx

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
)

// A message's properties and headers travel in one content header frame,
// which must fit the frame_max negotiated with the broker (131072 bytes by
// default): a larger one makes the broker close the whole connection
// (FRAME_ERROR frame_too_large), and every channel on it with it. A copy
// the runtime makes of a delivery (a retry, a dead letter, a park, a
// replay) carries every header of the original plus the x-acemq-* ones, so
// a message whose headers sit just under the limit would make a copy over
// it, be redelivered and set aside again, for ever. Before a copy is
// written its header frame is sized against the connection's frame_max;
// when it is too large the foreign headers are dropped, largest first, and
// the copy says so in x-acemq-dropped-headers. The identity headers are
// never dropped. An application publish that does not fit is refused,
// never written.

// DefaultFrameMax is the frame_max when the connection names none.
const DefaultFrameMax = 131072

// headerFrameFixed is the header frame's size without properties: frame
// header 7, class 2, weight 2, body size 8, property flags 2, frame end 1.
const headerFrameFixed = 7 + 2 + 2 + 8 + 2 + 1

// keptHeaders are never dropped from a copy: the message's identity and
// what the runtime reads back (the schema fingerprint, the replay stamps).
var keptHeaders = map[string]bool{
	wire.HeaderID: true, wire.HeaderAttempt: true, wire.HeaderFirstSeen: true, wire.HeaderOrigin: true, wire.HeaderError: true,
	wire.HeaderQueue: true, wire.HeaderDropped: true, wire.HeaderSchemaFingerprint: true, wire.HeaderSchema: true,
	wire.HeaderReplayedFrom: true, wire.HeaderReplayedAt: true, wire.HeaderReplayCount: true,
}

// keptCut is how long a kept string header may stay when the kept headers
// alone do not fit (only a forged x-acemq-id or origin is ever that long).
const keptCut = 1024

// HeaderFrameSize is the size on the wire of p's content header frame, as
// amqp091-go writes it.
func HeaderFrameSize(p amqp.Publishing) int {
	n := headerFrameFixed
	for _, s := range []string{p.ContentType, p.ContentEncoding, p.CorrelationId, p.ReplyTo, p.Expiration, p.MessageId, p.Type, p.UserId, p.AppId} {
		if s != "" {
			n += 1 + len(s)
		}
	}
	if len(p.Headers) > 0 {
		n += tableSize(p.Headers)
	}
	if p.DeliveryMode > 0 {
		n++
	}
	if p.Priority > 0 {
		n++
	}
	if !p.Timestamp.IsZero() {
		n += 8
	}
	return n
}

// tableSize is a field table's encoded size, its length prefix included.
func tableSize(t amqp.Table) int {
	n := 4
	for k, v := range t {
		n += entrySize(k, v)
	}
	return n
}

func entrySize(k string, v any) int { return 1 + len(k) + fieldSize(v) }

// fieldSize is a field value's encoded size, its type octet included.
func fieldSize(v any) int {
	switch x := v.(type) {
	case nil:
		return 1
	case bool, byte, int8:
		return 2
	case int16, uint16:
		return 3
	case int, int32, uint32, float32:
		return 5
	case int64, float64, time.Time:
		return 9
	case amqp.Decimal:
		return 6
	case string:
		return 5 + len(x)
	case []byte:
		return 5 + len(x)
	case amqp.Table:
		return 1 + tableSize(x)
	case []any:
		n := 5
		for _, e := range x {
			n += fieldSize(e)
		}
		return n
	}
	return 1
}

// FrameMaxOf is conn's negotiated frame_max (DefaultFrameMax when it says
// none).
func FrameMaxOf(conn *amqp.Connection) int {
	if conn == nil || conn.Config.FrameSize <= 0 {
		return DefaultFrameMax
	}
	return conn.Config.FrameSize
}

// FitFrame makes a copy's header frame fit frameMax: foreign headers are
// dropped, largest first, until it does, and x-acemq-dropped-headers says
// which and why; when the kept headers alone are too large, their long
// strings are cut. It reports whether anything changed. msg.Headers must
// be the copy's own map.
func FitFrame(msg *amqp.Publishing, frameMax int) bool {
	size := HeaderFrameSize(*msg)
	if size <= frameMax {
		return false
	}
	type entry struct {
		key  string
		size int
	}
	var foreign []entry
	for k, v := range msg.Headers {
		if !keptHeaders[k] {
			foreign = append(foreign, entry{k, entrySize(k, v)})
		}
	}
	slices.SortFunc(foreign, func(a, b entry) int { return cmp.Or(cmp.Compare(b.size, a.size), cmp.Compare(a.key, b.key)) })
	var names []string
	for _, e := range foreign {
		if HeaderFrameSize(*msg) <= frameMax {
			break
		}
		delete(msg.Headers, e.key)
		names = append(names, e.key)
		msg.Headers[wire.HeaderDropped] = droppedNote(names, size, frameMax)
	}
	if HeaderFrameSize(*msg) > frameMax {
		cutKept(msg, names, size, frameMax)
	}
	return true
}

// cutKept cuts the kept string headers longer than keptCut, saying so.
func cutKept(msg *amqp.Publishing, names []string, size, frameMax int) {
	var cut []string
	for k, v := range msg.Headers {
		if s, ok := v.(string); ok && len(s) > keptCut && k != wire.HeaderDropped {
			msg.Headers[k] = s[:keptCut]
			cut = append(cut, k)
		}
	}
	slices.Sort(cut)
	note := droppedNote(names, size, frameMax)
	if len(cut) > 0 {
		note += fmt.Sprintf("; cut to %d bytes: %s", keptCut, strings.Join(cut, ", "))
	}
	msg.Headers[wire.HeaderDropped] = note
}

// droppedNote is x-acemq-dropped-headers for a copy: the headers dropped
// (the first 20 named) and why.
func droppedNote(names []string, size, frameMax int) string {
	shown := names
	if len(shown) > 20 {
		shown = shown[:20]
	}
	list := strings.Join(shown, ", ")
	if len(names) > len(shown) {
		list += fmt.Sprintf(" and %d more", len(names)-len(shown))
	}
	return fmt.Sprintf("dropped %s (%s): the copy's header frame would have been %d bytes, above the broker's frame_max %d",
		core.Plural(len(names), "header", "headers"), list, size, frameMax)
}

// TooLarge is the error of an application publish whose header frame does
// not fit frameMax: it is never written (the broker would close the
// connection).
func TooLarge(msg amqp.Publishing, frameMax int) error {
	if n := HeaderFrameSize(msg); n > frameMax {
		return fmt.Errorf("%w: its properties and headers take %d bytes, above the broker's frame_max %d (the broker would close the connection)", core.ErrInvalidMessage, n, frameMax)
	}
	return nil
}

// OriginOutbox is the origin of a message relayed from an outbox.
const OriginOutbox = "outbox"
