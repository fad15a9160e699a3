package consume

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
)

// session is one subscription on one channel. Its deliveries can only be
// settled on that channel.
type session struct {
	ch         *amqp.Channel
	conn       *amqp.Connection
	tag        string
	deliveries <-chan amqp.Delivery
	// closed is closed by amqp091-go when the channel closes.
	closed <-chan *amqp.Error
	// dead is set (under Consumer.mu) the moment the session is known to
	// have died: nothing it handles is set aside or settled any more, and
	// its held retries are dropped (the broker redelivers them).
	dead atomic.Bool
	// lost is the error its channel was closed with, set before gone is
	// closed (by watch, the one reader of closed); began is when it
	// subscribed (framefail.go).
	lost  atomic.Pointer[amqp.Error]
	gone  chan struct{}
	began time.Time

	mu sync.Mutex
	// taken is when the consumer took each unsettled delivery: a copy that
	// cannot be published holds its delivery only inside the broker's
	// consumer timeout. Its lowest tag bounds a multiple ack (ackbatch.go).
	taken map[uint64]time.Time
	// budgeted are the deliveries held in memory in the hold budget's
	// slots rather than the handlers' (WithHoldBudget).
	budgeted map[uint64]struct{}
	// copying are the deliveries whose copy is written and not confirmed
	// yet (ackslack.go); rate is how fast the session takes deliveries.
	copying map[uint64]struct{}
	rate    deliveryRate
	acks    ackBatch
	// cork is the connection's socket (nil on TLS): a flush of several
	// acks is written in one go (ackbatch.go).
	cork *amqpx.CorkConn
	log  *slog.Logger // the consumer's
}

// watch waits for s's channel to close, keeps the error it closed with
// and closes s.gone; while serving (watched not closed yet) it marks s
// dead at once, even while every worker is busy.
func (cs *Consumer) watch(s *session, watched <-chan struct{}) {
	if e := <-s.closed; e != nil {
		s.lost.Store(e)
	}
	close(s.gone)
	select {
	case <-watched:
	default:
		cs.sessionDied(s)
	}
}

// lostErr is the error s's channel was closed with: nil when it is open
// (the broker cancelled the subscription) or closed cleanly. For a closed
// one it waits, within a bound, for watch to have seen amqp091-go's
// error.
func (s *session) lostErr() *amqp.Error {
	if !s.ch.IsClosed() {
		return nil
	}
	select {
	case <-s.gone:
	case <-time.After(5 * time.Second):
	}
	return s.lost.Load()
}

// takenAt is when the consumer took the delivery tag (now if unknown).
func (s *session) takenAt(tag uint64) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.taken[tag]; ok {
		return t
	}
	return time.Now()
}

// settled forgets the delivery tag: acked or nacked. Its budget slot, if
// it held one, is free again.
func (s *session) settled(tag uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.taken, tag)
	delete(s.budgeted, tag)
	delete(s.copying, tag)
}

// reserveHold moves the delivery tag, to be held for wait, into one of
// the hold budget's slots, reporting false when all budget of them are
// taken, or, with an ack slack, when the deliveries the session takes
// during the wait would not fit in it (ackslack.go).
func (s *session) reserveHold(tag uint64, budget int, wait time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.budgeted) >= budget || s.acks.slack > 0 && !s.rate.fits(time.Now(), wait, s.acks.slack) {
		return false
	}
	if s.budgeted == nil {
		s.budgeted = map[uint64]struct{}{}
	}
	s.budgeted[tag] = struct{}{}
	return true
}

// subscribe opens the consumer's channel and subscribes, each round trip
// within ctx (roundtrip.go).
func (cs *Consumer) subscribe(ctx context.Context) (*session, error) {
	cc, conn, err := cs.openChannel(ctx)
	if err != nil {
		return nil, err
	}
	if !cs.cfg.NoDeclare {
		if cc, conn, err = cs.declareSetAside(ctx, cc, conn); err != nil {
			return nil, err
		}
	}
	tag := "acemq-" + cs.queue + "-" + core.NewID()[24:]
	// Before the subscription: a first delivery the client cannot read
	// closes the connection at once, and a listener added after that
	// would only see the channel closed, not why.
	closed := cc.Ch.NotifyClose(make(chan *amqp.Error, 1))
	deliveries, err := amqpx.RoundTrip(ctx, cc, "basic.consume", func(ch *amqp.Channel) (<-chan amqp.Delivery, error) {
		return ch.Consume(cs.queue, tag, false, false, false, false, nil)
	})
	if err != nil {
		cc.Close(ctx)
		if amqpx.IsNotFound(err) {
			err = fmt.Errorf("%w: %w (declare the topology first)", core.ErrQueueNotFound, err)
		}
		return nil, fmt.Errorf("consume %q: %w", cs.queue, err)
	}
	return &session{ch: cc.Ch, conn: conn, tag: tag, deliveries: deliveries, began: time.Now(), gone: make(chan struct{}),
		closed: closed, acks: newAckBatch(cs.cfg), cork: cs.conn.CorkOf(conn), log: cs.log}, nil
}

// openChannel opens a channel for a subscription, with its prefetch, hold
// budget and ack slack (basic.qos).
func (cs *Consumer) openChannel(ctx context.Context) (*amqpx.CallChannel, *amqp.Connection, error) {
	ch, conn, err := cs.channelOn(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("consume %q: %w", cs.queue, err)
	}
	cc := cs.callOn(ch)
	if err := cc.Do(ctx, "basic.qos", func(ch *amqp.Channel) error { return ch.Qos(cs.cfg.Qos(), 0, false) }); err != nil {
		cc.Close(ctx)
		return nil, nil, fmt.Errorf("consume %q: prefetch: %w", cs.queue, err)
	}
	return cc, conn, nil
}

