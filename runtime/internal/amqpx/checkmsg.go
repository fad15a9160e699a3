package amqpx

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/wire"
	amqp "github.com/rabbitmq/amqp091-go"
)

// MaxShortstr is the longest AMQP short string, in bytes.
const MaxShortstr = 255

// CheckOutgoing checks a message for exchange with routing key key: every
// short string at most 255 bytes, every header value of a type AMQP
// writes, and, when frameMax > 0, its content header frame within
// frameMax (tooLarge). An error matches core.ErrInvalidMessage and names the
// field and its length.
func CheckOutgoing(exchange, key string, msg *amqp.Publishing, frameMax int) error {
	if err := CheckShort("exchange", exchange); err != nil {
		return err
	}
	if err := CheckShort("routing key", key); err != nil {
		return err
	}
	if err := checkProperties(msg); err != nil {
		return err
	}
	if err := CheckTable(msg.Headers); err != nil {
		return err
	}
	if frameMax > 0 {
		return TooLarge(*msg, frameMax)
	}
	return nil
}

// checkProperties checks the short-string properties of msg.
func checkProperties(msg *amqp.Publishing) error {
	props := [...]struct {
		name, v string
	}{
		{"content type", msg.ContentType}, {"content encoding", msg.ContentEncoding},
		{"correlation id", msg.CorrelationId}, {"reply-to", msg.ReplyTo}, {"expiration", msg.Expiration},
		{"message id", msg.MessageId}, {"type", msg.Type}, {"user id", msg.UserId}, {"app id", msg.AppId},
	}
	for _, p := range props {
		if err := CheckShort(p.name, p.v); err != nil {
			return err
		}
	}
	return nil
}

// CheckShort refuses s, the value of field, when it is longer than a
// short string.
func CheckShort(field, s string) error {
	if len(s) <= MaxShortstr {
		return nil
	}
	return fmt.Errorf("%w: the %s is %d bytes, above AMQP's %d for a short string (%s; the client would close the connection)",
		core.ErrInvalidMessage, field, len(s), MaxShortstr, ShortQuote(s))
}

// CheckTable checks the headers: each name a short string, each value a
// field AMQP writes. Nothing is allocated unless one is refused.
func CheckTable(t amqp.Table) error {
	f := tableFault(t)
	if f == nil {
		return nil
	}
	slices.Reverse(f.path)
	if f.name != "" {
		in := ""
		if len(f.path) > 0 {
			in = " (in header " + strings.Join(f.path, " > ") + ")"
		}
		return fmt.Errorf("%w: the header name %s%s is %d bytes, above AMQP's %d for a short string (the client would close the connection)",
			core.ErrInvalidMessage, ShortQuote(f.name), in, len(f.name), MaxShortstr)
	}
	return fmt.Errorf("%w: the header %s is a %T, which AMQP has no field type for (want a string, []byte, bool, an integer of up to 64 bits but not uint64, a float, time.Time, amqp.Decimal, amqp.Table or []any)",
		core.ErrInvalidMessage, strings.Join(f.path, " > "), f.value)
}

// fault is what checkTable found: an overlong name, or a value of no AMQP
// type, at path (innermost first).
type fault struct {
	path  []string
	name  string
	value any
}

func tableFault(t amqp.Table) *fault {
	for k, v := range t {
		if len(k) > MaxShortstr {
			return &fault{name: k}
		}
		if f := fieldFault(v); f != nil {
			f.path = append(f.path, strconv.Quote(k))
			return f
		}
	}
	return nil
}

func fieldFault(v any) *fault {
	switch x := v.(type) {
	case nil, bool, byte, int8, int, int16, int32, int64, uint16, uint32, float32, float64,
		string, []byte, amqp.Decimal, time.Time:
		return nil
	case amqp.Table:
		return tableFault(x)
	case []any:
		for i, e := range x {
			if f := fieldFault(e); f != nil {
				f.path = append(f.path, "["+strconv.Itoa(i)+"]")
				return f
			}
		}
		return nil
	}
	return &fault{value: v}
}

// ShortQuote is s quoted, its first 40 bytes only.
func ShortQuote(s string) string {
	if len(s) <= 40 {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:40]) + "…"
}

// CheckQueueNames refuses a queue whose own name, or a name the runtime
// makes from it (q.dlq, q.parked, a rung q.retry.<N>s of its policy), is
// longer than a short string: declaring, binding or consuming it would
// close the connection. It is not ErrInvalidMessage: no message is at
// fault.
func CheckQueueNames(q string, policy core.RetryPolicy) error {
	names := []string{q, wire.DeadLetterQueue(q), wire.ParkedQueue(q)}
	for _, d := range core.Rungs(policy) {
		names = append(names, wire.RungQueue(q, d))
	}
	for _, n := range names {
		if len(n) > MaxShortstr {
			what := "the queue name"
			if n != q {
				what = "the name of its queue with " + strconv.Quote(n[len(q):])
			}
			return fmt.Errorf("queue %s: %s is %d bytes, above AMQP's %d for a short string (the client would close the connection)",
				ShortQuote(q), what, len(n), MaxShortstr)
		}
	}
	return nil
}
