package runtime_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
)

// slowRetryLog is a logger whose first "acemq: retry" line takes hold: a
// log handler writing to a pipe nobody reads for a while.
type slowRetryLog struct {
	once *sync.Once
	hold time.Duration
}

func (h slowRetryLog) Enabled(context.Context, slog.Level) bool { return true }
func (h slowRetryLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "acemq: retry" {
		h.once.Do(func() { time.Sleep(h.hold) })
	}
	return nil
}
func (h slowRetryLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h slowRetryLog) WithGroup(string) slog.Handler      { return h }

// A copy's outcome is carried out from the publisher's drainer, one after
// the other: while one is held up there (its retry's log line takes 33 s),
// a second copy the broker confirmed meanwhile waits behind it past its
// bound (30 s). It is the broker's confirm, not a timeout: the retry is
// published once, not a second time as a copy that failed.
func TestACopyConfirmedBehindASlowOutcomeIsNotTimedOut(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "slowoutcome")
	policy := runtime.Fixed(3, time.Second).WithWaitInBrokerFrom(time.Second)
	c := dial(t, runtime.WithLogger(slog.New(slowRetryLog{once: &sync.Once{}, hold: 33 * time.Second})))
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: policy}))
	cs, rec := consume(t, c, q, &policy, func(m seen) runtime.Ack {
		if m.Envelope.Attempt == 1 {
			return runtime.Retry(errors.New("once"))
		}
		return runtime.Accept()
	}, runtime.WithConcurrency(2))
	publishText(t, c, q, "a")
	rec.waitN(t, 1, wait)
	time.Sleep(300 * time.Millisecond) // a's copy confirmed: its outcome is on the drainer
	publishText(t, c, q, "b")
	rec.waitN(t, 4, wait) // both back from the rung, their originals unacked
	// Once the slow outcome is through, both originals are acked; a second
	// copy of b (its bound's end taken for a failure, then tried again
	// after 1 s) would be back from the rung by then, or just after.
	for deadline := time.Now().Add(45 * time.Second); cs.Stats().Held != 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(2500 * time.Millisecond)
	second := map[string]int{}
	for _, s := range rec.all() {
		if s.Envelope.Attempt == 2 {
			second[s.Body]++
		}
	}
	if second["a"] != 1 || second["b"] != 1 {
		t.Errorf("second attempts %v, want one each: a copy the broker confirmed was taken as timed out and published again (calls %s)", second, describe(rec.all()))
	}
	if st := cs.Stats(); st.Held != 0 {
		t.Errorf("%d deliveries still held", st.Held)
	}
}
