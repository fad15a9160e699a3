package runtime_test

// How many times a message is tried: requeue_on_failure ends at exactly
// the policy's attempts on a quorum queue the connection declared, with
// one consumer, three sharing the queue and across a consumer restart,
// on every broker of the matrix (the requeue is a basic.reject, which
// RabbitMQ 4.3 counts); x-delivery-count is trusted only on such a queue,
// so a producer's forged header neither loops a requeue consumer on a
// classic queue nor keeps a message that takes its consumer down from
// being parked (WithRedeliveryLimit).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// failing counts the handler calls of every consumer of a test by
// message body and attempt.
type failing struct {
	mu    sync.Mutex
	calls map[string][]int // body → the attempts it was handled on
	total int
	// holdAt, when not 0, is the call that waits for release before it
	// fails.
	holdAt  int
	release chan struct{}
}

func (f *failing) handler(ctx context.Context, m *runtime.Message[string]) runtime.Ack {
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[string][]int{}
	}
	f.calls[m.Payload] = append(f.calls[m.Payload], m.Envelope.Attempt)
	f.total++
	hold := f.total == f.holdAt
	f.mu.Unlock()
	if hold {
		<-f.release
	}
	return runtime.Retry(errors.New("always fails"))
}

func (f *failing) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.total
}

// check says what is wrong with the calls: each of the n bodies handled
// exactly attempts times, on attempts 1..attempts.
func (f *failing) check(n, attempts int) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var bad []string
	for i := range n {
		body := fmt.Sprintf("m%02d", i)
		got := f.calls[body]
		if len(got) != attempts {
			bad = append(bad, fmt.Sprintf("%s handled %d times (attempts %v), want %d", body, len(got), got, attempts))
		}
	}
	return bad
}

// consumeWith starts a text consumer of q on c with handler h, closed at
// cleanup.
func consumeWith(tb testing.TB, c *runtime.Connection, q string, policy runtime.RetryPolicy, h func(context.Context, *runtime.Message[string]) runtime.Ack, opts ...runtime.ConsumeOption) *runtime.Consumer {
	tb.Helper()
	spec := runtime.ConsumerSpec{Queue: q, Retry: &policy, Routes: []runtime.Route{runtime.Handle(textType, h)}}
	cs, err := runtime.Consume(ctxFor(tb, 10*time.Second), c, spec, opts...)
	if err != nil {
		tb.Fatalf("Consume %s: %v", q, err)
	}
	tb.Cleanup(func() { _ = cs.Close(ctxFor(tb, 10*time.Second)) })
	return cs
}

// expectDeadLetters drains n messages from q.dlq and checks each gave up
// after attempts.
func expectDeadLetters(tb testing.TB, q string, n, attempts int) {
	tb.Helper()
	want := fmt.Sprintf("gave up after %d attempts: always fails", attempts)
	for _, d := range drain(tb, wire.DeadLetterQueue(q), n, 60*time.Second) {
		if got := headerString(tb, d, wire.HeaderError); got != want {
			tb.Errorf("%s on q.dlq: x-acemq-error %q, want %q", d.Body, got, want)
		}
	}
}

// requeueCase is one shape of TestRequeueOnFailureCountsExactly.
type requeueCase struct {
	name      string
	consumers int // each on a connection of its own
	messages  int
	restart   bool // close the consumer after the first half of the calls and start another
}

// WithRequeueOnFailure and Fixed(4) on a quorum queue the connections
// declared: every message is handled exactly 4 times, on attempts 1 to 4,
// then dead-lettered by the runtime — one consumer, three consumers on
// three connections sharing the queue (on RabbitMQ 4.3 with basic.nack
// each counted alone: 155 handler calls for 20 messages instead of 80),
// and a consumer closed mid-way and replaced by one on a new connection
// (the broker's count survives it).
func TestRequeueOnFailureCountsExactly(t *testing.T) {
	t.Parallel()
	for _, tc := range []requeueCase{
		{name: "one consumer", consumers: 1, messages: 5},
		{name: "three consumers", consumers: 3, messages: 20},
		{name: "restart", consumers: 1, messages: 1, restart: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testRequeueCounts(t, tc)
		})
	}
}

func testRequeueCounts(t *testing.T, tc requeueCase) {
	const attempts = 4
	q := brokertest.Queue(t, "requeue.exact")
	policy := runtime.Fixed(attempts, time.Hour)
	f := &failing{}
	if tc.restart {
		f.holdAt, f.release = attempts/2, make(chan struct{})
	}
	var first *runtime.Consumer
	for i := range tc.consumers {
		c := dial(t)
		declareQuorum(t, c, q, 50)
		cs := consumeWith(t, c, q, policy, f.handler, runtime.WithRequeueOnFailure())
		if i == 0 {
			first = cs
		}
	}
	pub := dial(t)
	for i := range tc.messages {
		publishText(t, pub, q, fmt.Sprintf("m%02d", i))
	}
	if tc.restart {
		// The consumer is closed while its handler runs: the subscription
		// ends first, so the handler's reject puts the message back on the
		// queue, not into a prefetch the Close would give back (on 3.10
		// and 4.0 that give-back spends an attempt too: every return
		// counts there; docs/reliability.md).
		waitCalls(t, f, attempts/2)
		closed := make(chan error, 1)
		go func() { closed <- first.Close(ctxFor(t, 20*time.Second)) }()
		for deadline := time.Now().Add(wait); !first.StoppedForTest(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the subscription did not end")
			}
		}
		close(f.release)
		if err := <-closed; err != nil {
			t.Fatalf("Close: %v", err)
		}
		c := dial(t)
		declareQuorum(t, c, q, 50)
		consumeWith(t, c, q, policy, f.handler, runtime.WithRequeueOnFailure())
	}
	expectDeadLetters(t, q, tc.messages, attempts)
	waitDepth(t, q, 0, 10*time.Second)
	if bad := f.check(tc.messages, attempts); len(bad) > 0 {
		t.Errorf("%d handler calls for %d messages, want %d:\n%s", f.count(), tc.messages, tc.messages*attempts, strings.Join(bad, "\n"))
	}
}

