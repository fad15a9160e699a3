package consume

import (
	"math"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
)

// FuzzEnvelopeHeaders: whatever a producer puts in x-acemq-attempt (a
// string, an integer, a float, bytes), x-acemq-first-seen and x-death, the
// envelope reads an attempt in 1..2^31-1 and never panics, and the copy the
// consumer republishes carries a 64-bit attempt, no x-death, and a
// first-seen that parses.
func FuzzEnvelopeHeaders(f *testing.F) {
	f.Add("abc", int64(-1), 2.5, "yesterday-ish", uint8(0))
	f.Add("9223372036854775808", int64(math.MaxInt64), math.NaN(), "2026-12-01T08:00:00.000Z", uint8(1))
	f.Add(" 3 ", int64(0), math.Inf(1), "\x00", uint8(2))
	f.Add("-0", int64(1<<31), -0.0, "9999-12-31T23:59:59.999Z", uint8(3))
	f.Add("1e3", int64(2), 1e300, "2026-02-30T25:61:00Z", uint8(4))
	f.Fuzz(func(t *testing.T, s string, i int64, fl float64, firstSeen string, kind uint8) {
		var attempt any
		switch kind % 6 {
		case 0:
			attempt = s
		case 1:
			attempt = i
		case 2:
			attempt = fl
		case 3:
			attempt = []byte(s)
		case 4:
			attempt = amqp.Table{"n": i}
		case 5:
			attempt = float32(fl)
		}
		h := amqp.Table{
			wire.HeaderAttempt:   attempt,
			wire.HeaderFirstSeen: firstSeen,
			wire.HeaderID:        s,
			"x-death":            []any{amqp.Table{"count": i, "reason": s}},
		}
		env := core.EnvelopeOf(h, "", "", "t", "text/plain")
		if env.Attempt < 1 || env.Attempt > math.MaxInt32 {
			t.Fatalf("attempt %v (%T) read as %d", attempt, attempt, env.Attempt)
		}
		if !env.FirstSeen.IsZero() && env.FirstSeen.Location() != time.UTC {
			t.Fatalf("first-seen %q read as %v, not UTC", firstSeen, env.FirstSeen)
		}
		d := amqp.Delivery{Headers: h, Body: []byte(s)}
		cp := CopyOf(d, env.Attempt+1, "why", "q")
		if a, ok := cp.Headers[wire.HeaderAttempt].(int64); !ok || a != int64(env.Attempt+1) {
			t.Fatalf("copy's attempt %v (%T), want int64 %d", cp.Headers[wire.HeaderAttempt], cp.Headers[wire.HeaderAttempt], env.Attempt+1)
		}
		if _, ok := cp.Headers["x-death"]; ok {
			t.Fatal("the copy kept x-death")
		}
		if core.HeaderTime(cp.Headers, wire.HeaderFirstSeen).IsZero() {
			if _, err := time.Parse(time.RFC3339Nano, firstSeen); err == nil {
				return // a valid but odd first-seen is kept as it was
			}
			t.Fatalf("the copy's first-seen %v does not parse", cp.Headers[wire.HeaderFirstSeen])
		}
	})
}
