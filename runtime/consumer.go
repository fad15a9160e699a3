package runtime

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

	amqp "github.com/rabbitmq/amqp091-go"
)

// ConsumerSpec is what generated code knows about a consumer: its queue,
// the manifest's retry policy and its routes.
type ConsumerSpec struct {
	Queue string
	// Retry is the manifest's policy; nil when the manifest names none.
	Retry *RetryPolicy
	// RequeueOnFailure is the manifest's requeue_on_failure.
	RequeueOnFailure bool
	Routes           []Route
}

// Consumer consumes one queue until Close.
type Consumer struct {
	c       *Connection
	queue   string
	routes  map[string]Route
	policy  RetryPolicy
	cfg     consumeConfig
	requeue bool
	// requeues counts requeues where the broker counts none (classic).
	requeues requeueCounts
	log      *slog.Logger
	panics   panicLimiter
	stats    consumerCounters
	// lastType caches the metric options of the type last delivered.
	lastType atomic.Pointer[typeOpts]

	// handlerCtx is what handlers get; it is cancelled when Close's
	// drain deadline passes.
	handlerCtx context.Context
	hardStop   context.CancelFunc

	mu      sync.Mutex
	sess    *session
	closing bool
	held    map[*heldRetry]struct{}
	// lookups are deliveries held until the schema registry answers.
	lookups map[*heldLookup]struct{}
	// slots bounds the handlers running at once (concurrency), the
	// workers' and those of held lookups that come back.
	slots chan struct{}
	// registryDown is set while a lookup has failed and none succeeded
	// since: the outage is logged once, not once per message.
	registryDown atomic.Bool
	// releasing counts held retries being republished right now.
	releasing sync.WaitGroup
	// copies counts copies written and not confirmed (or failed) yet.
	copies copyCount
	// letGo is set once Close stopped waiting for copies (all settled, or
	// its ctx ended): nothing is set aside any more, since what is still
	// unsettled returns to its queue when the channel closes, and a copy
	// written now would be a second one of it (discarded).
	letGo atomic.Bool
	// handlers counts handlers running, of every session: those of a dead
	// session finish in the background while the next session serves.
	handlers sync.WaitGroup
	quit     chan struct{} // closed when Close starts
	stopped  chan struct{} // closed when the run loop has ended
}

// maxQos is the largest prefetch count basic.qos carries (a short).
const maxQos = 65535

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

	mu sync.Mutex
	// taken is when the consumer took each unsettled delivery: a copy that
	// cannot be published holds its delivery only inside the broker's
	// consumer timeout. Its lowest tag bounds a multiple ack (acks.go).
	taken map[uint64]time.Time
	// budgeted are the deliveries held in memory in the hold budget's
	// slots rather than the handlers' (WithHoldBudget).
	budgeted map[uint64]struct{}
	acks     ackBatch
}

// take records that the consumer took the delivery tag now.
func (s *session) take(tag uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.taken == nil {
		s.taken = map[uint64]time.Time{}
	}
	s.taken[tag] = time.Now()
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
}

// reserveHold moves the delivery tag into one of the hold budget's slots,
// reporting false when all budget of them are taken.
func (s *session) reserveHold(tag uint64, budget int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.budgeted) >= budget {
		return false
	}
	if s.budgeted == nil {
		s.budgeted = map[uint64]struct{}{}
	}
	s.budgeted[tag] = struct{}{}
	return true
}

