package consume

import (
	"fmt"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/obs"
	"github.com/acemq/acemq-go/runtime/wire"
)

// A retry spends the delivery's next attempt as its policy says: the copy
// waits in memory (a held retry, hold.go) or in the broker (a rung queue),
// or the delivery is requeued (requeue_on_failure); with no attempt left
// the delivery is dead-lettered (setaside.go).

// retry spends the next attempt, or gives up.
func (dv *delivery) retry(why string) {
	if dv.discarded() {
		return
	}
	cs, p, env := dv.cs, dv.cs.policy, dv.env
	if age := p.GiveUpAfter(); age > 0 && !env.FirstSeen.IsZero() && time.Since(env.FirstSeen) > age {
		dv.deadLetter(fmt.Sprintf("gave up after %d attempts (older than %s): %s", env.Attempt, age, why), obs.OutcomeGaveUpTooOld)
		return
	}
	if env.Attempt >= p.Attempts() {
		dv.deadLetter(fmt.Sprintf("gave up after %d attempts: %s", env.Attempt, why), obs.OutcomeGaveUpAttempts)
		return
	}
	if cs.requeue {
		dv.requeue(why)
		return
	}
	delay := p.Delay(env.Attempt)
	switch {
	case core.InBroker(p, delay):
		// Without its rung the retry waits in memory, but never longer
		// than the cap: a delivery held past the broker's consumer
		// timeout (30m) closes the channel.
		dv.toRung(why, delay, false, min(delay, wire.MaxWaitInBrokerFrom))
	case dv.s.reserveHold(dv.d.DeliveryTag, cs.cfg.HoldBudget, delay):
		dv.holdInBudget(why, delay)
	case !core.Spills(p, delay):
		// Past the budget under a policy that never uses the broker, in
		// a handler's slot.
		dv.waitInMemory(why, core.Jittered(p, delay))
	default:
		// The hold budget is full: spill the wait to the broker rather
		// than keep one of the handlers' slots (bench/NOTES.md, R1).
		dv.toRung(why, core.SpillRung(delay), true, core.Jittered(p, delay))
	}
}

// requeue rejects dv back to its queue for its next attempt
// (requeue_on_failure): basic.reject, the verb for "processing failed",
// which a quorum queue counts on every RabbitMQ (4.3 does not count a
// basic.nack); counting the requeue where the broker does not.
func (dv *delivery) requeue(why string) {
	dv.cs.requeues.add(requeueKey(dv.d, dv.env))
	// A NativeRetry queue holds it back for the broker's delay.
	var count int64
	if dv.brokerCounts() {
		count = core.PositiveInt(dv.d.Headers[headerDeliveryCount], 0)
	}
	delay, _ := dv.cs.cfg.Native.Wait(dv.cs.queue, count)
	if dv.reject("acemq: requeue failed") {
		dv.retried(why, "requeue", delay)
	}
}

// waitInMemory holds dv's next attempt in memory for delay: a copy
// published to the queue when the timer fires, dv acked once it is
// confirmed.
func (dv *delivery) waitInMemory(why string, delay time.Duration) {
	dv.holdFor(dv.memoryWait(why), why, delay)
}

// holdInBudget holds dv's next attempt in the budget slot reserveHold gave
// it, to be spilled to its rung later if the session's rate, once
// measured, says the wait does not fit in the ack slack (respillHeld).
func (dv *delivery) holdInBudget(why string, delay time.Duration) {
	p := dv.cs.policy
	h := dv.memoryWait(why)
	if core.Spills(p, delay) {
		h.spill = core.SpillRung(delay)
	}
	dv.holdFor(h, why, core.Jittered(p, delay))
}

// memoryWait is dv's next attempt as a copy to its queue, to be held.
func (dv *delivery) memoryWait(why string) *heldRetry {
	return dv.copyFor(dv.cs.queue, dv.env.Attempt+1, why, "")
}

// holdFor counts dv's retry as waiting in memory and holds h for delay.
func (dv *delivery) holdFor(h *heldRetry, why string, delay time.Duration) {
	dv.retried(why, "memory", delay)
	dv.cs.hold(h, delay)
}

// toRung sends dv's next attempt to the rung for delay, and acks dv once
// the broker has confirmed the copy; the worker does not wait for that
// (bench/NOTES.md, R1). When the rung is missing the retry waits in
// memory for fallback instead, at once while the rung is remembered as
// missing (rungs.go). spilled is a wait below the threshold sent to the
// broker because the hold budget is full.
func (dv *delivery) toRung(why string, delay time.Duration, spilled bool, fallback time.Duration) {
	cs := dv.cs
	rung := cs.rungNames.of(cs.queue, delay)
	if cs.missing.skip(rung, time.Now(), cs.cfg.RungProbeOrDefault()) {
		cs.metrics.Add(cs.metrics.RungMissing, cs.queue)
		dv.waitInMemory(why, fallback)
		return
	}
	h := dv.copyFor(rung, dv.env.Attempt+1, why, "")
	h.done = func() {
		if spilled {
			cs.metrics.Add(cs.metrics.RetrySpilled, cs.queue)
		}
		cs.rungFound(rung)
		dv.retried(why, "broker", delay)
	}
	h.unroutable = func() {
		cs.rungMissing(rung)
		dv.waitInMemory(why, fallback)
	}
	h.publish(dv.ctx)
}

// rungMissing counts a wait held in memory because rung did not take its
// copy, and logs it once per probe interval with the count since the last
// line.
func (cs *Consumer) rungMissing(rung string) {
	cs.metrics.Add(cs.metrics.RungMissing, cs.queue)
	probe := cs.cfg.RungProbeOrDefault()
	if n := cs.missing.missing(rung, time.Now(), probe); n > 0 {
		cs.log.Warn("acemq: rung queue missing; waiting in memory instead (declare the topology)",
			"rung", rung, "held_in_memory", n, "next_probe_in", probe)
	}
}

// rungFound forgets rung as missing once it took a copy.
func (cs *Consumer) rungFound(rung string) {
	if n := cs.missing.found(rung); n >= 0 {
		cs.log.Info("acemq: rung queue found again; waits go to the broker", "rung", rung, "held_in_memory", n)
	}
}
