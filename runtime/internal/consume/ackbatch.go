package consume

import (
	"math"
	"slices"
	"sync"
	"time"
)

// Acks are batched per session: a delivery whose outcome is settled (an
// Accept, or a copy the broker confirmed) is acked later, together with
// the others, by one basic.ack with multiple=true on the highest tag of a
// run that no unsettled delivery interrupts. Such an ack covers every
// outstanding tag up to it, so it is only ever sent on a tag below the
// lowest delivery still unsettled (handled, held for a retry or the
// registry, or a copy not confirmed yet): rule 1 holds, no delivery is
// acked before it is settled. Settled tags above an unsettled one wait
// for it, up to ackStuck, and are then acked one by one; sooner when too
// many wait, and at Close.
//
// Acks and nacks of a session go out under one lock, in the order they
// were decided: a multiple ack never overtakes the nack of a tag below it.
//
// A batch lost with its process (a crash) makes its deliveries come again
// as redelivered, which the redelivery limit counts. So a redelivered
// delivery (perhaps the message that crashed the process) flushes the
// batch before its handler runs, and its own ack is sent at once: batching
// adds at most one redelivery to a delivery that was settled.
const (
	// ackDelay bounds how long a settled delivery waits for its ack.
	ackDelay = 5 * time.Millisecond
	// ackBatchMax is the most acks one flush waits for (the raw
	// baseline's 64).
	ackBatchMax = 64
)

// ackBatch is a session's acks not sent yet; ready and armed are guarded
// by session.mu.
type ackBatch struct {
	// wire serialises the session's acks and nacks on the channel.
	wire sync.Mutex
	// ready are settled tags not acked yet, in the order they settled.
	ready []uint64
	size  int           // flush at this many ready tags
	delay time.Duration // and this long after the first
	timer *time.Timer
	armed bool
	// restSince is when settled tags first waited above an unsettled
	// one (zero while none does).
	restSince time.Time
	// slack is the ack slack (ackslack.go); waiting the ready tags held
	// in it at the last flush, slackLow the copy they waited behind since
	// slackSince.
	slack      int
	slackWait  time.Duration
	waiting    int
	slackLow   uint64
	slackSince time.Time
	sent       func(tag uint64, multiple bool) // a test hook; may be nil
}

// newAckBatch is the batch of a session of a consumer with cfg.
func newAckBatch(cfg Config) ackBatch {
	d := cfg.AckDelay
	if d <= 0 {
		d = ackDelay
	}
	w := cfg.AckSlackWait
	if w <= 0 {
		w = ackSlackWait
	}
	return ackBatch{size: ackBatchSize(cfg.Prefetch), delay: d, slack: cfg.AckSlack, slackWait: w, sent: cfg.AckSent}
}

// ackBatchSize is the flush size for a prefetch: a quarter of the window,
// at most ackBatchMax; 1 (each ack at once) for a prefetch under 4.
func ackBatchSize(prefetch int) int {
	return max(1, min(prefetch/4, ackBatchMax))
}

// ack acks the settled tag, now or in the session's next batch; a
// redelivered one at once (with the batch), so that a delivery that has
// shared crashes already is not counted in one more.
func (s *session) ack(tag uint64, redelivered bool) {
	s.mu.Lock()
	delete(s.taken, tag)
	delete(s.budgeted, tag) // as settled does
	_, copied := s.copying[tag]
	delete(s.copying, tag)
	s.acks.ready = append(s.acks.ready, tag)
	// Those waiting in the slack do not make a batch full; the copy they
	// wait behind, confirmed, flushes them at once.
	full := len(s.acks.ready)-s.acks.waiting >= s.acks.size || redelivered || copied && s.acks.waiting > 0
	if !full {
		s.armAcks()
	}
	s.mu.Unlock()
	if full {
		mode := flushFull
		if redelivered {
			mode = flushAll
		}
		s.flushAcks(mode)
	}
}

// armAcks starts the batch's timer unless it is running; s.mu is held.
func (s *session) armAcks() {
	if s.acks.armed {
		return
	}
	s.acks.armed = true
	if s.acks.timer == nil {
		s.acks.timer = time.AfterFunc(s.acks.delay, s.ackTimer)
	} else {
		s.acks.timer.Reset(s.acks.delay)
	}
}

func (s *session) ackTimer() {
	s.mu.Lock()
	s.acks.armed = false
	s.mu.Unlock()
	s.flushAcks(flushTimer)
}

// How a flush treats settled tags above the lowest unsettled one, which
// no multiple ack may cover.
type flushMode uint8

const (
	// flushFull acks them one by one only when a full batch of them waits.
	flushFull flushMode = iota
	// flushTimer does as flushFull, and also once they have waited
	// ackStuck; otherwise it arms the timer again.
	flushTimer
	// flushAll acks every one of them now (Close, a redelivered delivery,
	// the end of the session).
	flushAll
)

// ackStuck is how long settled deliveries above an unsettled one (a copy
// waiting for its confirm, a handler still running) wait for it, so that
// one multiple ack covers them all when it settles, before they are acked
// one by one. A broker walks its list of a channel's unacked deliveries
// for each single ack, past every older one still unacked: a single ack
// costs it more the more deliveries are held (bench/NOTES.md, R1).
const ackStuck = 50 * time.Millisecond

