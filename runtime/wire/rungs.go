package wire

import (
	"iter"
	"slices"
	"time"
)

// DefaultWaitInBrokerFrom is a policy's WaitInBrokerFrom unless
// WithWaitInBrokerFrom says otherwise: the wait from which a retry is held by
// the broker in a rung queue rather than on a timer in the consumer.
const DefaultWaitInBrokerFrom = 30 * time.Second

// MaxWaitInBrokerFrom is the largest broker threshold a policy may have: a
// delivery held in memory must be settled well inside the broker's
// consumer timeout (30 minutes by default).
const MaxWaitInBrokerFrom = 15 * time.Minute

// DefaultDeliveryLimit is the x-delivery-limit the topology gives a quorum
// queue that names none. RabbitMQ 4 would otherwise apply 20 and 3.10
// none; docs/reliability.md says why 50.
const DefaultDeliveryLimit = 50

// NativeRetryBroker is the first RabbitMQ version whose quorum queues
// delay a retry themselves (x-delayed-retry-*).
const NativeRetryBroker = "4.3"

// The rung arithmetic below reads a policy as its distinct waits in
// schedule order (waits, as Waits yields them) and its broker threshold
// (threshold, zero: never the broker):
//
//	wire.BrokerRungs(wire.Waits(p.Attempts(), p.Delay), p.WaitInBrokerFrom())

// Waits yields the waits of a policy of attempts deliveries whose wait
// after failed attempt k (1-based) is delay(k), in schedule order, and
// stops once a wait equals the one before it (the cap is reached, or the
// multiplier is 1): a policy with a million attempts and a cap costs no
// more than its distinct waits.
func Waits(attempts int, delay func(attempt int) time.Duration) iter.Seq[time.Duration] {
	return func(yield func(time.Duration) bool) {
		var prev time.Duration = -1
		for i := 1; i < attempts; i++ {
			d := delay(i)
			if d == prev || !yield(d) {
				return
			}
			prev = d
		}
	}
}

// InBroker reports whether a wait of d is held by the broker under
// threshold.
func InBroker(d, threshold time.Duration) bool { return threshold > 0 && d >= threshold }

// BrokerRungs is the distinct waits the broker holds, in ascending order:
// one rung queue each.
func BrokerRungs(waits iter.Seq[time.Duration], threshold time.Duration) []time.Duration {
	var out []time.Duration
	for d := range waits {
		if InBroker(d, threshold) && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}

// SpillRungs is the rungs a consumer spills short waits to once its hold
// budget is full: each distinct wait below the threshold, rounded up to
// whole seconds (RoundUpToRung), in ascending order, leaving out those
// BrokerRungs already has. A wait of zero is never spilled, and under a
// threshold of zero there is none.
func SpillRungs(waits iter.Seq[time.Duration], threshold time.Duration) []time.Duration {
	if threshold <= 0 {
		return nil
	}
	broker := BrokerRungs(waits, threshold)
	var out []time.Duration
	for d := range waits {
		if d <= 0 || InBroker(d, threshold) {
			continue
		}
		r := RoundUpToRung(d)
		if !slices.Contains(broker, r) && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// Rungs is every rung queue the topology declares for a policy, in
// ascending order: BrokerRungs and SpillRungs.
func Rungs(waits iter.Seq[time.Duration], threshold time.Duration) []time.Duration {
	out := append(BrokerRungs(waits, threshold), SpillRungs(waits, threshold)...)
	slices.Sort(out)
	return slices.Compact(out)
}

// Spills reports whether a wait of d held in memory may go to a rung
// instead once the hold budget is full: a positive wait below a positive
// threshold.
func Spills(d, threshold time.Duration) bool {
	return d > 0 && threshold > 0 && !InBroker(d, threshold)
}

// SpillRung is the rung a wait of d goes to when a consumer's hold budget
// is full: RoundUpToRung(d); false when it does not spill.
func SpillRung(d, threshold time.Duration) (time.Duration, bool) {
	if !Spills(d, threshold) {
		return 0, false
	}
	return RoundUpToRung(d), true
}

// RoundUpToRung is d rounded up to whole seconds, the unit of a rung's
// name: a spilled wait is never shorter than the policy asks.
func RoundUpToRung(d time.Duration) time.Duration {
	if r := d.Truncate(time.Second); r < d {
		return r + time.Second
	}
	return d
}
