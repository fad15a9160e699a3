package runtime_test

// The hold budget, against the broker: retries held in memory take slots
// of their own on top of the prefetch, so they never starve the handlers,
// and past the budget a short wait spills to a rung (bench/NOTES.md,
// R1).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
)

// consumerPrefetch is the prefetch count the broker applies to the one
// consumer of q, read through the management API (which lists a new
// consumer after a moment).
func consumerPrefetch(t *testing.T, q string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var consumers []struct {
			Queue         struct{ Name string } `json:"queue"`
			PrefetchCount int                   `json:"prefetch_count"`
		}
		if err := brokertest.Management("consumers/{vhost}", &consumers); err != nil {
			t.Fatalf("consumers: %v", err)
		}
		for _, c := range consumers {
			if c.Queue.Name == q {
				return c.PrefetchCount
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no consumer on %s after 10s", q)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Prefetch 8 and 20 failing messages ahead of 200 healthy ones: 8 retries
// are held in memory in the hold budget (qos 8 + 8), the other 12 spill to
// the rung for their 4s wait, and all 200 healthy messages are handled
// while the 20 wait. Every failing message comes back once, attempt 2,
// with its id and reason; nothing is lost or dead-lettered. Without the
// ack slack (WithAckSlack(0)): with one, a wait is held only while the
// consumer's rate times the wait fits in the slack, and at 200 messages
// in a burst it would spill.
func TestHeldRetriesDoNotStarveHandlers(t *testing.T) {
	t.Parallel()
	const prefetch, failing, healthy = 8, 20, 200
	const hold = 4 * time.Second
	q := brokertest.Queue(t, "budget")
	policy := runtime.Fixed(2, hold) // threshold 30s: the wait is a memory one
	reader, meterOpt := meter(t)
	c := dial(t, meterOpt)
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: policy}))
	rung := q + ".retry.4s"
	wantArg(t, rung, brokertest.QueueDetails(t, rung).Arguments, "x-message-ttl", 4000)

	bodies := make([]string, 0, failing+healthy)
	for i := range failing {
		bodies = append(bodies, fmt.Sprintf("fail-%02d", i))
	}
	for i := range healthy {
		bodies = append(bodies, fmt.Sprintf("ok-%03d", i))
	}
	if err := runtime.PublishBatch(ctxFor(t, 10*time.Second), c, textType, "", bodies, runtime.WithRoutingKey(q)); err != nil {
		t.Fatalf("PublishBatch: %v", err)
	}
	stop := make(chan struct{})
	most := pollDepth(t, rung, stop)
	_, rec := consume(t, c, q, &policy, func(m seen) runtime.Ack {
		if strings.HasPrefix(m.Body, "fail-") && m.Envelope.Attempt == 1 {
			return runtime.Retry(errors.New("not yet"))
		}
		return runtime.Accept()
	}, runtime.WithPrefetch(prefetch), runtime.WithAckSlack(0))
	if got := consumerPrefetch(t, q); got != 2*prefetch {
		t.Errorf("the consumer's prefetch on the broker is %d, want %d (prefetch + the default hold budget, as large, + no slack)", got, 2*prefetch)
	}

	isRetry := func(c seen) bool { return c.Envelope.Attempt == 2 }
	calls := rec.waitFor(t, 3*hold, "the 200 healthy messages and the 20 retries", func(calls []seen) bool {
		return len(calls) >= failing+healthy+failing
	})
	close(stop)
	// The retries come back behind the healthy messages in any case (they
	// are republished to the tail of q): what tells a starved consumer is
	// when the healthy ones were handled. Held in the prefetch's slots, 8
	// retries at a time, the last of them would wait for two holds (8s).
	first := slices.IndexFunc(calls, isRetry)
	lastOK := slices.IndexFunc(calls, func(c seen) bool { return c.Body == fmt.Sprintf("ok-%03d", healthy-1) })
	if lastOK < 0 || lastOK > first {
		t.Fatalf("the last healthy message was handled at call %d, the first retry at %d: %s", lastOK, first, describe(calls))
	}
	took := calls[lastOK].At.Sub(calls[0].At)
	t.Logf("the %d healthy messages were handled in %s, while the retries waited %s", healthy, took, hold)
	if took >= hold {
		t.Errorf("the %d healthy messages took %s, want < %s: the held retries starved the handlers", healthy, took, hold)
	}
	if got := <-most; got != failing-prefetch {
		t.Errorf("%s held at most %d messages, want the %d past the hold budget", rung, got, failing-prefetch)
	}
	at := map[string]seen{}
	for _, c := range calls {
		if c.Envelope.Attempt == 1 {
			at[c.Body] = c
			continue
		}
		f, ok := at[c.Body]
		switch {
		case !ok || !strings.HasPrefix(c.Body, "fail-"):
			t.Errorf("%s came back with attempt %d, but never failed", c.Body, c.Envelope.Attempt)
		case c.Envelope.Attempt != 2 || c.Envelope.ID != f.Envelope.ID || c.Envelope.Error != "not yet":
			t.Errorf("%s came back with attempt %d id %q error %q; want 2, %q, not yet", c.Body, c.Envelope.Attempt, c.Envelope.ID, c.Envelope.Error, f.Envelope.ID)
		case c.At.Sub(f.At) < hold:
			t.Errorf("%s came back after %s, want ≥ %s", c.Body, c.At.Sub(f.At), hold)
		}
	}
	if got := len(rec.all()); got != failing+healthy+failing {
		t.Errorf("%d handler calls, want %d (each failing message twice, each healthy one once)", got, failing+healthy+failing)
	}
	// The recorder sees a call as its handler starts; the outcome is
	// counted once it is carried out, a moment later.
	outcomes := waitPoint(t, reader, wire.MetricOutcome, outcomeKey(q, "accepted", ""), healthy+failing, false)
	onlyOutcomes(t, outcomes, q, map[string]float64{
		outcomeKey(q, "retried", "memory"): prefetch,
		outcomeKey(q, "retried", "broker"): failing - prefetch,
		outcomeKey(q, "accepted", ""):      healthy + failing,
	})
	if n := counter(t, reader, wire.MetricRetrySpilled); n != failing-prefetch {
		t.Errorf("%s = %v, want %d", wire.MetricRetrySpilled, n, failing-prefetch)
	}
	for _, n := range []string{q, rung, q + ".dlq", q + ".parked"} {
		if d := depth(t, n); d != 0 {
			t.Errorf("%s holds %d, want 0", n, d)
		}
	}
}

