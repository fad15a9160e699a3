package runtime

import (
	"sync/atomic"
	"time"
)

// ConsumerStats is what a consumer has done since it started, for health
// checks and dashboards (Consumer.Stats).
type ConsumerStats struct {
	Queue string `json:"queue"`
	// InFlight is the deliveries its handlers (or decoders) are working on.
	InFlight int `json:"in_flight"`
	// Held is the deliveries it holds unsettled with the worker free:
	// retries waiting in memory, copies tried again, registry waits.
	Held int `json:"held"`
	// Handled counts settled deliveries by outcome: accepted, retried,
	// rejected, parked, dead_lettered, gave_up, undecodable (the
	// acemq.outcome values); every outcome is present, 0 or more.
	Handled map[string]int64 `json:"handled"`
	// LastDelivery is when the consumer last took a delivery (zero if
	// never).
	LastDelivery time.Time `json:"last_delivery_at,omitzero"`
}

// consumerCounters are the atomics behind Stats.
type consumerCounters struct {
	inFlight     atomic.Int64
	outcomes     [numOutcomes]atomic.Int64
	lastDelivery atomic.Int64 // unix nanoseconds; 0 before the first
}

// Stats is a snapshot of what the consumer holds and has handled.
func (cs *Consumer) Stats() ConsumerStats {
	st := ConsumerStats{Queue: cs.queue, InFlight: int(cs.stats.inFlight.Load()), Handled: make(map[string]int64, numOutcomes)}
	for o := range numOutcomes {
		st.Handled[o.String()] = cs.stats.outcomes[o].Load()
	}
	if ns := cs.stats.lastDelivery.Load(); ns != 0 {
		st.LastDelivery = time.Unix(0, ns)
	}
	cs.mu.Lock()
	st.Held = len(cs.held) + len(cs.lookups)
	cs.mu.Unlock()
	return st
}

// trackedConsumers are the connection's consumers not yet closed.
func (c *Connection) trackedConsumers() []*Consumer {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*Consumer, 0, len(c.consumers))
	for cs := range c.consumers {
		out = append(out, cs)
	}
	return out
}