// Consume subscribes to spec.Queue and runs the routes' handlers on what
// arrives, until Close. Before it subscribes it declares q.dlq and q.parked
// (unless WithoutDeclare), so that a give-up never publishes into a queue
// that is not there. The retry policy is the WithRetry option's, else
// spec.Retry, else the connection's, else NoRetry().
//
// ctx bounds the start only (declaring and subscribing); handlers get a
// context carrying ctx's values that is cancelled when Close gives up
// waiting for them.
func Consume(ctx context.Context, c *Connection, spec ConsumerSpec, opts ...ConsumeOption) (*Consumer, error) {
	cfg := consumeConfig{prefetch: 20, concurrency: 1, maxBody: DefaultMaxBodySize,
		setAside: setAsideTiming{backoff: setAsideBackoff, backoffMax: setAsideBackoffMax, hold: setAsideHold}}
	for _, o := range opts {
		o.applyConsume(&cfg)
	}
	if !cfg.holdBudgetSet {
		cfg.holdBudget = defaultHoldBudget(cfg)
	}
	cs := &Consumer{
		c:       c,
		queue:   spec.Queue,
		routes:  map[string]Route{},
		policy:  pickPolicy(cfg.retry, spec.Retry, c.cfg.retry),
		cfg:     cfg,
		requeue: spec.RequeueOnFailure || cfg.requeueOnFailure,
		log:     c.log.With("queue", spec.Queue),
		held:    map[*heldRetry]struct{}{},
		lookups: map[*heldLookup]struct{}{},
		slots:   make(chan struct{}, max(cfg.concurrency, 1)),
		quit:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	if err := cs.validate(spec); err != nil {
		return nil, err
	}
	for _, r := range spec.Routes {
		if err := r.prepare(c); err != nil {
			return nil, fmt.Errorf("consume %q: %w", spec.Queue, err)
		}
		cs.routes[r.typeName] = r
	}
	cs.handlerCtx, cs.hardStop = context.WithCancel(context.WithoutCancel(ctx))
	s, err := cs.subscribe(ctx)
	if err != nil {
		cs.hardStop()
		return nil, err
	}
	cs.sess = s
	if err := c.track(cs); err != nil {
		s.ch.Close()
		cs.hardStop()
		return nil, err
	}
	c.metrics.zeroQueue(spec.Queue)
	go cs.run(s)
	return cs, nil
}

func pickPolicy(option, manifest, conn *RetryPolicy) RetryPolicy {
	for _, p := range []*RetryPolicy{option, manifest, conn} {
		if p != nil {
			return *p
		}
	}
	return NoRetry()
}

func (cs *Consumer) validate(spec ConsumerSpec) error {
	switch {
	case spec.Queue == "":
		return errors.New("consume: no queue named")
	case len(spec.Routes) == 0:
		return fmt.Errorf("consume %q: no routes: pass at least one runtime.Handle", spec.Queue)
	case cs.cfg.prefetch < 1:
		return fmt.Errorf("consume %q: prefetch %d must be at least 1", spec.Queue, cs.cfg.prefetch)
	case cs.cfg.holdBudget < 0:
		return fmt.Errorf("consume %q: hold budget %d must be at least 0", spec.Queue, cs.cfg.holdBudget)
	case cs.cfg.prefetch+cs.cfg.holdBudget > maxQos:
		return fmt.Errorf("consume %q: prefetch %d + hold budget %d is above %d, the most a basic.qos can say", spec.Queue, cs.cfg.prefetch, cs.cfg.holdBudget, maxQos)
	case cs.cfg.concurrency < 1:
		return fmt.Errorf("consume %q: concurrency %d must be at least 1", spec.Queue, cs.cfg.concurrency)
	case cs.cfg.maxBody < 1:
		return fmt.Errorf("consume %q: max body size %d must be at least 1", spec.Queue, cs.cfg.maxBody)
	}
	if err := cs.policy.Validate(); err != nil {
		return fmt.Errorf("consume %q: %w", spec.Queue, err)
	}
	return nil
}

// Queue is the queue the consumer reads.
func (cs *Consumer) Queue() string { return cs.queue }

// Policy is the retry policy the consumer applies.
func (cs *Consumer) Policy() RetryPolicy { return cs.policy }

func (cs *Consumer) subscribe(ctx context.Context) (*session, error) {
	ch, conn, err := cs.c.channelOn(ctx)
	if err != nil {
		return nil, fmt.Errorf("consume %q: %w", cs.queue, err)
	}
	if err := ch.Qos(cs.cfg.prefetch+cs.cfg.holdBudget, 0, false); err != nil {
		ch.Close()
		return nil, fmt.Errorf("consume %q: prefetch: %w", cs.queue, err)
	}
	if !cs.cfg.noDeclare {
		for _, q := range []string{DeadLetterQueue(cs.queue), ParkedQueue(cs.queue)} {
			_, err := ch.QueueDeclare(q, true, false, false, false, nil)
			if err == nil {
				continue
			}
			ch.Close()
			if !setAsideQueueThere(err) {
				return nil, fmt.Errorf("consume %q: %w", cs.queue, declareError("queue", q, err))
			}
			// q exists but is down (a classic queue whose cluster node is
			// stopped) or declared otherwise (an operator's quorum q.dlq):
			// subscribe anyway; a copy it cannot take is held and tried
			// again until it can.
			cs.log.Warn("acemq: could not declare a set-aside queue; consuming anyway (copies into it are held until it takes them)", "set_aside_queue", q, "err", err)
			if ch, conn, err = cs.c.channelOn(ctx); err != nil {
				return nil, fmt.Errorf("consume %q: %w", cs.queue, err)
			}
			if err := ch.Qos(cs.cfg.prefetch+cs.cfg.holdBudget, 0, false); err != nil {
				ch.Close()
				return nil, fmt.Errorf("consume %q: prefetch: %w", cs.queue, err)
			}
		}
	}
	tag := "acemq-" + cs.queue + "-" + newID()[24:]
	deliveries, err := ch.Consume(cs.queue, tag, false, false, false, false, nil)
	if err != nil {
		ch.Close()
		if isNotFound(err) {
			err = fmt.Errorf("%w: %w (declare the topology first)", ErrQueueNotFound, err)
		}
		return nil, fmt.Errorf("consume %q: %w", cs.queue, err)
	}
	return &session{ch: ch, conn: conn, tag: tag, deliveries: deliveries,
		closed: ch.NotifyClose(make(chan *amqp.Error, 1)), acks: newAckBatch(cs.cfg)}, nil
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
		// The subscription ended under us (connection lost, or the broker
		// cancelled it: queue deleted, node failover). The session is dead:
		// its held retries are dropped and its channel closed, so the
		// broker redelivers their messages instead of stranding them. Its
		// handlers still running finish in the background; what they
		// decide is discarded. The next session starts at once. Acks
		// already decided go out first if the channel is still open (a
		// subscription the broker cancelled).
		if !s.ch.IsClosed() {
			cs.flushAcks(s, flushAll)
		}
		cs.sessionDied(s)
		cs.closeChannel(s)
		cs.log.Warn("acemq: consumer lost its channel; resubscribing")
		cs.stats.resubscribing(errLostChannel)
		if s = cs.resubscribe(); s == nil {
			return
		}
		cs.stats.resubscribed()
	}
}