// A budget of 0 spills every wait below the threshold: a 500ms wait goes
// to q.retry.1s (rounded up to the whole second the rung's name says), so
// it comes back after at least 1s, with its attempt advanced.
func TestSpillRoundsUpToTheRung(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "spill")
	policy := runtime.Fixed(2, 500*time.Millisecond)
	if got := spillRungs(policy); !slices.Equal(got, []time.Duration{time.Second}) {
		t.Fatalf("wire.SpillRungs = %v, want [1s]", got)
	}
	reader, meterOpt := meter(t)
	c := dial(t, meterOpt)
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: policy}))
	rung := q + ".retry.1s"
	info := brokertest.QueueDetails(t, rung)
	wantArg(t, rung, info.Arguments, "x-message-ttl", 1000)
	wantArg(t, rung, info.Arguments, "x-dead-letter-routing-key", q)

	stop := make(chan struct{})
	most := pollDepth(t, rung, stop)
	_, rec := consume(t, c, q, &policy, func(m seen) runtime.Ack {
		if m.Envelope.Attempt == 1 {
			return runtime.Retry(errors.New("spill me"))
		}
		return runtime.Accept()
	}, runtime.WithHoldBudget(0), runtime.WithConcurrency(3))
	if got := consumerPrefetch(t, q); got != 40 {
		t.Errorf("the consumer's prefetch on the broker is %d, want 40 (the default prefetch 20, no budget, the default ack slack: the prefetch)", got)
	}
	if err := runtime.PublishBatch(ctxFor(t, 10*time.Second), c, textType, "", []string{"a", "b", "c"}, runtime.WithRoutingKey(q)); err != nil {
		t.Fatalf("PublishBatch: %v", err)
	}
	calls := rec.waitN(t, 6, wait)
	close(stop)
	if got := <-most; got != 3 {
		t.Errorf("%s held at most %d messages, want all 3", rung, got)
	}
	first := map[string]seen{}
	for _, c := range calls {
		if c.Envelope.Attempt == 1 {
			first[c.Body] = c
			continue
		}
		f := first[c.Body]
		if c.Envelope.Attempt != 2 || c.Envelope.ID != f.Envelope.ID || c.Envelope.Error != "spill me" {
			t.Errorf("%s came back with attempt %d id %q error %q; want 2, %q, spill me", c.Body, c.Envelope.Attempt, c.Envelope.ID, c.Envelope.Error, f.Envelope.ID)
		}
		if gap := c.At.Sub(f.At); gap < time.Second {
			t.Errorf("%s came back after %s, want ≥ 1s (the rung's TTL, not the 500ms asked)", c.Body, gap)
		}
	}
	outcomes := waitPoint(t, reader, wire.MetricOutcome, outcomeKey(q, "accepted", ""), 3, false)
	onlyOutcomes(t, outcomes, q, map[string]float64{
		outcomeKey(q, "retried", "broker"): 3,
		outcomeKey(q, "accepted", ""):      3,
	})
	if n := counter(t, reader, wire.MetricRetrySpilled); n != 3 {
		t.Errorf("%s = %v, want 3", wire.MetricRetrySpilled, n)
	}
}

