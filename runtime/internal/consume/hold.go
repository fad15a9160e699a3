package consume

import (
	"context"
	"fmt"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/trace"
)

// A held delivery is kept unsettled with its worker free (it keeps its
// prefetch slot): a copy waiting on a timer (a retry waiting in memory, a
// copy tried again after it failed), or a delivery waiting for the schema
// registry. Each is settled once (claim): by its timer, by Close (a held
// retry is republished at once, attempt advanced; a held lookup is nacked
// back), or dropped with its session when that dies (the broker
// redelivers it).

// heldRetry is a delivery kept unsettled while its copy waits on a timer:
// a retry waiting in memory for its delay (failures 0), or a copy that
// could not be published, tried again after a backoff. It keeps its
// prefetch slot; the worker that handled it is free.
type heldRetry struct {
	dv     *delivery       // the delivery it holds
	target string          // the queue the copy goes to
	msg    amqp.Publishing // the copy
	done   func()          // counts the outcome once the copy is confirmed; may be nil
	// unroutable, when set, takes a copy that no queue took (a missing
	// rung) instead of trying it again.
	unroutable func()
	trace      trace.SpanContext // the process span that decided the copy
	failures   int               // publishes of the copy that failed so far
	// spill, when set, is the rung a retry held in a hold budget's slot
	// goes to instead if its session's rate says, before the wait is
	// over, that the wait does not fit in the ack slack (respillHeld);
	// due is when the wait is over.
	spill time.Duration
	due   time.Time
	since time.Time // when the consumer took d, once a copy failed
	timer *time.Timer
	once  sync.Once
	// out is its copy's outcome once published (copybound.go): a
	// heldRetry is published once (a copy tried again is a new one).
	out copyOutcome
}

// claim makes sure a held retry is settled once, by the timer, Close or
// the loss of its session.
func (h *heldRetry) claim() bool {
	won := false
	h.once.Do(func() { won = true })
	return won
}

// hold publishes h's copy after delay, or at once when the consumer is
// closing (rule 4: no count is lost).
func (cs *Consumer) hold(h *heldRetry, delay time.Duration) {
	cs.mu.Lock()
	if h.dv.s.dead.Load() {
		// The session died while the handler ran: dropHeld has been, so
		// nothing would drop this one. The broker redelivers the message.
		cs.mu.Unlock()
		return
	}
	if cs.closing {
		cs.mu.Unlock()
		h.release(context.Background())
		return
	}
	cs.held[h] = struct{}{}
	h.due = time.Now().Add(delay)
	cs.releasing.Add(1)
	h.timer = time.AfterFunc(delay, func() {
		defer cs.releasing.Done()
		if h.claim() {
			cs.forgetHeld(h)
			h.publish(context.Background())
		}
	})
	cs.mu.Unlock()
}

// release publishes h's copy now, unless its timer, Close or the loss of
// its session claimed it first.
func (h *heldRetry) release(ctx context.Context) {
	if h.claim() {
		h.publish(ctx)
	}
}

func (cs *Consumer) forgetHeld(h *heldRetry) {
	cs.mu.Lock()
	delete(cs.held, h)
	cs.mu.Unlock()
}

func (cs *Consumer) takeHeld(match func(*heldRetry) bool) []*heldRetry {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var out []*heldRetry
	for h := range cs.held {
		if match(h) {
			out = append(out, h)
			delete(cs.held, h)
		}
	}
	return out
}

