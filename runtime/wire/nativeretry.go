package wire

import (
	"fmt"
	"time"
)

// NativeRetry is RabbitMQ 4.3's quorum-queue delayed retry
// (x-delayed-retry-min and -max, type "failed") that gives a policy's
// schedule, waits (attempts−1 of them, without jitter), exactly: the
// first wait (min) and the last (max), such that the wait after the k-th
// failure is min(min × k, max). It is an error, saying which wait the
// broker would get wrong, for a schedule the broker cannot give: a policy
// with jitter, without a wait, with a wait of zero or not a whole number
// of milliseconds, or whose waits do not grow by the first wait and then
// stay.
func NativeRetry(waits []time.Duration, jitter float64) (minWait, maxWait time.Duration, err error) {
	switch {
	case len(waits) == 0:
		return 0, 0, fmt.Errorf("retry policy: %d attempt has no wait for the broker to delay; native retry needs at least 2 attempts", len(waits)+1)
	case jitter != 0:
		return 0, 0, fmt.Errorf("retry policy: jitter %g: the broker's delay has none; write jitter 0 for native retry, or keep the rungs", jitter)
	}
	for i, w := range waits {
		if w <= 0 || w%time.Millisecond != 0 {
			return 0, 0, fmt.Errorf("retry policy: wait %d (%s) is not a positive whole number of milliseconds, which the broker's delay is", i+1, w)
		}
	}
	minWait, maxWait = waits[0], waits[len(waits)-1]
	for i, w := range waits {
		if b := min(minWait*time.Duration(i+1), maxWait); b != w {
			return 0, 0, fmt.Errorf("retry policy: waits %v: the broker's delay is min(min × failures, max), %s after failure %d, not %s; "+
				"native retry gives a fixed or linear ladder only (keep the rungs for this one)", waits, b, i+1, w)
		}
	}
	return minWait, maxWait, nil
}
