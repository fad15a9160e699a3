package runtime_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
)

// A consumer logs at most WithOutcomeLogLimit's lines a window; the rest
// are one summary line at the window's end, counted by outcome and reason.
// Stats counts every one.
func TestOutcomeLogLinesAreBounded(t *testing.T) {
	t.Parallel()
	logs, logger := newLogCapture()
	c := dial(t, runtime.WithLogger(logger))
	q := brokertest.Queue(t, "outcomelog.limit")
	rawQueue(t, q, nil)
	policy := runtime.NoRetry()
	cs, _ := consume(t, c, q, &policy, func(seen) runtime.Ack {
		return runtime.Retry(errors.New("the warehouse is not answering"))
	}, runtime.WithOutcomeLogLimit(3, 5*time.Second))
	for i := range 10 {
		publishText(t, c, q, "order "+strconv.Itoa(i))
	}
	waitDepth(t, wire.DeadLetterQueue(q), 10, wait)
	var summaries []logRecord
	for deadline := time.Now().Add(wait); ; time.Sleep(50 * time.Millisecond) {
		lines, sum := len(logs.matching("acemq: dead-lettered")), 0
		summaries = logs.matching("more outcome lines in the last 5s")
		for _, s := range summaries {
			n, _ := strconv.Atoi(s.Attrs["suppressed"])
			sum += n
		}
		if lines+sum == 10 && len(summaries) > 0 {
			if lines < 3 {
				t.Errorf("%d dead-lettered lines, want the first 3 of the window", lines)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d dead-lettered lines and %d summarised (%v), want 10 in all and a summary", lines, sum, summaries)
		}
	}
	s := summaries[0]
	if s.Level.String() != "WARN" || !strings.Contains(s.Attrs["by_outcome"], "gave_up_attempts: ") ||
		!strings.Contains(s.Attrs["by_reason"], "gave up after 1 attempts: the warehouse is not answering: ") || s.Attrs["queue"] != q {
		t.Errorf("summary %v, want Warn with the queue, dead-lettered and the reason counted", s)
	}
	if got := cs.Stats().Handled["gave_up_attempts"]; got != 10 {
		t.Errorf("Stats gave_up_attempts %d, want 10 whatever the log shows", got)
	}
}
