package core

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"
)

// RetryPolicy says how many times a message is attempted and how long to
// wait between attempts. Policies are immutable values: every With… method
// returns a new policy, and the method without With reads what it set
// (WithJitter and Jitter, WithWaitInBrokerFrom and WaitInBrokerFrom, …).
// The zero value is NoRetry.
type RetryPolicy struct {
	attempts   int
	initial    time.Duration
	max        time.Duration
	multiplier float64
	jitter     float64
	// threshold is the broker threshold; thresholdSet distinguishes an
	// explicit WithWaitInBrokerFrom(0) (never use the broker) from the default.
	threshold    time.Duration
	thresholdSet bool
	giveUpAfter  time.Duration
}

// NoRetry allows one delivery and no retry: a failure is dead-lettered at
// once. It is the default everywhere.
func NoRetry() RetryPolicy { return RetryPolicy{attempts: 1} }

// Fixed allows attempts deliveries, delay apart, with no jitter.
func Fixed(attempts int, delay time.Duration) RetryPolicy {
	return RetryPolicy{attempts: attempts, initial: delay, max: delay, multiplier: 1}
}

// Exponential allows attempts deliveries; the first wait is initial, each
// next one doubles (see WithMultiplier) up to max, with ±20% jitter on the
// waits held in memory (see WithJitter).
func Exponential(attempts int, initial, max time.Duration) RetryPolicy {
	return RetryPolicy{attempts: attempts, initial: initial, max: max, multiplier: 2, jitter: 0.2}
}

// WithMultiplier returns the policy with each wait f times the one before.
func (p RetryPolicy) WithMultiplier(f float64) RetryPolicy { p.multiplier = f; return p }

// WithJitter returns the policy with waits held in memory spread by ±f
// (0.2 is ±20%). Broker waits are never jittered: a rung's TTL is fixed.
func (p RetryPolicy) WithJitter(f float64) RetryPolicy { p.jitter = f; return p }

// WithWaitInBrokerFrom returns the policy with waits of d or more held by
// the broker in rung queues (the manifest's wait_in_broker_from). Zero means never use the broker: every wait is
// held in memory and no rung is declared.
func (p RetryPolicy) WithWaitInBrokerFrom(d time.Duration) RetryPolicy {
	p.threshold, p.thresholdSet = d, true
	return p
}

// WithGiveUpAfter returns the policy that dead-letters a failed message
// whose first delivery (x-acemq-first-seen) is older than d, whatever
// attempt it is on (the manifest's give_up_after). Zero means no age limit.
func (p RetryPolicy) WithGiveUpAfter(d time.Duration) RetryPolicy { p.giveUpAfter = d; return p }

// Attempts is the number of deliveries the policy allows, at least 1.
func (p RetryPolicy) Attempts() int { return max(p.attempts, 1) }

// Jitter is the jitter factor of waits held in memory.
func (p RetryPolicy) Jitter() float64 { return p.jitter }

// Multiplier is the factor between one wait and the next.
func (p RetryPolicy) Multiplier() float64 { return p.multiplier }

// WaitInBrokerFrom is the wait from which the broker holds a retry
// (wire.DefaultWaitInBrokerFrom unless WithWaitInBrokerFrom); zero means never.
func (p RetryPolicy) WaitInBrokerFrom() time.Duration {
	if !p.thresholdSet {
		return wire.DefaultWaitInBrokerFrom
	}
	return p.threshold
}

// GiveUpAfter is the age limit set by WithGiveUpAfter, zero when none.
func (p RetryPolicy) GiveUpAfter() time.Duration { return p.giveUpAfter }

// Delay is the wait, without jitter, after the given failed attempt
// (1-based) before the next one.
func (p RetryPolicy) Delay(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	m := p.multiplier
	if m <= 0 {
		m = 1
	}
	d := float64(p.initial) * math.Pow(m, float64(attempt-1))
	if p.max > 0 && d > float64(p.max) {
		return p.max
	}
	if d > float64(math.MaxInt64) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(d)
}

// Schedule is the waits between attempts, without jitter: attempts−1 of
// them. Exponential(5, time.Second, time.Minute).Schedule() is
// [1s 2s 4s 8s].
func (p RetryPolicy) Schedule() []time.Duration {
	n := p.Attempts() - 1
	out := make([]time.Duration, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, p.Delay(i))
	}
	return out
}

// InBroker reports whether a wait of d is held by the broker.
func InBroker(p RetryPolicy, d time.Duration) bool { return wire.InBroker(d, p.WaitInBrokerFrom()) }