// declareSetAside declares q.dlq and q.parked on cc. A declare that fails
// closes the channel: the subscription goes on on a new one, which it
// returns.
func (cs *Consumer) declareSetAside(ctx context.Context, cc *amqpx.CallChannel, conn *amqp.Connection) (*amqpx.CallChannel, *amqp.Connection, error) {
	for _, q := range []string{wire.DeadLetterQueue(cs.queue), wire.ParkedQueue(cs.queue)} {
		_, err := amqpx.RoundTrip(ctx, cc, "queue.declare", func(ch *amqp.Channel) (amqp.Queue, error) {
			return ch.QueueDeclare(q, true, false, false, false, nil)
		})
		if err == nil {
			continue
		}
		cc.Close(ctx)
		if !setAsideQueueThere(err) {
			return nil, nil, fmt.Errorf("consume %q: %w", cs.queue, amqpx.DeclareErrorOf("queue", q, err))
		}
		// q exists but is down (a classic queue whose cluster node is
		// stopped) or declared otherwise (an operator's quorum q.dlq):
		// subscribe anyway; a copy it cannot take is held and tried
		// again until it can.
		cs.log.Warn("acemq: could not declare a set-aside queue; consuming anyway (copies into it are held until it takes them)", "set_aside_queue", q, "err", err)
		if cc, conn, err = cs.openChannel(ctx); err != nil {
			return nil, nil, err
		}
	}
	return cc, conn, nil
}

// setAsideQueueThere reports a declare of q.dlq or q.parked that failed
// although the queue exists: its process is down (404 on a queue whose
// node is stopped) or it was declared with other arguments (406).
func setAsideQueueThere(err error) bool {
	var ae *amqp.Error
	if !errors.As(err, &ae) {
		return false
	}
	return ae.Code == amqp.PreconditionFailed ||
		ae.Code == amqp.NotFound && (strings.Contains(ae.Reason, "stopped") || strings.Contains(ae.Reason, "down"))
}

// run serves sessions until Close, resubscribing after a lost channel.
func (cs *Consumer) run(s *session) {
	defer close(cs.stopped)
	for {
		cs.serve(s)
		if cs.isClosing() {
			return
		}
		hold := cs.frameFailed(s)
		// The subscription ended under us (connection lost, or the broker
		// cancelled it: queue deleted, node failover). The session is dead:
		// its held retries are dropped and its channel closed, so the
		// broker redelivers their messages instead of stranding them. Its
		// handlers still running finish in the background; what they
		// decide is discarded. The next session starts at once. Acks
		// already decided go out first if the channel is still open (a
		// subscription the broker cancelled).
		cancelled := !s.ch.IsClosed()
		if cancelled {
			s.flushAcks(flushAll)
		}
		cs.sessionDied(s)
		cs.closeChannel(s)
		cs.logLostSession(s, cancelled)
		cs.stats.resubscribing(errLostChannel)
		if s = cs.resubscribe(hold); s == nil {
			return
		}
		cs.stats.resubscribed()
	}
}

// sessionDied marks s dead and drops its held retries, at once.
func (cs *Consumer) sessionDied(s *session) {
	cs.mu.Lock()
	s.dead.Store(true)
	cs.mu.Unlock()
	cs.dropHeld(s)
	cs.dropLookups(s)
}

// closeChannel closes a dead session's channel in the background: the
// close is a round trip, and a broker that does not answer it holds up
// neither the next subscription nor the connection (it ends when the
// broker answers or the connection does).
func (cs *Consumer) closeChannel(s *session) { go amqpx.CloseQuietly(s.ch) }

// backoff is wait jittered down to between half and all of it, so that the
// consumers of a fleet do not reconnect in step.
func backoff(wait time.Duration) time.Duration {
	if wait <= 1 {
		return wait
	}
	return wait/2 + rand.N(wait/2+1)
}

// resubscribe subscribes again, with backoff, after hold (the wait a
// consumer whose connection keeps dying on frame errors is given, during
// which another call's reconnect does not wake it).
func (cs *Consumer) resubscribe(hold time.Duration) *session {
	wait := cs.cfg.ReconnectMin
	next := backoff(wait)
	if hold > 0 {
		next = hold
	}
	for {
		up := cs.conn.UpSignal()
		if hold > 0 {
			up, hold = nil, 0
		}
		select {
		case <-time.After(next):
		case <-up:
			// Another call of the connection reconnected: try now.
		case <-cs.quit:
			return nil
		}
		if cs.isClosing() {
			return nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		s, err := cs.subscribe(ctx)
		cancel()
		if err == nil {
			return cs.adopt(s)
		}
		if errors.Is(err, errConsumerClosing) {
			return nil
		}
		if errors.Is(err, core.ErrClosed) {
			cs.stats.stop(fmt.Errorf("consumer %q stopped: %w", cs.queue, err))
			return nil
		}
		cs.stats.resubscribing(err)
		wait = min(wait*2, cs.cfg.ReconnectMax)
		next = backoff(wait)
		cs.log.Warn("acemq: resubscribe failed", "err", err, "next_in", next)
	}
}

// adopt makes s the consumer's session and returns it, unless Close began
// meanwhile: then s's channel is closed and adopt returns nil.
func (cs *Consumer) adopt(s *session) *session {
	cs.mu.Lock()
	if cs.closing {
		cs.mu.Unlock()
		go amqpx.CloseQuietly(s.ch)
		return nil
	}
	cs.sess = s
	cs.mu.Unlock()
	cs.log.Info("acemq: consumer resubscribed")
	return s
}
