package runtime_test

// A retry held in a hold budget's slot before the session's rate is known
// (the first rateWindow of a session) is spilled to its rung once the rate
// says its wait does not fit in the ack slack, and while it is held the
// deliveries settled behind it wait in the slack instead of being acked one
// by one (bench/NOTES.md, "R1: where the typed side waits").

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
)

// One failing message ahead of 3000 healthy ones, a 2s wait in memory, the
// default budget (16) and slack (64): the first delivery fails before the
// session has measured its rate, so its wait is held in a budget slot; once
// the rate is measured (thousands a second, times the 1.9 s left, is far
// past 64) it is spilled to <q>.retry.2s: acemq.retry.spilled counts 1, the
// rung held it, and it comes back through it (x-death names the rung),
// attempt 2, no sooner than its 2 s.
func TestHeldRetrySpillsOnceTheRateIsKnown(t *testing.T) {
	t.Parallel()
	const healthy = 3000
	const hold = 2 * time.Second
	q := brokertest.Queue(t, "respill")
	policy := runtime.Fixed(2, hold) // threshold 30s: a memory wait, spilled to .retry.2s
	reader, meterOpt := meter(t)
	c := dial(t, meterOpt)
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: policy}))
	rung := q + ".retry.2s"
	bodies := []string{"fail"}
	for i := range healthy {
		bodies = append(bodies, fmt.Sprintf("ok-%04d", i))
	}
	if err := runtime.PublishBatch(ctxFor(t, 20*time.Second), c, textType, "", bodies, runtime.WithRoutingKey(q)); err != nil {
		t.Fatalf("PublishBatch: %v", err)
	}
	stop := make(chan struct{})
	most := pollDepth(t, rung, stop)
	_, rec := consume(t, c, q, &policy, func(m seen) runtime.Ack {
		if m.Body == "fail" && m.Envelope.Attempt == 1 {
			return runtime.Retry(errors.New("not yet"))
		}
		// The healthy ones take a moment each, so that they outlast the
		// session's first rate window (100 ms) whatever the machine.
		time.Sleep(100 * time.Microsecond)
		return runtime.Accept()
	}, runtime.WithPrefetch(64))
	calls := rec.waitFor(t, 90*time.Second, "the healthy messages and the retry", func(calls []seen) bool {
		return len(calls) >= healthy+2
	})
	close(stop)
	first := calls[slices.IndexFunc(calls, func(c seen) bool { return c.Body == "fail" })]
	i := slices.IndexFunc(calls, func(c seen) bool { return c.Body == "fail" && c.Envelope.Attempt == 2 })
	if i < 0 {
		t.Fatalf("the retry did not come back: %d calls", len(calls))
	}
	again := calls[i]
	if again.Envelope.ID != first.Envelope.ID || again.Envelope.Error != "not yet" {
		t.Errorf("the retry came back with id %q error %q, want %q, not yet", again.Envelope.ID, again.Envelope.Error, first.Envelope.ID)
	}
	if d := again.At.Sub(first.At); d < hold {
		t.Errorf("the retry came back after %s, want ≥ %s", d, hold)
	}
	if got := deathQueues(again.Headers); !slices.Contains(got, rung) {
		t.Errorf("the retry's x-death names %v, want %s (it waited in its rung)", got, rung)
	}
	if got := <-most; got != 1 {
		t.Errorf("%s held at most %d messages, want the 1 spilled retry", rung, got)
	}
	if n := counter(t, reader, wire.MetricRetrySpilled); n != 1 {
		t.Errorf("%s = %v, want 1", wire.MetricRetrySpilled, n)
	}
}

// deathQueues are the queues an x-death header names.
func deathQueues(h map[string]any) []string {
	var out []string
	deaths, _ := h["x-death"].([]any)
	for _, d := range deaths {
		if t, ok := d.(amqp.Table); ok {
			if q, ok := t["queue"].(string); ok {
				out = append(out, q)
			}
		}
	}
	return out
}

// A failing message ahead of 40 healthy ones, its 1 s wait held in a budget
// slot (the burst is inside the session's first rate window): the 40
// settled behind it wait in the slack (64) for the held retry's copy, and
// its confirm sends one ack, multiple, on tag 41 (the original and the 40
// together; on 42 when the second attempt, tag 42, is settled by then).
// Before, they were acked one by
// one 50 ms after they settled (the slack waited only behind a copy in
// flight), the original alone last.
func TestAckSlackWaitsBehindAHeldRetry(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "slackheld")
	policy := runtime.Fixed(2, time.Second)
	c := dial(t)
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: policy}))
	log := &ackLog{}
	cs, rec := consume(t, c, q, &policy, func(m seen) runtime.Ack {
		if m.Body == "fail" && m.Envelope.Attempt == 1 {
			return runtime.Retry(errors.New("not yet"))
		}
		return runtime.Accept()
	}, runtime.WithPrefetch(64), runtime.WithHoldBudget(1), runtime.WithAckSlackWaitForTest(time.Minute, log.sent))
	bodies := []string{"fail"}
	for i := range 40 {
		bodies = append(bodies, fmt.Sprintf("ok-%02d", i))
	}
	if err := runtime.PublishBatch(ctxFor(t, 10*time.Second), c, textType, "", bodies, runtime.WithRoutingKey(q)); err != nil {
		t.Fatalf("PublishBatch: %v", err)
	}
	rec.waitFor(t, 20*time.Second, "the retry", func(calls []seen) bool { return len(calls) == 42 })
	waitStats(t, cs, func(st runtime.ConsumerStats) bool { return st.Handled["accepted"] == 41 })
	// The acks go out within the batch's delay: wait for the one of 42.
	deadline := time.Now().Add(10 * time.Second)
	for !slices.ContainsFunc(log.all(), func(a sentAck) bool { return a.tag == 42 }) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	got := log.all()
	if len(got) == 0 || !got[0].multiple || got[0].tag < 41 {
		t.Fatalf("acks sent: %v, want a multiple ack on 41 or above first (the 40 waited in the slack behind the held retry)", got)
	}
	for _, a := range got {
		if !a.multiple && a.tag <= 41 {
			t.Errorf("ack %v: a single ack of a delivery that waited behind the held retry: %v", a, got)
		}
	}
}
