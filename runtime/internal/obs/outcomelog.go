package obs

import (
	"cmp"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// Default bound of a consumer's outcome log lines (WithOutcomeLogLimit):
// at most this many retry, dead-letter and park lines a window; the rest
// are counted in one summary line at the window's end.
const (
	DefaultOutcomeLogLines  = 20
	DefaultOutcomeLogWindow = 10 * time.Second
)

// OutcomeLogLimit is WithOutcomeLogLimit's bound (the defaults unless Set).
type OutcomeLogLimit struct {
	Lines  int
	Window time.Duration
	Set    bool // else the defaults
}

// maxSummaryReasons is how many reasons a summary line names.
const maxSummaryReasons = 3

// OutcomeLimiter bounds a consumer's outcome lines per window.
type OutcomeLimiter struct {
	Lines  int
	Window time.Duration
	log    *slog.Logger

	mu         sync.Mutex
	start      time.Time
	logged     int
	byOutcome  map[string]int
	byReason   map[string]int
	suppressed int
	timer      *time.Timer
}

func NewOutcomeLimiter(l OutcomeLogLimit, log *slog.Logger) *OutcomeLimiter {
	if !l.Set {
		l = OutcomeLogLimit{Lines: DefaultOutcomeLogLines, Window: DefaultOutcomeLogWindow}
	}
	if l.Window <= 0 {
		l.Window = DefaultOutcomeLogWindow
	}
	return &OutcomeLimiter{Lines: l.Lines, Window: l.Window, log: log}
}

// Allow reports whether the line of this outcome (what, for why) is
// logged; one that is not is counted for the window's summary, by its
// acemq.outcome name.
func (o *OutcomeLimiter) Allow(now time.Time, what Outcome, why string) bool {
	if o.Lines < 1 {
		return true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.start.IsZero() || now.Sub(o.start) >= o.Window {
		o.start, o.logged = now, 0
	}
	if o.logged < o.Lines {
		o.logged++
		return true
	}
	if o.suppressed == 0 {
		o.byOutcome, o.byReason = map[string]int{}, map[string]int{}
		o.timer = time.AfterFunc(o.Window-now.Sub(o.start), o.Summarize)
	}
	o.suppressed++
	o.byOutcome[what.String()]++
	if len(o.byReason) < 100 || o.byReason[why] > 0 {
		o.byReason[why]++
	}
	return false
}

// Summarize logs the window's suppressed lines as one.
func (o *OutcomeLimiter) Summarize() {
	o.mu.Lock()
	n, outcomes, reasons := o.suppressed, o.byOutcome, o.byReason
	o.suppressed, o.byOutcome, o.byReason = 0, nil, nil
	o.mu.Unlock()
	if n == 0 {
		return
	}
	o.log.Warn(fmt.Sprintf("acemq: … and %d more outcome lines in the last %s (not logged one by one: WithOutcomeLogLimit)", n, o.Window),
		"suppressed", n, "by_outcome", countsText(outcomes, len(outcomes)), "by_reason", countsText(reasons, maxSummaryReasons))
}

// countsText is "gave_up_attempts: 1900; retried: 44": the most frequent first,
// at most k of them.
func countsText(counts map[string]int, k int) string {
	keys := slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b))
	})
	var parts []string
	for _, key := range keys[:min(k, len(keys))] {
		parts = append(parts, fmt.Sprintf("%s: %d", key, counts[key]))
	}
	if len(keys) > k {
		parts = append(parts, fmt.Sprintf("%d more", len(keys)-k))
	}
	return strings.Join(parts, "; ")
}
