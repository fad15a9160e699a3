package runtime

import (
	"time"

	"github.com/acemq/acemq-go/runtime/internal/core"
)

// RetryPolicy says how many times a message is attempted and how long to
// wait between attempts. Policies are immutable values: every With… method
// returns a new policy, and the method without With reads what it set
// (WithJitter and Jitter, WithWaitInBrokerFrom and WaitInBrokerFrom, …).
// The zero value is NoRetry.
type RetryPolicy = core.RetryPolicy

// NoRetry allows one delivery and no retry: a failure is dead-lettered at
// once. It is the default everywhere.
func NoRetry() RetryPolicy { return core.NoRetry() }

// Fixed allows attempts deliveries, delay apart, with no jitter.
func Fixed(attempts int, delay time.Duration) RetryPolicy { return core.Fixed(attempts, delay) }

// Exponential allows attempts deliveries; the first wait is initial, each
// next one doubles (see WithMultiplier) up to max, with ±20% jitter on the
// waits held in memory (see WithJitter).
func Exponential(attempts int, initial, max time.Duration) RetryPolicy {
	return core.Exponential(attempts, initial, max)
}
