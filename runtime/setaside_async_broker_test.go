package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
)

// A worker that sets a message aside does not wait for the copy's
// confirm: with one worker and every copy's outcome held back (as a late
// confirm would be), a dead letter and a retry to a rung are written, the
// four accepted messages behind them are handled meanwhile, and the two
// originals stay unacked (Stats().Held counts them) until the outcomes are
// let through; then both are acked and the rung hands the retry back.
func TestSetAsideDoesNotWaitForTheConfirm(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "asidefree")
	policy := runtime.Fixed(2, time.Second).WithWaitInBrokerFrom(time.Second)
	c := dial(t)
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: policy}))
	gate := make(chan struct{})
	cs, rec := consume(t, c, q, &policy, func(m seen) runtime.Ack {
		switch {
		case m.Body == "dead":
			return runtime.Reject(errors.New("no such order"))
		case m.Body == "again" && m.Envelope.Attempt == 1:
			return runtime.Retry(errors.New("warehouse down"))
		}
		return runtime.Accept()
	}, runtime.WithConcurrency(1), runtime.WithPrefetch(10), runtime.WithCopyGateForTest(gate))
	bodies := []string{"dead", "again", "ok1", "ok2", "ok3", "ok4"}
	if err := runtime.PublishBatch(ctxFor(t, 10*time.Second), c, textType, "", bodies, runtime.WithRoutingKey(q)); err != nil {
		t.Fatalf("PublishBatch: %v", err)
	}
	rec.waitN(t, len(bodies), wait)
	// The recorder sees a call as its handler starts: the last Accept is
	// counted a moment later.
	waitStats(t, cs, func(st runtime.ConsumerStats) bool { return st.Handled["accepted"] == 4 })
	if st := cs.Stats(); st.Held != 2 || st.Handled["accepted"] != 4 || st.Handled["rejected"] != 0 || st.Handled["retried"] != 0 {
		t.Errorf("with both copies' outcomes held back: held %d, handled %v; want 2 held, 4 accepted, none rejected or retried yet",
			st.Held, st.Handled)
	}
	waitUnacked(t, q, 2)
	close(gate)
	ds := drain(t, wire.DeadLetterQueue(q), 1, wait)
	if got, why := string(ds[0].Body), headerString(t, ds[0], wire.HeaderError); got != "dead" || why != "rejected by the handler: no such order" {
		t.Errorf("%s holds %q (%s %q), want dead with its reason", wire.DeadLetterQueue(q), got, wire.HeaderError, why)
	}
	calls := rec.waitN(t, len(bodies)+1, wait)
	last := calls[len(calls)-1]
	if last.Body != "again" || last.Envelope.Attempt != 2 || last.Envelope.Error != "warehouse down" {
		t.Errorf("the rung gave back %q attempt %d error %q; want again, 2, warehouse down", last.Body, last.Envelope.Attempt, last.Envelope.Error)
	}
	waitUnacked(t, q, 0)
	waitStats(t, cs, func(st runtime.ConsumerStats) bool { return st.Handled["accepted"] == 5 })
	if st := cs.Stats(); st.Held != 0 || st.Handled["rejected"] != 1 || st.Handled["retried"] != 1 || st.Handled["accepted"] != 5 {
		t.Errorf("after the confirms: held %d, handled %v; want 0 held, 1 rejected, 1 retried, 5 accepted", st.Held, st.Handled)
	}
	if d := depth(t, q); d != 0 {
		t.Errorf("%s holds %d, want 0", q, d)
	}
}

// Close waits for a copy whose confirm has not been let through yet: it
// returns once the outcome arrives, with the copy in q.dlq, the original
// acked and nothing put back in q.
func TestCloseWaitsForACopysConfirm(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "asideclose")
	c := dial(t)
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
	gate := make(chan struct{})
	cs, rec := consume(t, c, q, nil, func(seen) runtime.Ack { return runtime.Reject(errors.New("no such order")) },
		runtime.WithCopyGateForTest(gate))
	publishText(t, c, q, "dead")
	rec.waitN(t, 1, wait)
	waitUnacked(t, q, 1)
	closed := make(chan error, 1)
	go func() { closed <- cs.Close(ctxFor(t, 20*time.Second)) }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while the dead letter's confirm was held back", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(gate)
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if d := depth(t, wire.DeadLetterQueue(q)); d != 1 {
		t.Errorf("%s holds %d, want 1", wire.DeadLetterQueue(q), d)
	}
	if d := depth(t, q); d != 0 {
		t.Errorf("%s holds %d after Close, want 0 (the original acked, not returned)", q, d)
	}
}

// A Close whose ctx ends while a copy's outcome is pending leaves the
// delivery to the broker, which puts the original back when the channel
// closes. When the outcome arrives later (here: the rung is missing, so
// the retry would fall back to waiting in memory), the closed consumer
// publishes nothing more: q holds the original alone, not a second copy
// of it.
func TestCloseGivenUpPublishesNoLateCopy(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "asidelate")
	policy := runtime.Fixed(2, time.Second).WithWaitInBrokerFrom(time.Second)
	c := dial(t)
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q})) // no rung
	gate := make(chan struct{})
	cs, rec := consume(t, c, q, &policy, func(seen) runtime.Ack { return runtime.Retry(errors.New("warehouse down")) },
		runtime.WithCopyGateForTest(gate))
	publishText(t, c, q, "again")
	rec.waitN(t, 1, wait)
	waitUnacked(t, q, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := cs.Close(ctx)
	if want := fmt.Sprintf("close consumer %q: copies still waiting for their confirm: 1: context deadline exceeded", q); err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close = %v, want %s (a copy's outcome is held back)", err, want)
	}
	if want := fmt.Sprintf("close consumer %q: abandoned its channel (0 handlers running, 1 delivery unsettled)", q); !strings.Contains(err.Error(), want) {
		t.Errorf("Close = %v, want it to say %s", err, want)
	}
	close(gate)
	// The late outcome would publish the memory retry's copy at once (the
	// consumer is closing): give it the time to.
	time.Sleep(time.Second)
	if d := depth(t, q); d != 1 {
		t.Errorf("%s holds %d, want 1: the original alone, put back by the broker, and no copy published after Close", q, d)
	}
	if d := getOne(t, q, wait); string(d.Body) != "again" || !d.Redelivered {
		t.Errorf("%s gave %q (redelivered %v), want the original again, redelivered", q, d.Body, d.Redelivered)
	}
}

// waitStats waits (up to wait) until cs's Stats satisfy ok; the caller then
// asserts what it wants of them.
func waitStats(t *testing.T, cs *runtime.Consumer, ok func(runtime.ConsumerStats) bool) {
	t.Helper()
	for deadline := time.Now().Add(wait); !ok(cs.Stats()) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
}