// waitCalls waits until f has seen at least n calls.
func waitCalls(tb testing.TB, f *failing, n int) {
	tb.Helper()
	for deadline := time.Now().Add(wait); f.count() < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("%d handler calls, waited for %d", f.count(), n)
		}
	}
}

// A producer's x-delivery-count: 0 on a classic queue is not the broker's
// count: WithRequeueOnFailure and Fixed(3) still end after exactly 3
// handler calls on q.dlq (before: 7,957 handler calls in 3 s, nothing on
// q.dlq — the forged 0 was read as the count).
func TestForgedDeliveryCountDoesNotLoopARequeue(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "forged.requeue")
	rawQueue(t, q, nil)
	c := dial(t)
	f := &failing{}
	consumeWith(t, c, q, runtime.Fixed(3, time.Hour), f.handler, runtime.WithRequeueOnFailure())
	rawPublish(t, q, textMessage("m00", amqp.Table{"x-delivery-count": int64(0), wire.HeaderID: "forged-1"}))
	expectDeadLetters(t, q, 1, 3)
	time.Sleep(300 * time.Millisecond) // no call after the last attempt
	if bad := f.check(1, 3); len(bad) > 0 {
		t.Errorf("%s", strings.Join(bad, "\n"))
	}
}

// A message whose consumer never settles it (each consumer's channel is
// abandoned on it, as a crash would leave it) is parked by
// WithRedeliveryLimit(2) after its first delivery and 2 redeliveries: on a
// classic queue with a producer's x-delivery-count: 0 (before: never
// parked — the forged header was read as the broker's, so the runtime
// neither stamped its own count nor saw one rise), on a quorum queue the
// connection declared (the broker's count: a closed channel counts on
// every broker, 4.3 included) and on one it did not (the runtime's stamp).
func TestRedeliveryLimitParksWhatNeverSettles(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"classic forged", "quorum declared", "quorum undeclared"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			testNeverSettles(t, kind)
		})
	}
}

func testNeverSettles(t *testing.T, kind string) {
	const limit = 2
	q := brokertest.Queue(t, "poison."+strings.ReplaceAll(kind, " ", "-"))
	c := dial(t)
	headers := amqp.Table{wire.HeaderID: "stuck-1"}
	switch kind {
	case "classic forged":
		rawQueue(t, q, nil)
		rawQueue(t, wire.ParkedQueue(q), nil)
		headers["x-delivery-count"] = int64(0)
	case "quorum declared":
		declareQuorum(t, c, q, 50)
	case "quorum undeclared":
		quorumQueue(t, q, 50)
		rawQueue(t, wire.ParkedQueue(q), nil)
	}
	rawPublish(t, q, textMessage("stuck", headers))
	calls := 0
	for round := 1; depth(t, wire.ParkedQueue(q)) < 1; round++ {
		if round > limit+3 {
			t.Fatalf("not parked after %d consumers were cut off on it (handler calls %d)", round-1, calls)
		}
		calls += abandonOnIt(t, c, q, limit)
	}
	if calls != limit+1 {
		t.Errorf("%d handler calls, want %d (the first delivery and %d redeliveries)", calls, limit+1, limit)
	}
	d := getOne(t, wire.ParkedQueue(q), wait)
	if got, want := headerString(t, d, wire.HeaderError), "could not be handled: redelivered 3 times"; !strings.HasPrefix(got, want) {
		t.Errorf("x-acemq-error %q, want it to start %q", got, want)
	}
	waitDepth(t, q, 0, 10*time.Second)
}

// abandonOnIt starts a consumer of q whose handler never returns on its
// own, waits for its call (or for the message to be parked instead), and
// closes it with a short ctx: its channel is abandoned with the delivery
// unsettled, as a crash would leave it. It returns the handler calls.
func abandonOnIt(t *testing.T, c *runtime.Connection, q string, limit int) int {
	t.Helper()
	called := make(chan struct{}, 1)
	h := func(ctx context.Context, m *runtime.Message[string]) runtime.Ack {
		called <- struct{}{}
		<-ctx.Done()
		return runtime.Retry(ctx.Err())
	}
	cs := consumeWith(t, c, q, runtime.Fixed(3, time.Hour), h, runtime.WithRedeliveryLimit(limit), runtime.WithPrefetch(1))
	n := 0
	deadline := time.After(wait)
wait:
	for {
		select {
		case <-called:
			n = 1
			break wait
		case <-deadline:
			t.Fatalf("no handler call and nothing parked on %s", q)
		case <-time.After(50 * time.Millisecond):
			if depth(t, wire.ParkedQueue(q)) > 0 {
				break wait
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_ = cs.Close(ctx)
	return n
}
