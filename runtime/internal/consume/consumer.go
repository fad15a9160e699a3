package consume

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/obs"
	amqp "github.com/rabbitmq/amqp091-go"
)

// ConsumerSpec is what generated code knows about a consumer: its queue,
// the manifest's retry policy and its routes.
type ConsumerSpec struct {
	Queue string
	// Quorum says Queue is a quorum queue (the manifest's type: quorum),
	// whoever declared it: a deploy step, an operator, another
	// connection, a consumer with declare: false. The broker's
	// x-delivery-count of a redelivered message is then the count of
	// every consumer of the queue, which WithRequeueOnFailure adds to the
	// attempt (this consumer's own count of its requeues stays a floor,
	// so a classic queue said to be quorum still ends); a first delivery's
	// x-delivery-count is the producer's and is never read. Without it
	// the broker's count is trusted only on a queue this Connection
	// declared as quorum, and each consumer counts its own requeues.
	Quorum bool
	// Retry is the manifest's policy; nil when the manifest names none.
	Retry *core.RetryPolicy
	// RequeueOnFailure is the manifest's requeue_on_failure.
	RequeueOnFailure bool
	Routes           []core.Route
}

// Consumer consumes one queue until Close.
type Consumer struct {
	conn    Conn
	metrics *obs.Metrics
	queue   string
	routes  map[string]core.Route
	policy  core.RetryPolicy
	cfg     Config
	requeue bool
	// quorum is ConsumerSpec.Quorum: the queue is quorum, whoever
	// declared it.
	quorum bool
	// requeues counts requeues where the broker counts none (classic).
	requeues requeueCounts
	log      *slog.Logger
	panics   core.PanicLimiter
	// outcomeLog bounds the retry, dead-letter and park lines.
	outcomeLog *obs.OutcomeLimiter
	stats      consumerCounters
	// lastType caches the metric options of the type last delivered.
	lastType atomic.Pointer[typeOpts]

	// handlerCtx is what handlers get; it is cancelled when Close's
	// drain deadline passes.
	handlerCtx context.Context
	hardStop   context.CancelFunc

	// isolated is set once a frame error of the client closed the
	// consumer's connection: it subscribes on own from then on
	// (framefail.go).
	isolated atomic.Bool

	mu      sync.Mutex
	sess    *session
	own     *amqp.Connection
	closing bool
	// closingNow is closing for the loops that read it per delivery
	// (isClosing): set with it, under mu, read without the lock.
	closingNow atomic.Bool
	held       map[*heldRetry]struct{}
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
	// bounds is the copies' shared deadline (copybound.go).
	bounds copyBounds
	// missing are the rungs found missing, tried again once per probe
	// interval (rungs.go).
	missing missingRungs
	// rungNames are the rungs' names, made once (rungs.go).
	rungNames rungNames
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

// Defaults is a consumer's configuration before its options.
func Defaults() Config {
	return Config{Prefetch: 20, Concurrency: 1, MaxBody: core.DefaultMaxBodySize,
		SetAside: SetAsideTiming{Backoff: setAsideBackoff, BackoffMax: setAsideBackoffMax, Hold: setAsideHold}}
}

// Start is the consumer of spec with cfg (its options applied, its
// connection's fields set), subscribed within ctx, not serving yet (Run).
// Its handlers get a context carrying ctx's values that is cancelled when
// Close gives up waiting for them.
func Start(ctx context.Context, spec ConsumerSpec, cfg Config) (*Consumer, error) {
	if !cfg.HoldBudgetSet {
		cfg.HoldBudget = defaultHoldBudget(cfg)
	}
	if !cfg.AckSlackSet {
		cfg.AckSlack = defaultAckSlack(cfg)
	}
	cs, err := newConsumer(spec, cfg)
	if err != nil {
		return nil, err
	}
	cs.handlerCtx, cs.hardStop = context.WithCancel(context.WithoutCancel(ctx))
	s, err := cs.subscribe(ctx)
	if err != nil {
		cs.hardStop()
		return nil, err
	}
	cs.sess = s
	return cs, nil
}

// Run serves the subscription Start made, until Close.
func (cs *Consumer) Run() { go cs.run(cs.sess) }

// Abort ends a consumer Start made that will not Run (its connection was
// closed meanwhile): its channel is closed, its deliveries go back.
func (cs *Consumer) Abort() {
	go amqpx.CloseQuietly(cs.sess.ch)
	cs.hardStop()
}

// newConsumer is the consumer of spec with cfg, validated, its routes
// prepared; not subscribed yet.
func newConsumer(spec ConsumerSpec, cfg Config) (*Consumer, error) {
	cs := &Consumer{
		conn:    cfg.Conn,
		metrics: cfg.Metrics,
		queue:   spec.Queue,
		routes:  map[string]core.Route{},
		policy:  pickPolicy(cfg.Retry, spec.Retry, cfg.ConnRetry),
		cfg:     cfg,
		requeue: spec.RequeueOnFailure || cfg.RequeueOnFailure,
		quorum:  spec.Quorum,
		log:     cfg.Log.With("queue", spec.Queue),
		held:    map[*heldRetry]struct{}{},
		lookups: map[*heldLookup]struct{}{},
		slots:   make(chan struct{}, max(cfg.Concurrency, 1)),
		quit:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	cs.outcomeLog = obs.NewOutcomeLimiter(cfg.OutcomeLog, cs.log)
	if err := cs.validate(spec); err != nil {
		return nil, err
	}
	mws := append(append([]core.Middleware(nil), cfg.ConnMiddleware...), cfg.Middleware...)
	for _, r := range spec.Routes {
		if err := core.PrepareRoute(r, cfg.Conn); err != nil {
			return nil, fmt.Errorf("consume %q: %w", spec.Queue, err)
		}
		r = core.WrapRoute(r, spec.Queue, mws)
		cs.routes[core.RouteType(r)] = r
	}
	return cs, nil
}

func pickPolicy(option, manifest, conn *core.RetryPolicy) core.RetryPolicy {
	for _, p := range []*core.RetryPolicy{option, manifest, conn} {
		if p != nil {
			return *p
		}
	}
	return core.NoRetry()
}

func (cs *Consumer) validate(spec ConsumerSpec) error {
	switch {
	case spec.Queue == "":
		return errors.New("consume: no queue named")
	case len(spec.Routes) == 0:
		return fmt.Errorf("consume %q: no routes: pass at least one runtime.Handle", spec.Queue)
	case cs.cfg.Prefetch < 1:
		return fmt.Errorf("consume %q: prefetch %d must be at least 1", spec.Queue, cs.cfg.Prefetch)
	case cs.cfg.HoldBudget < 0:
		return fmt.Errorf("consume %q: hold budget %d must be at least 0", spec.Queue, cs.cfg.HoldBudget)
	case cs.cfg.AckSlack < 0:
		return fmt.Errorf("consume %q: ack slack %d must be at least 0", spec.Queue, cs.cfg.AckSlack)
	case cs.cfg.Qos() > maxQos:
		return fmt.Errorf("consume %q: prefetch %d + hold budget %d + ack slack %d is above %d, the most a basic.qos can say", spec.Queue, cs.cfg.Prefetch, cs.cfg.HoldBudget, cs.cfg.AckSlack, maxQos)
	case cs.cfg.Concurrency < 1:
		return fmt.Errorf("consume %q: concurrency %d must be at least 1", spec.Queue, cs.cfg.Concurrency)
	case cs.cfg.MaxBody < 1:
		return fmt.Errorf("consume %q: max body size %d must be at least 1", spec.Queue, cs.cfg.MaxBody)
	}
	if err := cs.policy.Validate(); err != nil {
		return fmt.Errorf("consume %q: %w", spec.Queue, err)
	}
	if err := amqpx.CheckQueueNames(spec.Queue, cs.policy); err != nil {
		return fmt.Errorf("consume: %w", err)
	}
	return nil
}

// Queue is the queue the consumer reads.
func (cs *Consumer) Queue() string { return cs.queue }

func (cs *Consumer) isClosing() bool { return cs.closingNow.Load() }

// Close stops the consumer: no new deliveries are taken, in-flight handlers
// finish, and retries held in memory are republished at once with their
// attempt advanced, so no count is lost. Deliveries prefetched but not
// started go back to the queue, with a basic.nack ("not processed": on
// RabbitMQ 4.3 a quorum queue does not count it against its delivery
// limit, as it counts a channel closed on them). Close waits for the broker's confirm of
// every copy the consumer wrote (a retry, a dead letter, a park) before it
// acks their originals. ctx bounds the whole of Close: when it expires,
// handlers still running get their context cancelled, held retries not yet
// republished and deliveries whose copy is not confirmed yet are left to
// the broker (it redelivers them), and Close returns an error matching
// ctx's. What Close gives up on is the consumer's own channel, never the
// connection (other consumers and publishers on it go on): when ctx ends
// with handlers still running, deliveries unsettled or the broker not
// answering, Close returns without waiting, the channel is closed in the
// background (the broker then puts its unsettled deliveries back on the
// queue; a handler that returns later settles nothing), and the error
// names the queue and how many handlers were still running and deliveries
// unsettled.
func (cs *Consumer) Close(ctx context.Context) error {
	s, first := cs.startClosing()
	if !first {
		select {
		case <-cs.stopped:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("close consumer %q: %w", cs.queue, ctx.Err())
		}
	}
	defer cs.conn.Untrack(cs)
	cancelled, err := cs.cancelSubscription(ctx, s)
	herr := cs.awaitHandlers(ctx)
	if err == nil {
		err = herr
	}
	cs.flushHeld(ctx)
	cs.returnLookups()
	if werr := cs.waitReleases(ctx); werr != nil && err == nil {
		err = fmt.Errorf("close consumer %q: %w", cs.queue, werr)
	}
	cs.letGo.Store(true)
	serr := cs.endSession(ctx, s, cancelled)
	cs.hardStop()
	cs.releaseOwn(s, serr)
	var ab *abandonedError
	if errors.As(serr, &ab) {
		// It says what the others said (handlers still running, ctx's
		// error) and what was left behind.
		if err == herr {
			err = nil
		}
		return errors.Join(serr, err)
	}
	if err == nil {
		err = serr
	}
	return err
}

// startClosing marks the consumer closing and returns its session, or
// reports false when Close was called before.
func (cs *Consumer) startClosing() (*session, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closing {
		return nil, false
	}
	cs.closing = true
	cs.closingNow.Store(true)
	close(cs.quit)
	return cs.sess, true
}

// cancelSubscription sends basic.cancel within ctx: an error only when ctx
// ended first. The channel it returns is closed once the broker answered
// (or the channel closed): nothing else may wait for a reply on the
// channel before then.
func (cs *Consumer) cancelSubscription(ctx context.Context, s *session) (<-chan struct{}, error) {
	done := make(chan struct{})
	var cerr error
	go func() { defer close(done); cerr = s.ch.Cancel(s.tag, false) }()
	select {
	case <-done:
	case <-ctx.Done():
		return done, fmt.Errorf("close consumer %q: the broker did not answer basic.cancel in time%s: %w", cs.queue, cs.conn.BlockedNote(), ctx.Err())
	}
	if cerr != nil {
		cs.log.Debug("acemq: cancel", "err", cerr)
	}
	return done, nil
}

// awaitHandlers waits, within ctx, for the run loop to end (once the
// subscription has: cancel-ok, or the channel closed; it does not wait for
// handlers), so that no handler starts any more, then for the handlers
// running. When ctx ends first the handlers' context is cancelled.
func (cs *Consumer) awaitHandlers(ctx context.Context) error {
	select {
	case <-cs.stopped:
	case <-ctx.Done():
		cs.hardStop()
		return fmt.Errorf("close consumer %q: the subscription did not end in time: %w", cs.queue, ctx.Err())
	}
	handlersDone := make(chan struct{})
	go func() { cs.handlers.Wait(); close(handlersDone) }()
	select {
	case <-handlersDone:
		return nil
	case <-ctx.Done():
		cs.hardStop()
		return fmt.Errorf("close consumer %q: handlers still running: %w", cs.queue, ctx.Err())
	}
}

// endSession sends the session's last acks and closes its channel, within
// ctx (after the cancel's reply, cancelled). When ctx ends first it
// abandons the channel, never the connection: see abandonSession.
func (cs *Consumer) endSession(ctx context.Context, s *session, cancelled <-chan struct{}) error {
	select {
	case <-cancelled:
	case <-ctx.Done():
		return cs.abandonSession(ctx, s, cancelled)
	}
	if ctx.Err() != nil {
		return cs.abandonSession(ctx, s, cancelled)
	}
	done := make(chan error, 1)
	go func() {
		s.flushAcks(flushAll)
		s.giveBackUnstarted()
		done <- s.ch.Close()
	}()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, amqp.ErrClosed) {
			return fmt.Errorf("close consumer %q: %w", cs.queue, err)
		}
		return nil
	case <-ctx.Done():
		// The acks and the close are on their way: the channel closes
		// when the broker reads them.
		return cs.abandoned(ctx, s, "channel.close", nil)
	}
}

