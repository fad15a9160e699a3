package runtime

import (
	"strconv"
	"strings"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"
)

// RabbitMQ 4.3's quorum-queue delayed retry: a queue declared with
// x-delayed-retry-type, -min and -max holds a message handed back to it
// for min(min × x-delivery-count, max) before it delivers it again.
// Measured on 4.3.6: with type "failed" a basic.reject and a closed channel
// are delayed (and counted), a basic.nack is neither; min 1s, max 4s gave
// 1s, 2s, 3s, 4s, 4s after five rejects; an unknown type, a string min, or
// a max without a min is accepted and delays nothing; a min without a max
// delays min every time. 3.10.8 accepts the arguments and ignores them (a
// reject came back in 2ms).
const (
	argDelayedRetryType = wire.ArgDelayedRetryType
	argDelayedRetryMin  = wire.ArgDelayedRetryMin
	argDelayedRetryMax  = wire.ArgDelayedRetryMax
)

// nativeRetry is the broker's delayed retry that gives p's schedule (wire.NativeRetry)
// exactly: the first wait (min) and the last (max), such that the wait
// after the k-th failure is min(min × k, max). It is an error, saying which
// wait the broker would get wrong, for a policy the broker cannot give:
// one with jitter, without a wait, with a wait of zero or not a whole
// number of milliseconds, or one whose waits do not grow by the first
// wait and then stay (an exponential ladder past its second wait, unless
// max caps it there). Fixed(n, d) is always expressible (min = max = d),
// and so is Exponential(3, d, 2d) with no jitter (d, 2d).
func nativeRetry(p RetryPolicy) (minWait, maxWait time.Duration, err error) {
	return wire.NativeRetry(p.Schedule(), p.Jitter())
}

// nativeRetryArguments are a NativeRetry queue's delayed-retry arguments.
func (q Queue) nativeRetryArguments() (map[string]any, error) {
	lo, hi, err := nativeRetry(q.Retry)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		argDelayedRetryType: "failed",
		argDelayedRetryMin:  lo.Milliseconds(),
		argDelayedRetryMax:  hi.Milliseconds(),
	}, nil
}

// brokerAtLeast reports whether a server's version property (3.10.8,
// 4.3.6, 4.3.0-rc.1) is at least want (major.minor); false when it cannot
// be read.
func brokerAtLeast(version, want string) bool {
	have, ok1 := majorMinor(version)
	need, ok2 := majorMinor(want)
	return ok1 && ok2 && (have[0] > need[0] || have[0] == need[0] && have[1] >= need[1])
}

func majorMinor(v string) ([2]int, bool) {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return [2]int{}, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(strings.SplitN(parts[1], "-", 2)[0])
	return [2]int{major, minor}, err1 == nil && err2 == nil
}
