package runtime_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

// A wait held in memory past the broker's consumer timeout (30m) would get
// the channel closed and the message redelivered on its old attempt, for
// ever: such policies are refused, whatever the threshold.
func TestLongWaitsInMemoryAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy runtime.RetryPolicy
		ok     bool
	}{
		{"an hour, broker never used", runtime.Fixed(3, time.Hour).WithWaitInBrokerFrom(0), false},
		{"14m with ±20% jitter reaches 16m48s", runtime.Exponential(3, 14*time.Minute, 14*time.Minute).WithWaitInBrokerFrom(0), false},
		{"14m without jitter", runtime.Fixed(3, 14*time.Minute).WithWaitInBrokerFrom(0), true},
		{"an hour in the broker", runtime.Fixed(3, time.Hour), true},
	} {
		err := tc.policy.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("%s: Validate() = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "held in memory") {
			t.Errorf("%s: %v does not say the wait would be held in memory", tc.name, err)
		}
	}
}