// flushHeld republishes every held retry now, attempt advanced (rule 4),
// within ctx. Once ctx has ended they are left unsettled instead: the
// broker redelivers them when the channel closes.
func (cs *Consumer) flushHeld(ctx context.Context) {
	var wg sync.WaitGroup
	for _, h := range cs.takeHeld(func(*heldRetry) bool { return true }) {
		if h.timer.Stop() {
			cs.releasing.Done()
		}
		if ctx.Err() != nil {
			h.claim()
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); h.release(ctx) }()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// respillHeld sends to their rungs the retries of s held in a hold budget's
// slot whose remaining wait no longer fits in the ack slack, judged by what
// s took lately (deliveryRate.fits), as reserveHold would decide now (a
// session that has taken fewer deliveries than its slack holds its first
// retries; a busy one has taken more by the time this runs again). A held retry pins the low end of
// the window for its whole wait: every delivery settled behind it is acked
// one by one. The copy goes to the rung for the wait rounded up to whole
// seconds (spillRung), so the message waits longer than asked, never
// shorter; its original is acked once the copy is confirmed (rule 1), and
// a missing rung holds it in memory again for the rest of its wait.
func (cs *Consumer) respillHeld(s *session) {
	now := time.Now()
	fits := s.holdGate() // read before cs.mu: s.mu is never taken under it
	spill := cs.takeHeld(func(h *heldRetry) bool {
		return h.dv.s == s && h.spill > 0 && h.failures == 0 && !fits(h.due.Sub(now))
	})
	for _, h := range spill {
		// Counted in releasing until its copy is written (sendCopy
		// counts it from there), so that Close waits for it.
		stopped := h.timer.Stop()
		if !h.claim() {
			if stopped {
				cs.releasing.Done()
			}
			continue // its timer won: it is being published to its queue
		}
		rest := max(h.due.Sub(now), 0)
		rung := cs.rungNames.of(cs.queue, h.spill)
		r := &heldRetry{dv: h.dv, target: rung, msg: h.msg, trace: h.trace}
		r.done = func() {
			cs.metrics.Add(cs.metrics.RetrySpilled, cs.queue)
			cs.rungFound(rung)
		}
		r.unroutable = func() {
			cs.rungMissing(rung)
			cs.hold(&heldRetry{dv: h.dv, target: h.target, msg: h.msg, done: h.done, trace: h.trace}, rest)
		}
		r.publish(context.Background())
		if stopped {
			cs.releasing.Done()
		}
	}
}

// dropHeld forgets the held retries of a dead session: their deliveries
// can no longer be acked, and the broker redelivers them.
func (cs *Consumer) dropHeld(s *session) {
	for _, h := range cs.takeHeld(func(h *heldRetry) bool { return h.dv.s == s }) {
		if h.timer.Stop() {
			cs.releasing.Done()
		}
		h.claim()
	}
}

// waitReleases waits, bounded by ctx, for held retries whose timer had
// already fired and that are being republished, then for every copy
// written and not settled yet (sendCopy), and ends the copies' bound. It
// returns an error wrapping ctx's when ctx ended first.
func (cs *Consumer) waitReleases(ctx context.Context) error {
	done := make(chan struct{})
	go func() { cs.releasing.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("republishing held retries: %w", ctx.Err())
	}
	if n := cs.copies.wait(ctx); n > 0 {
		return fmt.Errorf("copies still waiting for their confirm: %d: %w", n, ctx.Err())
	}
	cs.bounds.release() // no copy waits on it
	return nil
}

// How a delivery whose writer schema could not be looked up (the registry
// did not answer) is held: decoded again after registryWaitMin, doubling to
// registryWaitMax, for at most registryHoldMax; past that it is nacked back
// to its queue (one delivery of a quorum queue's limit spent per
// registryHoldMax of outage) so that no delivery is held near the broker's
// consumer timeout (30 minutes by default).
const (
	registryWaitMin = 500 * time.Millisecond
	registryWaitMax = 30 * time.Second
	registryHoldMax = 10 * time.Minute
)

// RegistryWaits are a consumer's hold bounds; the zero value means the
// defaults above.
type RegistryWaits struct{ Min, Max, Hold time.Duration }

func (w RegistryWaits) orDefaults() RegistryWaits {
	if w.Min <= 0 {
		w = RegistryWaits{Min: registryWaitMin, Max: registryWaitMax, Hold: registryHoldMax}
	}
	return w
}

// heldLookup is a delivery waiting for the schema registry. It keeps its
// prefetch slot; the worker that met the outage is free.
type heldLookup struct {
	dv    *delivery     // its next run (dv.lookup is this hold)
	since time.Time     // the first failure
	wait  time.Duration // the last wait
	timer *time.Timer
	once  sync.Once
}

func (h *heldLookup) claim() bool {
	won := false
	h.once.Do(func() { won = true })
	return won
}

// holdForRegistry counts the outage and holds dv (again, when it came
// back from a hold) until the next try, or returns it to its queue once it
// has been held registryHoldMax.
func (dv *delivery) holdForRegistry(err error) {
	dv.heldForRegistry()
	cs := dv.cs
	waits := cs.cfg.RegistryWaits.orDefaults()
	next := &delivery{cs: cs, s: dv.s, d: dv.d, received: dv.received}
	h := &heldLookup{dv: next, since: time.Now(), wait: waits.Min}
	next.lookup = h
	if prev := dv.lookup; prev != nil {
		h.since, h.wait = prev.since, min(prev.wait*2, waits.Max)
	}
	if time.Since(h.since) >= waits.Hold {
		cs.log.Warn("acemq: the schema registry is still unavailable; returning the message to its queue",
			"err", err, "id", dv.d.MessageId, "held", time.Since(h.since).Round(time.Second))
		dv.nackBack()
		return
	}
	if cs.registryDown.CompareAndSwap(false, true) {
		cs.log.Warn("acemq: the schema registry is unavailable; holding messages until it answers",
			"err", err, "id", dv.d.MessageId, "next_in", h.wait)
	} else {
		cs.log.Debug("acemq: the schema registry is still unavailable", "err", err, "id", dv.d.MessageId, "next_in", h.wait)
	}
	cs.holdLookup(h)
}

// holdLookup keeps h until its wait is over, then processes its delivery
// again in a handler's slot; when the consumer is closing, it returns the
// delivery to its queue instead.
func (cs *Consumer) holdLookup(h *heldLookup) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closing {
		h.dv.nackBack()
		return
	}
	cs.lookups[h] = struct{}{}
	// Close waits (waitReleases) for a hold whose timer fired and whose
	// delivery is being decoded and handled again.
	cs.releasing.Add(1)
	h.timer = time.AfterFunc(h.wait, func() {
		defer cs.releasing.Done()
		if !h.claim() {
			return
		}
		cs.mu.Lock()
		delete(cs.lookups, h)
		closing := cs.closing
		cs.mu.Unlock()
		if closing {
			h.dv.nackBack()
			return
		}
		cs.slots <- struct{}{}
		defer func() { <-cs.slots }()
		h.dv.process()
	})
}

// registryBack notes that a held delivery decoded: the registry answers.
func (cs *Consumer) registryBack() {
	if cs.registryDown.CompareAndSwap(true, false) {
		cs.log.Info("acemq: the schema registry answers again; held messages are decoded")
	}
}

// nackBack returns dv to the head of its queue now.
func (dv *delivery) nackBack() {
	dv.nack("acemq: nack failed; the broker will redeliver")
}

func (cs *Consumer) takeLookups(match func(*heldLookup) bool) []*heldLookup {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var out []*heldLookup
	for h := range cs.lookups {
		if match(h) && h.claim() {
			if h.timer.Stop() {
				cs.releasing.Done() // its callback will not run
			}
			out = append(out, h)
		}
		if match(h) {
			delete(cs.lookups, h)
		}
	}
	return out
}

// returnLookups nacks every held lookup back to its queue (Close).
func (cs *Consumer) returnLookups() {
	for _, h := range cs.takeLookups(func(*heldLookup) bool { return true }) {
		h.dv.nackBack()
	}
}

// dropLookups forgets the held lookups of a dead session: the broker
// redelivers their messages.
func (cs *Consumer) dropLookups(s *session) {
	cs.takeLookups(func(h *heldLookup) bool { return h.dv.s == s })
}
