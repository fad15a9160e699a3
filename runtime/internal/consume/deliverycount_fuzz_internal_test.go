package consume

import (
	"math"
	"testing"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
)

// FuzzDeliveryCount feeds x-delivery-count (and the runtime's own
// x-acemq-redeliveries) of every wire type and value to the two loop
// guards that read them, requeue_on_failure's attempt and
// WithRedeliveryLimit's count, on a classic queue and on a queue the
// Connection declared as quorum, first delivered or redelivered. The
// header is the producer's on a classic queue, so there it must change
// nothing: the attempt is the envelope's plus this consumer's own count of
// requeues, the redeliveries the runtime's stamp plus one. On a known
// quorum queue's redelivery it is the broker's: the attempt never goes
// below the envelope's (a forged negative cannot rewind it) and never
// overflows; a redelivery always counts at least one.
func FuzzDeliveryCount(f *testing.F) {
	for _, s := range []struct {
		kind      uint8
		value     int64
		text      string
		stamped   int64
		attempt   int
		own       uint8
		quorum    bool
		redeliver bool
	}{
		{0, 0, "", 0, 1, 0, false, true},                        // the forged 0 of issue 19 item 5
		{0, 0, "", 0, 1, 3, false, true},                        // classic: own count wins
		{1, 7, "", 0, 2, 0, true, true},                         // quorum: the broker's count
		{1, -5, "", 2, 1, 0, true, true},                        // negative
		{2, math.MaxInt64, "", 0, math.MaxInt32, 0, true, true}, // overflow
		{3, 0, "99", 0, 1, 0, true, true},                       // a string
		{4, 0, "", math.MaxInt64, 1, 0, false, true},            // a huge stamp
		{1, 4, "", 0, 1, 0, true, false},                        // quorum, first delivery: passed through
	} {
		f.Add(s.kind, s.value, s.text, s.stamped, s.attempt, s.own, s.quorum, s.redeliver)
	}
	f.Fuzz(func(t *testing.T, kind uint8, value int64, text string, stamped int64, attempt int, own uint8, quorum, redeliver bool) {
		attempt = min(max(attempt, 1), maxAttempt) // as the envelope reads it
		var count any
		switch kind % 6 {
		case 0:
			count = int32(value)
		case 1:
			count = value
		case 2:
			count = uint64(value)
		case 3:
			count = text
		case 4:
			count = float64(value) / 3
		case 5:
			count = amqp.Table{"nested": value}
		}
		tc := newTestConn()
		cs := &Consumer{conn: tc, cfg: testConfig(Config{}, tc), queue: "q"}
		if quorum {
			tc.quorum.Note("q")
		}
		env := core.Envelope{ID: "id-1", Attempt: attempt}
		for range int(own % 8) {
			cs.requeues.add(requeueKey(amqp.Delivery{}, env))
		}
		d := amqp.Delivery{Redelivered: redeliver, Headers: amqp.Table{
			headerDeliveryCount:     count,
			wire.HeaderRedeliveries: stamped,
		}}
		dv := &delivery{cs: cs, d: d, env: env}

		got := dv.requeueAttempt()
		if got < attempt || got > maxAttempt {
			t.Fatalf("requeueAttempt = %d with attempt %d, x-delivery-count %#v: outside [attempt, maxAttempt]", got, attempt, count)
		}
		n := dv.redeliveries()
		if n < 1 {
			t.Fatalf("redeliveries = %d with x-delivery-count %#v, stamp %d: a redelivery counts at least one", n, count, stamped)
		}
		if quorum && redeliver {
			return // the broker's own count: bounded above
		}
		// The header is the producer's: it changes nothing.
		if want := min(attempt+int(own%8), maxAttempt); got != want {
			t.Fatalf("requeueAttempt = %d on a queue not known quorum (or a first delivery), x-delivery-count %#v: want the envelope's %d plus this consumer's %d requeues", got, count, attempt, own%8)
		}
		plain := &delivery{cs: cs, d: amqp.Delivery{Redelivered: redeliver, Headers: amqp.Table{wire.HeaderRedeliveries: stamped}}, env: env}
		if want := plain.redeliveries(); n != want {
			t.Fatalf("redeliveries = %d with x-delivery-count %#v, %d without it: the producer's header counted", n, count, want)
		}
	})
}