// Past the budget with no spill rung declared (a topology declared before
// spill rungs existed), the wait is held in memory as before, counted as a
// missing rung: nothing is lost.
func TestSpillWithoutRungWaitsInMemory(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "spill.norung")
	rawQueue(t, q, nil)
	policy := runtime.Fixed(2, time.Second)
	reader, meterOpt := meter(t)
	c := dial(t, meterOpt)
	_, rec := consume(t, c, q, &policy, func(m seen) runtime.Ack {
		if m.Envelope.Attempt == 1 {
			return runtime.Retry(errors.New("no rung"))
		}
		return runtime.Accept()
	}, runtime.WithHoldBudget(0))
	publishText(t, c, q, "held anyway")
	calls := rec.waitN(t, 2, wait)
	if calls[1].Envelope.Attempt != 2 || calls[1].Envelope.ID != calls[0].Envelope.ID {
		t.Errorf("second call: attempt %d id %q, want 2 and %q", calls[1].Envelope.Attempt, calls[1].Envelope.ID, calls[0].Envelope.ID)
	}
	if gap := calls[1].At.Sub(calls[0].At); gap < 800*time.Millisecond {
		t.Errorf("came back after %s, want about 1s waited in memory", gap)
	}
	if n := counter(t, reader, wire.MetricRungMissing); n != 1 {
		t.Errorf("%s = %v, want 1", wire.MetricRungMissing, n)
	}
	if spilled, _ := points(t, reader, wire.MetricRetrySpilled); len(spilled) != 1 || spilled[queueKey(q)] != 0 {
		t.Errorf("%s = %v, want exactly {%s: 0}: the spill did not happen", wire.MetricRetrySpilled, spilled, queueKey(q))
	}
	outcomes := waitPoint(t, reader, wire.MetricOutcome, outcomeKey(q, "accepted", ""), 1, false)
	onlyOutcomes(t, outcomes, q, map[string]float64{
		outcomeKey(q, "retried", "memory"): 1,
		outcomeKey(q, "accepted", ""):      1,
	})
	if d := depth(t, q+".retry.1s"); d != -1 {
		t.Errorf("%s.retry.1s exists (depth %d); the test needs it missing", q, d)
	}
}