// abandonSession gives up on s at once: the acks its handlers decided go
// out, then its channel is closed, in the background (after the cancel's
// reply, cancelled); s is dead from now on, so a handler that returns
// later settles nothing, and the broker puts every delivery not acked back
// on the queue when the channel closes. The connection and the other
// channels on it are left alone.
func (cs *Consumer) abandonSession(ctx context.Context, s *session, cancelled <-chan struct{}) error {
	upTo, below, each := s.readyAcks(flushAll)
	err := cs.abandoned(ctx, s, "", func() {
		<-cancelled
		s.acks.wire.Lock()
		defer s.acks.wire.Unlock()
		if below > 0 {
			if err := s.ch.Ack(upTo, below > 1); err != nil {
				s.log.Warn("acemq: ack failed; the broker will redeliver", "err", err, "delivery_tag", upTo, "acks", below)
			}
		}
		for _, tag := range each {
			if err := s.ch.Ack(tag, false); err != nil {
				s.log.Warn("acemq: ack failed; the broker will redeliver", "err", err, "delivery_tag", tag)
			}
		}
		if err := s.ch.Close(); err != nil && !errors.Is(err, amqp.ErrClosed) {
			s.log.Debug("acemq: closing an abandoned channel", "err", err)
		}
	})
	return err
}

