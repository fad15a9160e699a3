package consume

import (
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// The receive stage: the session's serve loop takes each delivery from
// its channel the moment the broker sends it (taken: its tag counted
// unsettled, its time recorded), decodes it ahead when the consumer has
// one worker (decode.go), and queues it for the workers, which run it
// (decode.go's work).

// serve hands the session's deliveries to the workers until the
// subscription ends. It does not wait for the handlers: those of a dead
// session must not hold up the next one.
func (cs *Consumer) serve(s *session) {
	// Buffered to the prefetch (the most the broker sends unacked): a busy
	// worker takes the next delivery without this loop and the worker
	// waking each other for every message. A consumer that decodes ahead
	// of its one worker holds fewer, decoded (decode.go).
	work := make(chan *delivery, cs.workQueue())
	ahead := cs.decodesAhead()
	for range cs.cfg.Concurrency {
		go cs.work(s, work)
	}
	defer close(work)
	// The moment the channel closes the session is dead, even while every
	// worker is busy and the loop below waits for one.
	watched := make(chan struct{})
	defer close(watched)
	go cs.watch(s, watched)
	f := feed{cs: cs, s: s, work: work, ahead: ahead}
	for f.next() {
	}
}

// feed is serve's loop: it takes the session's deliveries and queues them
// for the workers. backlog is what was taken while the work queue was
// full, in order, waiting for room (the head decoded ahead, the others not
// yet). The loop goes on taking deliveries meanwhile, so that each is
// taken, and its time recorded (ReceivedAt, the copies' bound), when the
// broker sends it, not when the deliveries ahead of it are done: it is
// unacknowledged from then on. The broker sends no more than the prefetch
// unacknowledged, so the backlog is bounded by that.
type feed struct {
	cs      *Consumer
	s       *session
	work    chan<- *delivery
	ahead   bool
	backlog []*delivery
}

// next takes one step; false once the session's channel has closed.
func (f *feed) next() bool {
	if len(f.backlog) == 0 {
		return f.takeOne()
	}
	return f.drainOrTake()
}

// takeOne waits for a delivery and queues it, into the backlog when the
// work queue is full.
func (f *feed) takeOne() bool {
	d, ok := <-f.s.deliveries
	if !ok {
		return false
	}
	dv := f.cs.taken(f.s, d)
	if dv == nil {
		return true
	}
	if f.ahead {
		f.cs.decodeAhead(dv)
	}
	select {
	case f.work <- dv:
		// Room in the queue (the usual case): no select over both.
	default:
		f.backlog = append(f.backlog, dv)
	}
	return true
}

// drainOrTake moves the backlog's head to the workers, or takes the next
// delivery into the backlog, whichever comes first.
func (f *feed) drainOrTake() bool {
	cs, s := f.cs, f.s
	select {
	case f.work <- f.backlog[0]:
		f.backlog[0] = nil
		f.backlog = f.backlog[1:]
		if len(f.backlog) == 0 {
			f.backlog = f.backlog[:0:0]
		} else if f.ahead {
			cs.decodeAhead(f.backlog[0])
		}
	case d, ok := <-s.deliveries:
		if !ok {
			// The channel closed: what is left goes to the workers,
			// which leave it unsettled, unless the session is gone
			// first (handOff).
			for _, dv := range f.backlog {
				cs.handOff(s, f.work, dv)
			}
			return false
		}
		if dv := cs.taken(s, d); dv != nil {
			f.backlog = append(f.backlog, dv)
		}
	case <-s.gone:
		for range f.backlog {
			cs.handlers.Done()
		}
		cs.sessionDied(s)
		f.backlog = nil
	}
	return true
}

// taken records d as taken from s's channel: its delivery to handle, or
// nil when it is not handled (the consumer is closing, the session died:
// left unsettled, it returns to the queue when the channel closes).
func (cs *Consumer) taken(s *session, d amqp.Delivery) *delivery {
	// Taken first, even when it is not handled: an unsettled tag bounds
	// every multiple ack.
	at, regate := s.take(d.DeliveryTag)
	if regate {
		cs.respillHeld(s)
	}
	if cs.isClosing() || s.dead.Load() {
		return nil
	}
	cs.handlers.Add(1)
	// Its one allocation: what it is until settled (delivery.go).
	return &delivery{cs: cs, s: s, d: d, received: at}
}

// handOff queues dv for the workers, unless s's channel closes first.
func (cs *Consumer) handOff(s *session, work chan<- *delivery, dv *delivery) {
	select {
	case work <- dv:
		// Room in the queue (the usual case): no select over both.
	default:
		select {
		case work <- dv:
		case <-s.gone:
			cs.handlers.Done()
			cs.sessionDied(s)
		}
	}
}

// take records that the consumer took the delivery tag now, and returns
// when. It reports whether the session's rate was just measured again
// while retries are held in its hold budget's slots with an ack slack:
// those whose wait no longer fits are to be spilled (Consumer.respillHeld).
func (s *session) take(tag uint64) (now time.Time, regate bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.taken == nil {
		s.taken = map[uint64]time.Time{}
	}
	now = time.Now()
	s.taken[tag] = now
	measured := s.rate.took(now, s.acks.slack)
	regate = measured && s.acks.slack > 0 && len(s.budgeted) > 0
	return now, regate
}