// A hold budget below 0, or one that takes the qos past what basic.qos
// carries (a short), is refused before subscribing.
func TestHoldBudgetRefused(t *testing.T) {
	t.Parallel()
	c := dial(t)
	spec := runtime.ConsumerSpec{Queue: "acemq.test.never.subscribed", Routes: []runtime.Route{runtime.Handle(textType,
		func(context.Context, *runtime.Message[string]) runtime.Ack { return runtime.Accept() })}}
	for _, tc := range []struct {
		opts []runtime.ConsumeOption
		want string
	}{
		{[]runtime.ConsumeOption{runtime.WithHoldBudget(-1)}, `consume "acemq.test.never.subscribed": hold budget -1 must be at least 0`},
		{[]runtime.ConsumeOption{runtime.WithPrefetch(65530)}, `consume "acemq.test.never.subscribed": prefetch 65530 + hold budget 16 + ack slack 64 is above 65535, the most a basic.qos can say`},
		{[]runtime.ConsumeOption{runtime.WithPrefetch(65000), runtime.WithHoldBudget(536)}, `consume "acemq.test.never.subscribed": prefetch 65000 + hold budget 536 + ack slack 64 is above 65535, the most a basic.qos can say`},
		{[]runtime.ConsumeOption{runtime.WithPrefetch(65000), runtime.WithHoldBudget(0), runtime.WithAckSlack(536)}, `consume "acemq.test.never.subscribed": prefetch 65000 + hold budget 0 + ack slack 536 is above 65535, the most a basic.qos can say`},
		{[]runtime.ConsumeOption{runtime.WithAckSlack(-1)}, `consume "acemq.test.never.subscribed": ack slack -1 must be at least 0`},
	} {
		_, err := runtime.Consume(ctxFor(t, 10*time.Second), c, spec, tc.opts...)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Consume: %v, want %s", err, tc.want)
		}
	}
}

// A qos at the edge of what basic.qos carries (65535, which amqp091-go
// v1.17's Qos checks too) subscribes, and the broker applies it whole; one
// past it is refused by Consume before amqp091-go is asked
// (TestHoldBudgetRefused).
func TestQosAtTheEdgeSubscribes(t *testing.T) {
	t.Parallel()
	c := dial(t)
	q := brokertest.Queue(t, "holdbudget.edge")
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
	// 65455 + the default hold budget (16) + ack slack (64) = 65535.
	consume(t, c, q, nil, accept, runtime.WithPrefetch(65455))
	if got := consumerPrefetch(t, q); got != 65535 {
		t.Errorf("the broker applies prefetch %d, want 65535", got)
	}
}

// The default hold budget and ack slack are the prefetch (each capped),
// except under a redelivery limit: there every message sent ahead shares
// a poison message's crash and its count, so the window stays at the
// prefetch (qos 1 with WithPrefetch(1)), as the fault suite's poison test
// needs. A budget or slack set explicitly is kept.
func TestDefaultHoldBudgetUnderRedeliveryLimit(t *testing.T) {
	t.Parallel()
	c := dial(t)
	for _, tc := range []struct {
		name string
		opts []runtime.ConsumeOption
		want int
	}{
		{"default", []runtime.ConsumeOption{runtime.WithPrefetch(1)}, 3},
		{"redelivery limit", []runtime.ConsumeOption{runtime.WithPrefetch(1), runtime.WithRedeliveryLimit(3)}, 1},
		{"redelivery limit and a budget", []runtime.ConsumeOption{runtime.WithPrefetch(1), runtime.WithRedeliveryLimit(3), runtime.WithHoldBudget(4)}, 5},
		{"redelivery limit and a slack", []runtime.ConsumeOption{runtime.WithPrefetch(1), runtime.WithRedeliveryLimit(3), runtime.WithAckSlack(2)}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := brokertest.Queue(t, "holdbudget.default")
			declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
			ctx := ctxFor(t, 30*time.Second)
			cs, err := runtime.Consume(ctx, c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{runtime.Handle(textType,
				func(context.Context, *runtime.Message[string]) runtime.Ack { return runtime.Accept() })}}, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cs.Close(ctx) }()
			if got := consumerPrefetch(t, q); got != tc.want {
				t.Errorf("the broker's prefetch for the consumer is %d, want %d", got, tc.want)
			}
		})
	}
}