// BrokerRungs is the distinct waits of the schedule that the broker holds
// (wire.BrokerRungs).
func BrokerRungs(p RetryPolicy) []time.Duration {
	return wire.BrokerRungs(p.distinctWaits, p.WaitInBrokerFrom())
}

// SpillRungs is the rungs a consumer spills short waits to once its hold
// budget is full (wire.SpillRungs).
func SpillRungs(p RetryPolicy) []time.Duration {
	return wire.SpillRungs(p.distinctWaits, p.WaitInBrokerFrom())
}

// Rungs is every rung queue the topology declares for the policy
// (wire.Rungs).
func Rungs(p RetryPolicy) []time.Duration {
	return wire.Rungs(p.distinctWaits, p.WaitInBrokerFrom())
}

// Spills reports whether a wait of d held in memory may go to a rung
// instead once the hold budget is full.
func Spills(p RetryPolicy, d time.Duration) bool { return wire.Spills(d, p.WaitInBrokerFrom()) }

// SpillRung is the rung a wait of d spills to: d rounded up to whole
// seconds.
func SpillRung(d time.Duration) time.Duration { return wire.RoundUpToRung(d) }

// distinctDelays calls fn with the waits of the schedule in order, stopping
// once they stop changing (the cap is reached, or the multiplier is 1), so
// that a policy with a huge number of attempts costs no more than its
// distinct waits.
func (p RetryPolicy) distinctDelays(fn func(time.Duration)) {
	for d := range p.distinctWaits {
		fn(d)
	}
}

// distinctWaits yields the waits of the schedule as distinctDelays calls
// them (wire.Waits, the rung arithmetic's reading of a policy).
func (p RetryPolicy) distinctWaits(yield func(time.Duration) bool) {
	wire.Waits(p.Attempts(), p.Delay)(yield)
}

// Jittered spreads d by the policy's jitter, uniformly in [d(1−j), d(1+j)].
func Jittered(p RetryPolicy, d time.Duration) time.Duration {
	if p.jitter <= 0 {
		return d
	}
	f := 1 + p.jitter*(2*rand.Float64()-1)
	return time.Duration(float64(d) * f)
}

// Validate reports a policy the runtime refuses: a broker threshold above
// wire.MaxWaitInBrokerFrom, negative values, or a broker wait that is not a whole
// number of seconds (a rung is named q.retry.<N>s).
func (p RetryPolicy) Validate() error {
	switch {
	case p.attempts < 0:
		return fmt.Errorf("retry policy: attempts %d is negative", p.attempts)
	case p.initial < 0 || p.max < 0:
		return fmt.Errorf("retry policy: a delay is negative")
	case p.jitter < 0 || p.jitter >= 1:
		return fmt.Errorf("retry policy: jitter %g must be in [0, 1)", p.jitter)
	case p.WaitInBrokerFrom() > wire.MaxWaitInBrokerFrom:
		return fmt.Errorf("retry policy: wait_in_broker_from %s is above %s: a delivery held that long in memory "+
			"risks the broker's consumer timeout; use a smaller threshold", p.WaitInBrokerFrom(), wire.MaxWaitInBrokerFrom)
	case p.giveUpAfter < 0:
		return fmt.Errorf("retry policy: give_up_after is negative")
	}
	for _, d := range BrokerRungs(p) {
		if d%time.Second != 0 {
			return fmt.Errorf("retry policy: broker wait %s is not a whole number of seconds (rungs are named q.retry.<N>s)", d)
		}
	}
	var tooLong error
	p.distinctDelays(func(d time.Duration) {
		if longest := time.Duration(float64(d) * (1 + p.jitter)); tooLong == nil && !InBroker(p, d) && longest > wire.MaxWaitInBrokerFrom {
			tooLong = fmt.Errorf("retry policy: a wait of %s (up to %s with jitter) would be held in memory, above %s: "+
				"the broker closes a channel whose delivery is unsettled for 30m; let the broker hold it (wait_in_broker_from)", d, longest, wire.MaxWaitInBrokerFrom)
		}
	})
	return tooLong
}

func (p RetryPolicy) String() string {
	s := fmt.Sprintf("%d attempts, waits %v", p.Attempts(), p.Schedule())
	if rungs := BrokerRungs(p); len(rungs) > 0 {
		s += fmt.Sprintf(", broker rungs %v", rungs)
	}
	if spill := SpillRungs(p); len(spill) > 0 {
		// Declared by Topology too: where a wait held in memory goes past
		// the hold budget.
		s += fmt.Sprintf(", spill rungs %v (past the hold budget)", spill)
	}
	if p.giveUpAfter > 0 {
		s += fmt.Sprintf(", give up after %s", p.giveUpAfter)
	}
	return s
}
