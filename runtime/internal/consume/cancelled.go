package consume

import "time"

// A subscription can end under the consumer two ways: its channel (or
// connection) closes, or the broker cancels it (basic.cancel) and the
// channel stays open. RabbitMQ 4.3 cancels a quorum queue's consumer that
// held a delivery longer than the queue's consumer timeout
// (x-consumer-timeout, a consumer-timeout policy, else consumer_timeout,
// 30 minutes by default) instead of closing its channel, and returns the
// delivery to the queue without counting it; it also cancels when the
// queue is deleted or its leader moves. Either way the session is dead:
// its channel is closed (what it held goes back to the queue), what its
// handlers decide afterwards is discarded, and the consumer resubscribes,
// so a delivery held past the timeout is redelivered and handled again.

// logLostSession logs how s ended: cancelled by the broker (the channel
// still open), with how long the oldest delivery it held had been held,
// or its channel lost.
func (cs *Consumer) logLostSession(s *session, cancelled bool) {
	if !cancelled {
		cs.log.Warn("acemq: consumer lost its channel; resubscribing", "err", s.lost.Load())
		return
	}
	cs.log.Warn("acemq: the broker cancelled the subscription; resubscribing (on a quorum queue, RabbitMQ 4.3 cancels a consumer that held a delivery past the queue's consumer timeout, x-consumer-timeout or a consumer-timeout policy; the delivery is redelivered; a deleted queue or a leader that moved cancels too)",
		"held_longest", s.heldLongest().Round(time.Millisecond))
}

// heldLongest is how long the oldest delivery s still holds unsettled has
// been held (0 when none).
func (s *session) heldLongest() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var oldest time.Time
	for _, at := range s.taken {
		if oldest.IsZero() || at.Before(oldest) {
			oldest = at
		}
	}
	if oldest.IsZero() {
		return 0
	}
	return time.Since(oldest)
}