// The default hold budget is the prefetch up to 16, the default ack slack
// the prefetch up to 64: a consumer with WithPrefetch(50) subscribes with
// 116 (50 + 16 + 50), one with WithPrefetch(100) with 180 (100 + 16 + 64),
// one with WithHoldBudget(100) as well with 264, and WithAckSlack(0) takes
// the slack away (116).
func TestDefaultHoldBudgetIsAtMost16(t *testing.T) {
	t.Parallel()
	c := dial(t)
	for _, tc := range []struct {
		name string
		opts []runtime.ConsumeOption
		want int
	}{
		{"default", []runtime.ConsumeOption{runtime.WithPrefetch(100)}, 180},
		{"set", []runtime.ConsumeOption{runtime.WithPrefetch(100), runtime.WithHoldBudget(100)}, 264},
		{"slackasprefetch", []runtime.ConsumeOption{runtime.WithPrefetch(50)}, 116},
		{"noslack", []runtime.ConsumeOption{runtime.WithPrefetch(100), runtime.WithAckSlack(0)}, 116},
	} {
		q := brokertest.Queue(t, "budget"+tc.name)
		declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
		consume(t, c, q, ptr(runtime.Fixed(2, time.Second)), accept, tc.opts...)
		if got := consumerPrefetch(t, q); got != tc.want {
			t.Errorf("%s: the consumer's prefetch on the broker is %d, want %d", tc.name, got, tc.want)
		}
	}
}

// ackLog records the basic.acks a consumer sends (WithAckSlackWaitForTest).
type ackLog struct {
	mu   sync.Mutex
	acks []sentAck
}

type sentAck struct {
	tag      uint64
	multiple bool
}

func (l *ackLog) sent(tag uint64, multiple bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.acks = append(l.acks, sentAck{tag, multiple})
}

func (l *ackLog) all() []sentAck {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.acks)
}

// consumeBehindACopy starts a consumer of q (the prefetch given, no hold
// budget, the ack slack given, or the default one for a slack below 0 and
// then want as its slack) whose copies' confirms gate holds back,
// publishes "dead" (dead-lettered: its copy waits at the gate) and then 40
// healthy messages, and waits until the 40 are accepted.
func consumeBehindACopy(t *testing.T, q string, prefetch, slack int, gate <-chan struct{}, log *ackLog) {
	t.Helper()
	c := dial(t)
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
	opts := []runtime.ConsumeOption{runtime.WithPrefetch(prefetch), runtime.WithHoldBudget(0),
		runtime.WithCopyGateForTest(gate), runtime.WithAckSlackWaitForTest(time.Minute, log.sent)}
	want := prefetch // the default slack: the prefetch (at most 64)
	if slack >= 0 {
		opts, want = append(opts, runtime.WithAckSlack(slack)), slack
	}
	cs, rec := consume(t, c, q, nil, func(m seen) runtime.Ack {
		if m.Body == "dead" {
			return runtime.Reject(errors.New("no such order"))
		}
		return runtime.Accept()
	}, opts...)
	if got := consumerPrefetch(t, q); got != prefetch+want {
		t.Errorf("the consumer's prefetch on the broker is %d, want %d (prefetch %d + budget 0 + slack %d)", got, prefetch+want, prefetch, want)
	}
	bodies := []string{"dead"}
	for i := range 40 {
		bodies = append(bodies, fmt.Sprintf("ok-%02d", i))
	}
	if err := runtime.PublishBatch(ctxFor(t, 10*time.Second), c, textType, "", bodies, runtime.WithRoutingKey(q)); err != nil {
		t.Fatalf("PublishBatch: %v", err)
	}
	rec.waitN(t, len(bodies), wait)
	waitStats(t, cs, func(st runtime.ConsumerStats) bool { return st.Handled["accepted"] == 40 })
}

// With an ack slack of 64, the 40 deliveries settled behind a dead
// letter whose confirm is held back wait in it: not one ack is sent while
// the copy is unconfirmed (past ackStuck, when they would be acked one by
// one without a slack), and the confirm sends exactly one ack, multiple,
// on the last tag: the original and the 40 behind it together.
func TestAckSlackOneMultipleAckAfterTheConfirm(t *testing.T) {
	t.Parallel()
	oneMultipleAckAfterTheConfirm(t, brokertest.Queue(t, "ackslack"), 8, 64)
}

