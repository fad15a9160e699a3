package runtime

import (
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
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
	s     *session
	d     amqp.Delivery
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

// holdForRegistry counts the outage and holds d (again, when h is the hold
// it came back from) until the next try, or returns it to its queue once it
// has been held registryHoldMax.
func (cs *Consumer) holdForRegistry(s *session, d amqp.Delivery, prev *heldLookup, err error) {
	cs.c.metrics.add(cs.c.metrics.registryUnavail, cs.queue)
	waits := cs.cfg.registryWaits.orDefaults()
	h := &heldLookup{s: s, d: d, since: time.Now(), wait: waits.min}
	if prev != nil {
		h.since, h.wait = prev.since, min(prev.wait*2, waits.max)
	}
	if time.Since(h.since) >= waits.hold {
		cs.log.Warn("acemq: the schema registry is still unavailable; returning the message to its queue",
			"err", err, "id", d.MessageId, "held", time.Since(h.since).Round(time.Second))
		cs.nackBack(s, d)
		return
	}
	if cs.registryDown.CompareAndSwap(false, true) {
		cs.log.Warn("acemq: the schema registry is unavailable; holding messages until it answers",
			"err", err, "id", d.MessageId, "next_in", h.wait)
	} else {
		cs.log.Debug("acemq: the schema registry is still unavailable", "err", err, "id", d.MessageId, "next_in", h.wait)
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closing {
		cs.nackBack(s, d)
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
			cs.nackBack(h.s, h.d)
			return
		}
		cs.slots <- struct{}{}
		defer func() { <-cs.slots }()
		cs.process(h.s, h.d, h)
	})
}

// registryBack notes that a held delivery decoded: the registry answers.
func (cs *Consumer) registryBack() {
	if cs.registryDown.CompareAndSwap(true, false) {
		cs.log.Info("acemq: the schema registry answers again; held messages are decoded")
	}
}

// nackBack returns d to the head of its queue now.
func (cs *Consumer) nackBack(s *session, d amqp.Delivery) {
	if err := s.nackTag(d.DeliveryTag); err != nil {
		cs.log.Warn("acemq: nack failed; the broker will redeliver", "err", err, "id", d.MessageId)
	}
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
		cs.nackBack(h.s, h.d)
	}
}

// dropLookups forgets the held lookups of a dead session: the broker
// redelivers their messages.
func (cs *Consumer) dropLookups(s *session) {
	cs.takeLookups(func(h *heldLookup) bool { return h.s == s })
}