// flushAcks sends the session's ready acks: one multiple ack for those
// below the lowest unsettled tag, and, as mode says, each of the others on
// its own.
func (s *session) flushAcks(mode flushMode) {
	s.acks.wire.Lock()
	defer s.acks.wire.Unlock()
	upTo, below, each := s.readyAcks(mode)
	if s.cork != nil && len(each)+min(below, 1) > 1 {
		// Several basic.ack frames: amqp091-go writes each on its own,
		// a write system call per ack; corked, they go in one write
		// (corkconn.go). An ack is only ever of a settled delivery, so a
		// write that fails loses acks, never a message: the socket is
		// closed and the broker redelivers what it did not see acked.
		s.cork.Cork()
		defer s.cork.Uncork()
	}
	if below > 0 {
		s.acks.sentHook(upTo, below > 1)
		if err := s.ch.Ack(upTo, below > 1); err != nil {
			s.log.Warn("acemq: ack failed; the broker will redeliver", "err", err, "delivery_tag", upTo, "acks", below)
			return
		}
	}
	for _, tag := range each {
		s.acks.sentHook(tag, false)
		if err := s.ch.Ack(tag, false); err != nil {
			s.log.Warn("acemq: ack failed; the broker will redeliver", "err", err, "delivery_tag", tag)
			return
		}
	}
}

// sentHook tells the test hook, if any, of an ack about to be sent.
func (b *ackBatch) sentHook(tag uint64, multiple bool) {
	if b.sent != nil {
		b.sent(tag, multiple)
	}
}

// readyAcks takes the ready tags a flush acks now: the below of them under
// the lowest unsettled tag, acked by one ack up to upTo (multiple when
// below > 1), and, as mode says, each of the others on its own; the rest
// wait. A dead session's are dropped: its channel is gone, and the broker
// redelivers what it did not see acked.
func (s *session) readyAcks(mode flushMode) (upTo uint64, below int, each []uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead.Load() {
		s.acks.ready = s.acks.ready[:0]
		return 0, 0, nil
	}
	low := uint64(math.MaxUint64)
	for tag := range s.taken {
		low = min(low, tag)
	}
	rest := s.acks.ready[:0]
	for _, tag := range s.acks.ready {
		if tag < low {
			upTo = max(upTo, tag)
			below++
		} else {
			rest = append(rest, tag)
		}
	}
	each, s.acks.ready = s.aboveUnsettled(rest, low, mode)
	return upTo, below, each
}

// aboveUnsettled splits rest, the ready tags above low, the lowest
// unsettled one, into those acked one by one now (mode flushAll, a full
// batch of them, or under flushTimer once they have waited ackStuck) and
// those that wait, the timer armed to look again; behind a copy in flight
// they wait in the ack slack instead, if there is one (ackslack.go); s.mu
// is held.
func (s *session) aboveUnsettled(rest []uint64, low uint64, mode flushMode) (each, wait []uint64) {
	s.acks.waiting = 0
	if len(rest) == 0 {
		s.acks.restSince = time.Time{}
		return nil, rest
	}
	if s.slackHolds(low, len(rest), mode) {
		s.acks.waiting = len(rest)
		s.armAcks()
		return nil, rest
	}
	if s.acks.restSince.IsZero() {
		s.acks.restSince = time.Now()
	}
	if mode == flushAll || len(rest) >= s.acks.size || mode == flushTimer && time.Since(s.acks.restSince) >= ackStuck {
		s.acks.restSince = time.Time{}
		return slices.Clone(rest), rest[:0]
	}
	// They wait for the tag below them: look again later.
	s.armAcks()
	return nil, rest
}

// nackTag forgets the tag and nacks it back to its queue, in order with
// the session's acks: "not processed, give it back" (a quorum queue on
// RabbitMQ 4.3 does not count it against its delivery limit; 3.10 and 4.0
// count every return).
func (s *session) nackTag(tag uint64) error {
	s.acks.wire.Lock()
	defer s.acks.wire.Unlock()
	s.settled(tag)
	return s.ch.Nack(tag, false, true)
}

// giveBackUnstarted nacks back, not processed, every delivery of the
// session that is not settled yet: at the end of Close, once every
// handler has finished and every copy is confirmed and acked, those are
// the deliveries prefetched but never started. Closing the channel would
// put them back too, but on RabbitMQ 4.3 a quorum queue counts a closed
// channel's deliveries as failed, and a nack as not.
func (s *session) giveBackUnstarted() {
	s.acks.wire.Lock()
	defer s.acks.wire.Unlock()
	if s.dead.Load() {
		return
	}
	if err := s.ch.Nack(0, true, true); err != nil {
		s.log.Debug("acemq: nack of the deliveries not started", "err", err)
	}
}

// rejectTag forgets the tag and rejects it back to its queue (requeue), in
// order with the session's acks: "processing failed" (every RabbitMQ's
// quorum queue counts it, 4.3 included).
func (s *session) rejectTag(tag uint64) error {
	s.acks.wire.Lock()
	defer s.acks.wire.Unlock()
	s.settled(tag)
	return s.ch.Reject(tag, true)
}