// oneMultipleAckAfterTheConfirm consumes q with prefetch and slack
// (consumeBehindACopy: -1 leaves the default) behind a dead letter whose
// confirm is held back, and asserts the 40 settled behind it wait in the
// slack: no ack for 300 ms (six times ackStuck: the acks would have gone
// one by one), then exactly one, multiple, on tag 41, and the dead letter
// in its queue.
func oneMultipleAckAfterTheConfirm(t *testing.T, q string, prefetch, slack int) {
	t.Helper()
	gate := make(chan struct{})
	log := &ackLog{}
	consumeBehindACopy(t, q, prefetch, slack, gate, log)
	waitUnacked(t, q, 41)
	time.Sleep(300 * time.Millisecond)
	if got := log.all(); len(got) != 0 {
		t.Fatalf("acks sent while the copy's confirm was held back: %v, want none (the slack holds them)", got)
	}
	close(gate)
	waitUnacked(t, q, 0)
	if got, want := log.all(), []sentAck{{41, true}}; !slices.Equal(got, want) {
		t.Errorf("acks sent after the confirm: %v, want %v (one multiple ack covering the original and the 40 behind it)", got, want)
	}
	if d := depth(t, wire.DeadLetterQueue(q)); d != 1 {
		t.Errorf("%s holds %d, want the dead letter", wire.DeadLetterQueue(q), d)
	}
}

// The slack is a bound: with a slack of 4, the settled deliveries behind
// the held-back copy are acked one by one once 4 wait (the window, qos
// 8 + 4, would stall otherwise), never the copy's original and never with
// a multiple ack, which would cover it; fewer than 4 wait for the
// confirm, which acks them with the original in one ack.
func TestAckSlackIsBounded(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "ackslackbound")
	gate := make(chan struct{})
	log := &ackLog{}
	consumeBehindACopy(t, q, 8, 4, gate, log)
	deadline := time.Now().Add(wait)
	for len(log.all()) < 40-3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d acks after %s, want at least 37 (at most 3 of the 40 wait in the slack): %v", len(log.all()), wait, log.all())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // six times ackStuck: those in the slack stay
	before := log.all()
	for _, a := range before {
		if a.multiple || a.tag == 1 {
			t.Fatalf("ack %v sent while the copy of tag 1 was unconfirmed: %v", a, before)
		}
	}
	waitUnacked(t, q, 41-len(before))
	close(gate)
	waitUnacked(t, q, 0)
	want := []sentAck{{41, true}}
	if len(before) == 40 {
		want = []sentAck{{1, false}}
	}
	if got := log.all()[len(before):]; !slices.Equal(got, want) {
		t.Errorf("acks after the confirm: %v, want %v (the original with the %d that waited in the slack)", got, want, 40-len(before))
	}
}

// A consumer that does not set WithAckSlack has the default slack, its
// prefetch: with WithPrefetch(64) the qos is 64 + 64 (no budget), and the
// 40 deliveries settled behind a dead letter whose confirm is held back
// wait in it, no ack sent for 300 ms, until the confirm sends exactly one
// ack, multiple, on tag 41 (the original and the 40 together). Without
// the slack (WithAckSlack(0), the behaviour before it was the default)
// they would be acked one by one after 50 ms, the original last.
func TestAckSlackIsTheDefault(t *testing.T) {
	t.Parallel()
	oneMultipleAckAfterTheConfirm(t, brokertest.Queue(t, "ackslackdefault"), 64, -1)
}

// With WithAckSlack(0) the default slack is gone: the qos is the prefetch
// (no budget), and the 40 settled behind the held-back dead letter are
// acked one by one while its copy is unconfirmed, never with a multiple
// ack and never the original (tag 1), which is acked alone once the
// confirm comes.
func TestAckSlackZeroTurnsItOff(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "ackslackoff")
	gate := make(chan struct{})
	log := &ackLog{}
	consumeBehindACopy(t, q, 64, 0, gate, log)
	deadline := time.Now().Add(wait)
	for len(log.all()) < 40 {
		if time.Now().After(deadline) {
			t.Fatalf("%d acks after %s, want the 40 one by one: %v", len(log.all()), wait, log.all())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, a := range log.all() {
		if a.multiple || a.tag == 1 {
			t.Fatalf("ack %v sent while the copy of tag 1 was unconfirmed: %v", a, log.all())
		}
	}
	waitUnacked(t, q, 1) // the original
	close(gate)
	waitUnacked(t, q, 0)
	if got := log.all()[40:]; !slices.Equal(got, []sentAck{{1, false}}) {
		t.Errorf("acks after the confirm: %v, want [{1 false}] (the original alone)", got)
	}
}
