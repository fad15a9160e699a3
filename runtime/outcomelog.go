package runtime

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

// WithOutcomeLogLimit bounds the consumer's outcome log lines (retry,
// dead-lettered, parked): at most lines of them every window, the others
// counted in one Warn line when the window ends ("acemq: … and 1944 more
// outcome lines in the last 10s", with the counts by outcome and the most
// frequent reasons). lines below 1 logs every one. The default is
// DefaultOutcomeLogLines every DefaultOutcomeLogWindow. Stats and the
// metrics count every outcome whatever the log shows.
func WithOutcomeLogLimit(lines int, window time.Duration) ConsumeOption {
	return consumeOptionFunc(func(c *consumeConfig) {
		c.outcomeLog = outcomeLogLimit{lines: lines, window: window, set: true}
	})
}

type outcomeLogLimit struct {
	lines  int
	window time.Duration
	set    bool // else the defaults
}

// maxSummaryReasons is how many reasons a summary line names.
const maxSummaryReasons = 3

// outcomeLimiter bounds a consumer's outcome lines per window.
type outcomeLimiter struct {
	lines  int
	window time.Duration
	log    *slog.Logger

	mu         sync.Mutex
	start      time.Time
	logged     int
	byOutcome  map[string]int
	byReason   map[string]int
	suppressed int
	timer      *time.Timer
}

func newOutcomeLimiter(l outcomeLogLimit, log *slog.Logger) *outcomeLimiter {
	if !l.set {
		l = outcomeLogLimit{lines: DefaultOutcomeLogLines, window: DefaultOutcomeLogWindow}
	}
	if l.window <= 0 {
		l.window = DefaultOutcomeLogWindow
	}
	return &outcomeLimiter{lines: l.lines, window: l.window, log: log}
}

// allow reports whether the line of this outcome (what, for why) is
// logged; one that is not is counted for the window's summary, by its
// acemq.outcome name.
func (o *outcomeLimiter) allow(now time.Time, what outcome, why string) bool {
	if o.lines < 1 {
		return true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.start.IsZero() || now.Sub(o.start) >= o.window {
		o.start, o.logged = now, 0
	}
	if o.logged < o.lines {
		o.logged++
		return true
	}
	if o.suppressed == 0 {
		o.byOutcome, o.byReason = map[string]int{}, map[string]int{}
		o.timer = time.AfterFunc(o.window-now.Sub(o.start), o.summarize)
	}
	o.suppressed++
	o.byOutcome[what.String()]++
	if len(o.byReason) < 100 || o.byReason[why] > 0 {
		o.byReason[why]++
	}
	return false
}

// summarize logs the window's suppressed lines as one.
func (o *outcomeLimiter) summarize() {
	o.mu.Lock()
	n, outcomes, reasons := o.suppressed, o.byOutcome, o.byReason
	o.suppressed, o.byOutcome, o.byReason = 0, nil, nil
	o.mu.Unlock()
	if n == 0 {
		return
	}
	o.log.Warn(fmt.Sprintf("acemq: … and %d more outcome lines in the last %s (not logged one by one: WithOutcomeLogLimit)", n, o.window),
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