// serve hands the session's deliveries to the workers until the
// subscription ends. It does not wait for the handlers: those of a dead
// session must not hold up the next one.
func (cs *Consumer) serve(s *session) {
	// Buffered to the prefetch (the most the broker sends unacked): a busy
	// worker takes the next delivery without this loop and the worker
	// waking each other for every message.
	work := make(chan amqp.Delivery, cs.cfg.prefetch)
	for range cs.cfg.concurrency {
		go func() {
			for d := range work {
				if cs.isClosing() || s.dead.Load() {
					// Not started: it returns to the queue when the channel closes.
					cs.handlers.Done()
					continue
				}
				cs.slots <- struct{}{}
				cs.handle(s, d)
				<-cs.slots
				cs.handlers.Done()
			}
		}()
	}
	defer close(work)
	// The moment the channel closes the session is dead, even while every
	// worker is busy and the loop below waits for one.
	watched := make(chan struct{})
	defer close(watched)
	go func() {
		select {
		case <-s.closed:
			cs.sessionDied(s)
		case <-watched:
		}
	}()
	for d := range s.deliveries {
		// Taken first, even when it is not handled: an unsettled tag
		// bounds every multiple ack.
		s.take(d.DeliveryTag)
		if cs.isClosing() || s.dead.Load() {
			// Left unsettled: it returns to the queue when the channel closes.
			continue
		}
		cs.handlers.Add(1)
		select {
		case work <- d:
		case <-s.closed:
			cs.handlers.Done()
			cs.sessionDied(s)
		}
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

// closeChannel closes a dead session's channel without waiting on a
// broker that does not answer.
func (cs *Consumer) closeChannel(s *session) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = cs.c.bounded(ctx, s.conn, "channel.close", s.ch.Close)
}

// backoff is wait jittered down to between half and all of it, so that the
// consumers of a fleet do not reconnect in step.
func backoff(wait time.Duration) time.Duration {
	if wait <= 1 {
		return wait
	}
	return wait/2 + rand.N(wait/2+1)
}

func (cs *Consumer) resubscribe() *session {
	wait := cs.c.cfg.reconnectMin
	next := backoff(wait)
	for {
		up := cs.c.upSignal()
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
			cs.mu.Lock()
			if cs.closing {
				cs.mu.Unlock()
				s.ch.Close()
				return nil
			}
			cs.sess = s
			cs.mu.Unlock()
			cs.log.Info("acemq: consumer resubscribed")
			return s
		}
		if errors.Is(err, ErrClosed) {
			cs.stats.stop(fmt.Errorf("consumer %q stopped: %w", cs.queue, err))
			return nil
		}
		cs.stats.resubscribing(err)
		wait = min(wait*2, cs.c.cfg.reconnectMax)
		next = backoff(wait)
		cs.log.Warn("acemq: resubscribe failed", "err", err, "next_in", next)
	}
}

