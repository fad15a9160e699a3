package runtime

import (
	"sync"
	"time"
)

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

// registryWaits are a consumer's hold bounds; the zero value means the
// defaults above.
type registryWaits struct{ min, max, hold time.Duration }

func (w registryWaits) orDefaults() registryWaits {
	if w.min <= 0 {
		w = registryWaits{min: registryWaitMin, max: registryWaitMax, hold: registryHoldMax}
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
	waits := cs.cfg.registryWaits.orDefaults()
	next := &delivery{cs: cs, s: dv.s, d: dv.d}
	h := &heldLookup{dv: next, since: time.Now(), wait: waits.min}
	next.lookup = h
	if prev := dv.lookup; prev != nil {
		h.since, h.wait = prev.since, min(prev.wait*2, waits.max)
	}
	if time.Since(h.since) >= waits.hold {
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
