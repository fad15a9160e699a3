package runtime_test

// A short wait goes to the broker only when the consumer's budget really
// is exceeded (issue 37, item 4): three messages in flight never spill an
// 8 s wait, however close together two of them arrived.

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
)

// Two messages handled 150 ms apart, then a third that fails with an 8 s
// wait (below the 30 s threshold), under the defaults (prefetch 20, hold
// budget 16, ack slack 20). Before, the session measured its rate over
// its first window as those two deliveries in ~150 ms, some 13 a second,
// took 13 × 8 s = 106 deliveries to come during the wait, past the slack
// of 20, and spilled the wait to <q>.retry.8s: acemq.retry.spilled 1,
// outcome retried/broker, the message back through the rung (x-death).
// Three messages cannot fill a slack of 20: the wait is held in memory.
func TestThreeMessagesInFlightDoNotSpillAShortWait(t *testing.T) {
	t.Parallel()
	const hold = 8 * time.Second
	q := brokertest.Queue(t, "fewinflight")
	policy := runtime.Fixed(2, hold)
	if got := spillRungs(policy); !slices.Equal(got, []time.Duration{hold}) {
		t.Fatalf("wire.SpillRungs = %v, want [8s]", got)
	}
	reader, meterOpt := meter(t)
	c := dial(t, meterOpt)
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: policy}))
	rung := q + ".retry.8s"
	stop := make(chan struct{})
	most := pollDepth(t, rung, stop)
	_, rec := consume(t, c, q, &policy, func(m seen) runtime.Ack {
		if m.Body == "fail" && m.Envelope.Attempt == 1 {
			return runtime.Retry(errors.New("not yet"))
		}
		return runtime.Accept()
	})
	publishText(t, c, q, "a")
	rec.waitN(t, 1, wait)
	time.Sleep(150 * time.Millisecond) // past the session's first rate window
	publishText(t, c, q, "b")
	rec.waitN(t, 2, wait)
	publishText(t, c, q, "fail")
	calls := rec.waitFor(t, hold+20*time.Second, "the retry", func(calls []seen) bool { return len(calls) == 4 })
	close(stop)
	first, again := calls[2], calls[3]
	if again.Body != "fail" || again.Envelope.Attempt != 2 || again.Envelope.ID != first.Envelope.ID {
		t.Fatalf("calls %s; want the failed message back, attempt 2", describe(calls))
	}
	if got := deathQueues(again.Headers); len(got) != 0 {
		t.Errorf("the retry's x-death names %v: it went through the broker, want it held in memory", got)
	}
	if d := again.At.Sub(first.At); d < hold {
		t.Errorf("the retry came back after %s, want ≥ %s", d, hold)
	}
	if got := <-most; got != 0 {
		t.Errorf("%s held %d messages, want none (three messages in flight fit the budget)", rung, got)
	}
	if n := counter(t, reader, wire.MetricRetrySpilled); n != 0 {
		t.Errorf("%s = %v, want 0", wire.MetricRetrySpilled, n)
	}
	outcomes := waitPoint(t, reader, wire.MetricOutcome, outcomeKey(q, "accepted", ""), 3, false)
	onlyOutcomes(t, outcomes, q, map[string]float64{
		outcomeKey(q, "retried", "memory"): 1,
		outcomeKey(q, "accepted", ""):      3,
	})
}