func (cs *Consumer) isClosing() bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.closing
}

// Close stops the consumer: no new deliveries are taken, in-flight handlers
// finish, and retries held in memory are republished at once with their
// attempt advanced, so no count is lost. Deliveries prefetched but not
// started go back to the queue. Close waits for the broker's confirm of
// every copy the consumer wrote (a retry, a dead letter, a park) before it
// acks their originals. ctx bounds the whole of Close: when it expires,
// handlers still running get their context cancelled, held retries not yet
// republished and deliveries whose copy is not confirmed yet are left to
// the broker (it redelivers them), and Close returns an error matching
// ctx's. When the broker does not
// answer in time (a memory alarm blocks the connection) Close closes the
// connection's socket rather than wait, and its error says so.
func (cs *Consumer) Close(ctx context.Context) error {
	cs.mu.Lock()
	if cs.closing {
		cs.mu.Unlock()
		select {
		case <-cs.stopped:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("close consumer %q: %w", cs.queue, ctx.Err())
		}
	}
	cs.closing = true
	close(cs.quit)
	s := cs.sess
	cs.mu.Unlock()
	defer cs.c.untrack(cs)

	var err error
	if cerr := cs.c.bounded(ctx, s.conn, "basic.cancel", func() error { return s.ch.Cancel(s.tag, false) }); cerr != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("close consumer %q: %w", cs.queue, cerr)
		} else {
			cs.log.Debug("acemq: cancel", "err", cerr)
		}
	}
	// The run loop ends once the subscription has (cancel-ok, or the
	// channel closed); it does not wait for handlers. Then no handler
	// starts any more, and Close waits for those running.
	select {
	case <-cs.stopped:
		handlersDone := make(chan struct{})
		go func() { cs.handlers.Wait(); close(handlersDone) }()
		select {
		case <-handlersDone:
		case <-ctx.Done():
			cs.hardStop()
			if err == nil {
				err = fmt.Errorf("close consumer %q: handlers still running: %w", cs.queue, ctx.Err())
			}
		}
	case <-ctx.Done():
		cs.hardStop()
		if err == nil {
			err = fmt.Errorf("close consumer %q: the subscription did not end in time: %w", cs.queue, ctx.Err())
		}
	}
	cs.flushHeld(ctx)
	cs.returnLookups()
	if werr := cs.waitReleases(ctx); werr != nil && err == nil {
		err = fmt.Errorf("close consumer %q: %w", cs.queue, werr)
	}
	cs.letGo.Store(true)
	cs.hardStop()
	if aerr := cs.c.bounded(ctx, s.conn, "basic.ack", func() error { cs.flushAcks(s, flushAll); return nil }); aerr != nil && err == nil {
		err = fmt.Errorf("close consumer %q: %w", cs.queue, aerr)
	}
	if cerr := cs.c.bounded(ctx, s.conn, "channel.close", s.ch.Close); cerr != nil && !errors.Is(cerr, amqp.ErrClosed) && err == nil {
		err = fmt.Errorf("close consumer %q: %w", cs.queue, cerr)
	}
	return err
}

// defaultHoldBudgetMax is the largest default hold budget. A retry held in
// memory is a delivery the broker keeps on the channel's list of unacked
// ones for the whole wait, and the broker walks past every such older
// delivery for each single ack (and no multiple ack may cover it): held
// retries make every ack behind them dearer for the broker, the more the
// more are held (docs/performance.md, R1, cases A1 and R1). Past a few,
// the broker's rung is the cheaper place for a wait.
const defaultHoldBudgetMax = 16

// defaultHoldBudget is the hold budget of a consumer that did not set one:
// as many as the prefetch up to defaultHoldBudgetMax, but none under
// WithRedeliveryLimit. Every
// delivery the broker has sent ahead shares the crash of the process
// holding it, and the limit counts that crash against each of them: the
// budget would widen that window from the prefetch to prefetch + budget,
// so that with WithPrefetch(1) an innocent message sent ahead of a poison
// one would be parked beside it.
func defaultHoldBudget(cfg consumeConfig) int {
	if cfg.redeliveryLimit > 0 {
		return 0
	}
	return min(cfg.prefetch, defaultHoldBudgetMax)
}
