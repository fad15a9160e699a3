package consume

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/obs"
)

// The states of a Consumer (ConsumerStats.State).
const (
	ConsumerConsuming     = "consuming"
	ConsumerResubscribing = "resubscribing" // its channel was lost; it subscribes again with backoff
	ConsumerStopped       = "stopped"       // Close was called, or its connection was closed
	// ConsumerFailing: its connection was closed on a frame the client
	// cannot read (a message's header table) in the last two minutes; it
	// consumes on a connection of its own and backs off.
	ConsumerFailing = "failing"
)

var errLostChannel = errors.New("the consumer lost its channel")

// ConsumerStats is what a consumer has done since it started, for health
// checks and dashboards (Consumer.Stats).
type ConsumerStats struct {
	Queue string `json:"queue"`
	// State is consuming, resubscribing or stopped.
	State string `json:"state"`
	// LastError is why the consumer resubscribes, or why it stopped.
	LastError string `json:"last_error,omitempty"`
	// InFlight is the deliveries its handlers (or decoders) are working on.
	InFlight int `json:"in_flight"`
	// Held is the deliveries it holds unsettled with the worker free:
	// retries waiting in memory, copies tried again, registry waits, and
	// deliveries whose copy (a retry, a dead letter, a park) waits for the
	// broker's confirm.
	Held int `json:"held"`
	// Handled counts settled deliveries by outcome: accepted, retried,
	// rejected, parked, gave_up_attempts (the policy's attempts ran out:
	// "gave up after N attempts"), gave_up_too_old (older than GiveUpAfter:
	// "gave up after N attempts (older than D)"), undecodable (the
	// acemq.outcome values); every outcome is present, 0 or more.
	Handled map[string]int64 `json:"handled"`
	// FrameErrors counts the times its connection was closed on a frame
	// the client cannot read (acemq.consumer.frame_errors).
	FrameErrors int `json:"frame_errors,omitempty"`
	// LastDelivery is when the consumer last took a delivery (zero if
	// never).
	LastDelivery time.Time `json:"last_delivery_at,omitzero"`
}

// consumerCounters are the atomics behind Stats.
type consumerCounters struct {
	inFlight     atomic.Int64
	outcomes     [obs.NumOutcomes]atomic.Int64
	lastDelivery atomic.Int64 // unix nanoseconds; 0 before the first

	mu      sync.Mutex
	resub   bool
	lastErr error
	stopErr error // why the consumer stopped for good, not by Close
	// frame errors: in a row, in all, the last one and when (framefail.go)
	frameFails, frameTotal int
	frameErr               error
	frameAt                time.Time
}

func (c *consumerCounters) resubscribing(err error) {
	c.mu.Lock()
	c.resub, c.lastErr = true, err
	c.mu.Unlock()
}

func (c *consumerCounters) resubscribed() {
	c.mu.Lock()
	c.resub, c.lastErr = false, nil
	c.mu.Unlock()
}

func (c *consumerCounters) stop(err error) {
	c.mu.Lock()
	c.stopErr, c.lastErr = err, err
	c.mu.Unlock()
}

// Done is closed when the consumer has stopped for good: after Close, or
// once its connection was closed while it was resubscribing. Err says why.
func (cs *Consumer) Done() <-chan struct{} { return cs.stopped }

// Err is nil while the consumer runs and after Close; once it stopped for
// another reason (its connection closed under it) it is that reason,
// matching ErrClosed.
func (cs *Consumer) Err() error {
	cs.stats.mu.Lock()
	defer cs.stats.mu.Unlock()
	return cs.stats.stopErr
}

// Stats is a snapshot of what the consumer holds and has handled.
func (cs *Consumer) Stats() ConsumerStats {
	st := ConsumerStats{Queue: cs.queue, InFlight: int(cs.stats.inFlight.Load()), Handled: make(map[string]int64, obs.NumOutcomes)}
	for o := range obs.NumOutcomes {
		st.Handled[o.String()] = cs.stats.outcomes[o].Load()
	}
	if ns := cs.stats.lastDelivery.Load(); ns != 0 {
		st.LastDelivery = time.Unix(0, ns)
	}
	st.State = ConsumerConsuming
	cs.stats.mu.Lock()
	if cs.stats.resub {
		st.State = ConsumerResubscribing
	}
	if cs.stats.lastErr != nil {
		st.LastError = cs.stats.lastErr.Error()
	}
	if err := cs.stats.failing(); err != nil {
		st.State, st.LastError = ConsumerFailing, err.Error()
	}
	st.FrameErrors = cs.stats.frameTotal
	cs.stats.mu.Unlock()
	select {
	case <-cs.stopped:
		st.State = ConsumerStopped
	default:
	}
	cs.mu.Lock()
	st.Held = len(cs.held) + len(cs.lookups)
	cs.mu.Unlock()
	st.Held += cs.copies.pending()
	return st
}
