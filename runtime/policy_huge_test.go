package runtime_test

import (
	"math"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

// A policy with an absurd number of attempts is still cheap to validate
// and to ask for its rungs: the waits stop changing at the cap.
func TestHugeAttemptsAreCheapToValidate(t *testing.T) {
	p := runtime.Exponential(math.MaxInt, time.Second, time.Hour)
	if err := p.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	rungs := brokerRungs(p)
	if len(rungs) == 0 || rungs[len(rungs)-1] != time.Hour {
		t.Fatalf("wire.BrokerRungs = %v, want the doubling waits from 32s up to the 1h cap", rungs)
	}
	if got := brokerRungs(runtime.Fixed(math.MaxInt, time.Minute)); len(got) != 1 || got[0] != time.Minute {
		t.Fatalf("wire.BrokerRungs of Fixed(MaxInt, 1m) = %v, want [1m0s]", got)
	}
}
