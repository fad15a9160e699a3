package runtime_test

import (
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// On RabbitMQ 4.3 a quorum queue enforces its own consumer timeout
// (x-consumer-timeout) and tells an AMQP 0-9-1 consumer with basic.cancel
// instead of closing its channel. A delivery held past a 2 s timeout ends
// with the consumer resubscribed, the message redelivered and handled,
// nothing left on the queue, and one WARN line that names the timeout.
// 3.10 and 4.0 have no per-queue timeout: their consumer_timeout (30
// minutes) closes the channel, the case the reconnect tests cover.
func TestConsumerTimeoutOnAQuorumQueueResubscribes(t *testing.T) {
	t.Parallel()
	if nackCounts(t) {
		t.Skipf("RabbitMQ %s: a per-queue consumer timeout that cancels the consumer is RabbitMQ 4.3's", brokerVersion.text)
	}
	q := brokertest.Queue(t, "consumer.timeout")
	if err := rawChannel(t).ExchangeDeclare(wire.DeadLetterExchange, amqp.ExchangeDirect, true, false, false, false, nil); err != nil {
		t.Fatalf("declare %s: %v", wire.DeadLetterExchange, err)
	}
	rawQueue(t, q, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": 50, "x-consumer-timeout": int64(2000),
		"x-dead-letter-exchange": wire.DeadLetterExchange, "x-dead-letter-routing-key": wire.DeadLetterQueue(q)})
	logs, logger := newLogCapture()
	c := dial(t, runtime.WithLogger(logger))
	_, rec := consume(t, c, q, nil, func(m seen) runtime.Ack {
		if !m.Redelivered {
			time.Sleep(4 * time.Second) // past the queue's 2 s timeout
		}
		return runtime.Accept()
	})
	publishText(t, c, q, "slow")
	calls := rec.waitN(t, 2, 30*time.Second)
	if !calls[1].Redelivered || calls[1].Envelope.ID != calls[0].Envelope.ID {
		t.Errorf("second call: redelivered %v id %q, want the same message (%q) redelivered", calls[1].Redelivered, calls[1].Envelope.ID, calls[0].Envelope.ID)
	}
	got := logs.waitFor(t, "x-consumer-timeout", 1, wait)
	if got[0].Attrs["queue"] != q || got[0].Attrs["held_longest"] == "" {
		t.Errorf("log line %v, want the queue %s and held_longest", got[0], q)
	}
	waitDepth(t, q, 0, wait)
	waitUnacked(t, q, 0)
	time.Sleep(500 * time.Millisecond)
	if n := rec.len(); n != 2 {
		t.Errorf("%d handler calls, want 2 (the held one and its redelivery)", n)
	}
}
