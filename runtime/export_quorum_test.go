package runtime

import (
	"time"

	"github.com/acemq/acemq-go/runtime/internal/consume"
)

// WithSetAsideTiming shortens how a consumer retries a copy that could not
// be published: the first wait, the longest wait, and how long it holds a
// delivery before nacking it back (tests only).
func WithSetAsideTiming(backoff, backoffMax, hold time.Duration) ConsumeOption {
	return consumeOptionFunc(func(c *consume.Config) {
		c.SetAside = consume.SetAsideTiming{Backoff: backoff, BackoffMax: backoffMax, Hold: hold}
	})
}
