package runtime

import (
	"time"

	"github.com/acemq/acemq-go/runtime/internal/consume"
	"github.com/acemq/acemq-go/runtime/internal/obs"
)

// Default bound of a consumer's outcome log lines (WithOutcomeLogLimit):
// at most this many retry, dead-letter and park lines a window; the rest
// are counted in one summary line at the window's end.
const (
	DefaultOutcomeLogLines  = obs.DefaultOutcomeLogLines
	DefaultOutcomeLogWindow = obs.DefaultOutcomeLogWindow
)

// WithOutcomeLogLimit bounds the consumer's outcome log lines (retry,
// dead-lettered, parked): at most lines of them every window, the others
// counted in one Warn line when the window ends ("acemq: … and 1944 more
// outcome lines in the last 10s", with the counts by outcome and the most
// frequent reasons). lines below 1 logs every one. The default is
// DefaultOutcomeLogLines every DefaultOutcomeLogWindow. Stats and the
// metrics count every outcome whatever the log shows.
func WithOutcomeLogLimit(lines int, window time.Duration) ConsumeOption {
	return consumeOptionFunc(func(c *consume.Config) {
		c.OutcomeLog = obs.OutcomeLogLimit{Lines: lines, Window: window, Set: true}
	})
}