// abandoned marks s dead, runs closeIt (if any) in the background and
// returns the error that says what Close left behind (and, when it was
// waiting for the broker's reply to a request, which).
func (cs *Consumer) abandoned(ctx context.Context, s *session, waited string, closeIt func()) error {
	e := &abandonedError{queue: cs.queue, waited: waited, handlers: int(cs.stats.inFlight.Load()), note: cs.conn.BlockedNote(), err: ctx.Err()}
	s.mu.Lock()
	e.unsettled = len(s.taken)
	s.mu.Unlock()
	cs.sessionDied(s)
	if closeIt != nil {
		go closeIt()
	}
	cs.log.Warn("acemq: consumer closed without waiting; its channel is abandoned (unsettled deliveries go back to the queue)",
		"handlers_running", e.handlers, "unsettled", e.unsettled)
	return e
}

// abandonedError is Consumer.Close's error when its ctx ended before the
// consumer could finish: what it left behind. It matches ctx's error.
type abandonedError struct {
	queue               string
	waited              string // the request whose reply did not come, if any
	handlers, unsettled int
	note                string
	err                 error
}

func (e *abandonedError) Error() string {
	waited := ""
	if e.waited != "" {
		waited = " the broker did not answer " + e.waited + " in time;"
	}
	return fmt.Sprintf("close consumer %q:%s abandoned its channel (%s running, %s unsettled)%s (the broker puts them back on the queue when the channel closes; the connection is kept): %v",
		e.queue, waited, core.Plural(e.handlers, "handler", "handlers"), core.Plural(e.unsettled, "delivery", "deliveries"), e.note, e.err)
}

func (e *abandonedError) Unwrap() error { return e.err }

// defaultHoldBudgetMax is the largest default hold budget. A retry held in
// memory is a delivery the broker keeps on the channel's list of unacked
// ones for the whole wait, and the broker walks past every such older
// delivery for each single ack (and no multiple ack may cover it): held
// retries make every ack behind them dearer for the broker, the more the
// more are held (bench/NOTES.md, R1, cases A1 and R1). Past a few,
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
func defaultHoldBudget(cfg Config) int {
	if cfg.RedeliveryLimit > 0 {
		return 0
	}
	return min(cfg.Prefetch, defaultHoldBudgetMax)
}

// Session is the consumer's current channel and the connection it is on
// (nils between sessions), for package runtime's tests: a kept channel
// told from a new one.
func (cs *Consumer) Session() (*amqp.Channel, *amqp.Connection) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.sess == nil {
		return nil, nil
	}
	return cs.sess.ch, cs.sess.conn
}

// Closing reports whether Close has begun: from then on no handler starts.
func (cs *Consumer) Closing() bool { return cs.isClosing() }
