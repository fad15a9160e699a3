package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	quit      chan struct{} // closed when Close starts
	stopped   chan struct{} // closed when the run loop has ended
}

// session is one subscription on one channel. Its deliveries can only be
// settled on that channel.
type session struct {
	ch         *amqp.Channel
	tag        string
	deliveries <-chan amqp.Delivery

	mu sync.Mutex
	// taken is when the consumer took each unsettled delivery: a copy that
	// cannot be published holds its delivery only inside the broker's
	// consumer timeout.
	taken map[uint64]time.Time
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

// settled forgets the delivery tag: acked or nacked.
func (s *session) settled(tag uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.taken, tag)
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
	ch, err := cs.c.channel(ctx)
	if err != nil {
		return nil, fmt.Errorf("consume %q: %w", cs.queue, err)
	}
	if err := ch.Qos(cs.cfg.prefetch, 0, false); err != nil {
		ch.Close()
		return nil, fmt.Errorf("consume %q: prefetch: %w", cs.queue, err)
	}
	if !cs.cfg.noDeclare {
		for _, q := range []string{DeadLetterQueue(cs.queue), ParkedQueue(cs.queue)} {
			if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
				ch.Close()
				return nil, fmt.Errorf("consume %q: %w", cs.queue, declareError("queue", q, err))
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
	return &session{ch: ch, tag: tag, deliveries: deliveries}, nil
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
		// cancelled it: queue deleted, node failover). Held retries of the
		// session are dropped and its channel closed, so the broker
		// redelivers their messages instead of stranding them.
		cs.dropHeld(s)
		cs.dropLookups(s)
		_ = s.ch.Close()
		cs.log.Warn("acemq: consumer lost its channel; resubscribing")
		if s = cs.resubscribe(); s == nil {
			return
		}
	}
}

func (cs *Consumer) serve(s *session) {
	work := make(chan amqp.Delivery)
	var wg sync.WaitGroup
	for range cs.cfg.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range work {
				cs.slots <- struct{}{}
				cs.handle(s, d)
				<-cs.slots
			}
		}()
	}
	for d := range s.deliveries {
		if cs.isClosing() {
			// Left unsettled: it returns to the queue when the channel closes.
			continue
		}
		s.take(d.DeliveryTag)
		work <- d
	}
	close(work)
	wg.Wait()
}

func (cs *Consumer) resubscribe() *session {
	wait := cs.c.cfg.reconnectMin
	for {
		select {
		case <-time.After(wait):
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
			return nil
		}
		cs.log.Warn("acemq: resubscribe failed", "err", err, "next_in", wait)
		wait = min(wait*2, cs.c.cfg.reconnectMax)
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
// started go back to the queue. ctx bounds the wait for handlers; when it
// expires their context is cancelled and Close returns ctx's error after
// settling what it can.
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

	if err := s.ch.Cancel(s.tag, false); err != nil {
		cs.log.Debug("acemq: cancel", "err", err)
	}
	var err error
	select {
	case <-cs.stopped:
	case <-ctx.Done():
		cs.hardStop()
		err = fmt.Errorf("close consumer %q: handlers still running: %w", cs.queue, ctx.Err())
	}
	cs.flushHeld(ctx)
	cs.returnLookups()
	cs.waitReleases(ctx)
	cs.hardStop()
	if cerr := s.ch.Close(); cerr != nil && !errors.Is(cerr, amqp.ErrClosed) && err == nil {
		err = fmt.Errorf("close consumer %q: %w", cs.queue, cerr)
	}
	return err
}
