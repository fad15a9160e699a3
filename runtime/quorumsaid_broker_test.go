package runtime_test

// A quorum queue declared by someone else (issue 36, item 12): a deploy
// step, an operator, another connection. The consumers' connections never
// declare it; their spec says it is quorum (ConsumerSpec.Quorum, as the
// generated code says it from the manifest's type: quorum), so the
// broker's x-delivery-count is their shared count on a redelivery; the
// forged-header guard stays for a first delivery and for a classic queue.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// consumeSaid starts a requeue_on_failure text consumer of q on c whose
// spec says (or not) that q is quorum, closed at cleanup.
func consumeSaid(tb testing.TB, c *runtime.Connection, q string, quorum bool, policy runtime.RetryPolicy, h func(context.Context, *runtime.Message[string]) runtime.Ack) {
	tb.Helper()
	spec := runtime.ConsumerSpec{Queue: q, Quorum: quorum, Retry: &policy, RequeueOnFailure: true, Routes: []runtime.Route{runtime.Handle(textType, h)}}
	cs, err := runtime.Consume(ctxFor(tb, 10*time.Second), c, spec)
	if err != nil {
		tb.Fatalf("Consume %s: %v", q, err)
	}
	tb.Cleanup(func() { _ = cs.Close(ctxFor(tb, 10*time.Second)) })
}

// Three requeue_on_failure consumers with Fixed(4), each on a connection
// of its own that never declared the quorum queue they share (another
// connection did, and is closed): every message is handled exactly 4
// times, on attempts 1 to 4, then dead-lettered — 80 handler calls for 20
// messages (before, each consumer counted alone: on 4.3, 148 calls).
func TestRequeueCountsOnAQuorumQueueDeclaredElsewhere(t *testing.T) {
	t.Parallel()
	const attempts, messages = 4, 20
	q := brokertest.Queue(t, "requeue.elsewhere")
	deploy := dial(t)
	declareQuorum(t, deploy, q, 50)
	closeConn(deploy)
	f := &failing{}
	for range 3 {
		consumeSaid(t, dial(t), q, true, runtime.Fixed(attempts, time.Hour), f.handler)
	}
	pub := dial(t)
	for i := range messages {
		publishText(t, pub, q, fmt.Sprintf("m%02d", i))
	}
	expectDeadLetters(t, q, messages, attempts)
	waitDepth(t, q, 0, 10*time.Second)
	time.Sleep(200 * time.Millisecond) // no call after the last attempt
	if bad := f.check(messages, attempts); len(bad) > 0 {
		t.Errorf("%d handler calls for %d messages, want %d:\n%s", f.count(), messages, messages*attempts, strings.Join(bad, "\n"))
	}
}

// The guard stays where the header is not the broker's: a first
// delivery's x-delivery-count (RabbitMQ passes a producer's through) is
// not read, so a forged 2 does not skip attempts; and a classic queue a
// spec wrongly says is quorum, whose header a producer forged at 0, still
// ends after the policy's attempts (the consumer's own count is a floor).
func TestQuorumSaidKeepsTheForgedHeaderGuard(t *testing.T) {
	t.Parallel()
	t.Run("first delivery", func(t *testing.T) {
		t.Parallel()
		q := brokertest.Queue(t, "said.first")
		deploy := dial(t)
		declareQuorum(t, deploy, q, 50)
		closeConn(deploy)
		f := &failing{}
		consumeSaid(t, dial(t), q, true, runtime.Fixed(4, time.Hour), f.handler)
		rawPublish(t, q, textMessage("m00", amqp.Table{"x-delivery-count": int64(2), wire.HeaderID: "forged-first"}))
		expectDeadLetters(t, q, 1, 4)
		time.Sleep(200 * time.Millisecond)
		if bad := f.check(1, 4); len(bad) > 0 {
			t.Errorf("%s", strings.Join(bad, "\n"))
		}
		f.mu.Lock()
		got := f.calls["m00"]
		f.mu.Unlock()
		if want := []int{1, 2, 3, 4}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("attempts %v, want %v", got, want)
		}
	})
	t.Run("classic queue said quorum", func(t *testing.T) {
		t.Parallel()
		q := brokertest.Queue(t, "said.classic")
		rawQueue(t, q, nil)
		f := &failing{}
		consumeSaid(t, dial(t), q, true, runtime.Fixed(3, time.Hour), f.handler)
		rawPublish(t, q, textMessage("m00", amqp.Table{"x-delivery-count": int64(0), wire.HeaderID: "forged-classic"}))
		expectDeadLetters(t, q, 1, 3)
		time.Sleep(300 * time.Millisecond)
		if bad := f.check(1, 3); len(bad) > 0 {
			t.Errorf("%s", strings.Join(bad, "\n"))
		}
	})
}
