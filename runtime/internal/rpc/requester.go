package rpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/msgtype"
	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/trace"
)

// maxReplyToken is the longest x-acemq-reply-token a responder echoes: a
// requester's is under 60 bytes; a longer one is not a requester's, and
// echoing it could make the reply outgrow a frame.
const maxReplyToken = 255

// maxReplyQueueName is the longest queue name AMQP carries (a short
// string): a longer reply queue is refused before it is declared.
const maxReplyQueueName = 255

// maxOwed is how many caller-chosen correlation ids a Requester remembers
// as owed a reply (Requester.owed).
const maxOwed = 4096

// Config is a Requester's: its connection and what its options chose.
type Config struct {
	Conn Conn
	// Queue is the reply queue's name, "" for direct reply-to; TTL its
	// x-expires.
	Queue string
	TTL   time.Duration
	// Confirm: requests are published in confirm mode.
	Confirm bool
}

// defaultReplyQueueTTL is how long a reply queue lives without a consumer
// (its x-expires) unless its option says otherwise.
const defaultReplyQueueTTL = 30 * time.Minute

// ReplyQueue sets cfg's reply queue: wire.ReplyQueuePrefix + name (name as
// it is when it begins with the prefix already), x-expires ttl (30
// minutes when ttl is 0).
func (cfg *Config) ReplyQueue(name string, ttl time.Duration) {
	if !strings.HasPrefix(name, wire.ReplyQueuePrefix) {
		name = wire.ReplyQueuePrefix + name
	}
	cfg.Queue, cfg.TTL = name, ttl
	if cfg.TTL <= 0 {
		cfg.TTL = defaultReplyQueueTTL
	}
}

// Requester is the engine of package runtime's Requester: one channel,
// on which it consumes its replies and publishes its requests; the
// waiting requests told apart by a reply token of its own.
type Requester struct {
	c     Conn
	queue string        // "" for direct reply-to
	ttl   time.Duration // the reply queue's x-expires
	log   *slog.Logger
	// confirm: requests are published in confirm mode (WithRequestConfirms).
	confirm bool

	mu      sync.Mutex
	s       *replySession
	opening chan struct{}
	// waits are the waiting requests by their token (x-acemq-reply-token);
	// byCorr the same by correlation id, for a reply without a token (a
	// responder that does not echo it) and for a basic.return.
	waits  map[string]*call
	byCorr map[string]*call
	// owed counts, by correlation id, the requests with a correlation id
	// their caller chose that stopped waiting before their reply came: a
	// reply without a token to such an id may be theirs, and is dropped as
	// late rather than handed to a later request of the same id.
	owed map[string]int
	// tokens are made of tokenPrefix, this Requester's own, and seq.
	tokenPrefix string
	seq         atomic.Uint64
	closed      bool
	done        chan struct{} // closed by Close
	wg          sync.WaitGroup

	late atomic.Int64
	// calls counts the requests registered (wait) and not yet forgotten:
	// the writer gathers while more than one wait (publisher.waiting).
	calls atomic.Int64
}

// New returns a Requester of cfg.
func New(cfg Config) *Requester {
	r := &Requester{c: cfg.Conn, queue: cfg.Queue, ttl: cfg.TTL, confirm: cfg.Confirm,
		waits: map[string]*call{}, byCorr: map[string]*call{}, owed: map[string]int{},
		tokenPrefix: core.NewID() + ".", done: make(chan struct{})}
	r.log = r.c.Log().With("reply_to", r.ReplyTo())
	return r
}

// LateReplies is how many replies came for no waiting request.
func (r *Requester) LateReplies() int64 { return r.late.Load() }

// Waiting is how many requests wait for their reply.
func (r *Requester) Waiting() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.waits)
}

// ReplyTo is the reply_to its requests carry: amq.rabbitmq.reply-to, or
// its reply queue's name.
func (r *Requester) ReplyTo() string {
	if r.queue != "" {
		return r.queue
	}
	return core.DirectReplyTo
}

// call is one request waiting for its reply, and its publish: one
// allocation with its done channel, holding the request (o) and its
// place in the writer's queue (f) (bench/NOTES.md, issue 21).
type call struct {
	s *replySession
	// token is the request's x-acemq-reply-token, corr its correlation id.
	token, corr string
	// done is closed when the outcome is in: the reply (d) or the first
	// failure (err): its publish's (returned, nacked, not written), its
	// session's loss, the Requester's Close. The first of them is kept.
	done    chan struct{}
	decided atomic.Bool
	d       amqp.Delivery
	err     error

	// The publish of the request, settled once (send).
	c       Conn
	o       amqpx.Outgoing
	f       amqpx.Inflight
	span    trace.Span
	start   time.Time
	settled atomic.Bool
}

// decide keeps d or err as the call's outcome unless it has one: false
// when it had.
func (cl *call) decide(d amqp.Delivery, err error) bool {
	if !cl.decided.CompareAndSwap(false, true) {
		return false
	}
	cl.d, cl.err = d, err
	close(cl.done)
	return true
}

// failWith hands err to the caller unless it has its outcome already.
func (cl *call) failWith(err error) { cl.decide(amqp.Delivery{}, err) }

// settle ends the request's publish once: its span and metric, and a
// failure to the caller; false when it was settled already.
func (cl *call) settle(err error) bool {
	if !cl.settled.CompareAndSwap(false, true) {
		return false
	}
	if err != nil {
		err = cl.c.PublishError(cl.o, err)
	}
	cl.c.EndPublish(cl.span, &cl.o, cl.start, err)
	if err != nil {
		cl.failWith(err)
	}
	return true
}

// written is settle for the publisher's writer.
func (cl *call) written(err error) { cl.settle(err) }

// replySession is the Requester's channel on one connection: its reply
// consumer and its publisher.
type replySession struct {
	ch   *amqp.Channel
	p    *amqpx.Publisher
	dead atomic.Bool
}

// DecodeReply is d's reply to a request of type request as a Rep, or the
// responder's error (a *core.ReplyError).
func DecodeReply[Rep any](ctx context.Context, c Conn, request string, repType *msgtype.MessageType[Rep], d amqp.Delivery) (Rep, error) {
	var v Rep
	if why, ok := d.Headers[wire.HeaderReplyError]; ok {
		reasonText, _ := why.(string)
		return v, &core.ReplyError{Code: core.HeaderString(d.Headers, wire.HeaderReplyErrorCode), Reason: reasonText,
			Request: request, Responder: core.HeaderString(d.Headers, wire.HeaderOrigin)}
	}
	if d.Type != repType.Name() {
		return v, fmt.Errorf("request %s: the reply: %w: it is %q, not %q", request, core.ErrOtherType, d.Type, repType.Name())
	}
	codec, err := core.CodecFor(repType, c)
	if err != nil {
		return v, err
	}
	if err := codec.Decode(replyDecodeCtx(ctx, d), d.Body, &v); err != nil {
		return v, fmt.Errorf("request %s: the reply %s: %w", request, repType.Name(), err)
	}
	return v, nil
}

// replyDecodeCtx is the ctx a reply is decoded with: its own fingerprint,
// never the decode info of a delivery the caller's ctx carries (a handler
// that requests); with neither, ctx itself, the default decode info,
// without a context to allocate (bench/NOTES.md, issue 21).
func replyDecodeCtx(ctx context.Context, d amqp.Delivery) context.Context {
	fp := core.HeaderString(d.Headers, wire.HeaderSchemaFingerprint)
	if fp == "" && !core.HasDecodeInfo(ctx) {
		return ctx
	}
	return core.WithDecodeInfo(ctx, core.DecodeInfo{Fingerprint: fp, Schema: core.HeaderString(d.Headers, wire.HeaderSchema)})
}

// Call sends o as a request and waits for its reply.
func (r *Requester) Call(ctx context.Context, o amqpx.Outgoing) (amqp.Delivery, error) {
	s, err := r.session(ctx)
	if err != nil {
		return amqp.Delivery{}, err
	}
	id := o.Msg.CorrelationId
	chosen := id != ""
	if !chosen {
		// The request's message id: a fresh UUIDv7 of its own, so a
		// second one need not be drawn.
		id = o.Msg.MessageId
	}
	if id == "" {
		id = core.NewID()
	}
	token := r.token()
	cl, err := r.wait(token, id, s)
	if err != nil {
		return amqp.Delivery{}, err
	}
	defer r.forget(cl, chosen)
	cl.o = o
	m := &cl.o.Msg
	m.CorrelationId, m.ReplyTo, m.DeliveryMode = id, r.ReplyTo(), amqp.Transient
	m.Headers[wire.HeaderReplyToken] = token
	if dl, ok := ctx.Deadline(); ok {
		m.Expiration = strconv.FormatInt(max(time.Until(dl).Milliseconds(), 1), 10)
	}
	if err := r.send(ctx, s, cl); err != nil {
		return amqp.Delivery{}, err
	}
	// A written request is settled here, when its caller stops waiting,
	// rather than by a goroutine of the writer's (inflight.callerSettles).
	defer func() {
		if cl.f.CallerSettled() {
			cl.settle(nil)
		}
	}()
	select {
	case <-cl.done:
		return cl.d, cl.err
	case <-ctx.Done():
		return amqp.Delivery{}, fmt.Errorf("no reply in time (correlation id %s): %w", id, ctx.Err())
	}
}

// send queues the request for s's writer without waiting for the write
// or a confirm: the publish's outcome (its write; with
// WithRequestConfirms its confirm) ends its span and metrics from the
// publisher and, when it is a failure (not written, nacked, returned, the
// channel lost), goes to cl.fail, so that the caller waits for one thing
// only, its reply or the first failure, and no goroutine waits beside it.
// Without confirms a return comes through returned.
func (r *Requester) send(ctx context.Context, s *replySession, cl *call) error {
	c, o := r.c, &cl.o
	cl.c, cl.start = c, time.Now()
	cl.span = c.StartPublish(ctx, o)
	err := c.CheckExchange(ctx, o.Exchange)
	if err == nil {
		err = c.BlockedErr()
	}
	if err == nil {
		err = s.p.Fit(o)
	}
	if err == nil {
		cl.f = amqpx.Inflight{Key: amqpx.KeyOf(o), Mandatory: o.Mandatory, Msg: o.Msg, Then: cl.written,
			CallerSettles: !r.confirm}
		err = s.p.Enqueue(ctx, &cl.f)
	}
	if err != nil && cl.settle(err) {
		return c.PublishError(*o, err)
	}
	return nil // a failure during the write settled it: cl has it
}

// token is a new request's x-acemq-reply-token: the Requester's prefix (a
// UUIDv7 of its own) and its count of requests, in one allocation.
func (r *Requester) token() string {
	var b [64]byte
	t := strconv.AppendUint(append(b[:0], r.tokenPrefix...), r.seq.Add(1), 36)
	return string(t)
}

// wait registers a request waiting under its token, with correlation id
// corr.
func (r *Requester) wait(token, corr string, s *replySession) (*call, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, fmt.Errorf("%w: %w", core.ErrNoReply, core.ErrClosed)
	}
	if _, dup := r.byCorr[corr]; dup {
		return nil, fmt.Errorf("correlation id %q is already waiting for a reply", corr)
	}
	cl := &call{s: s, token: token, corr: corr, done: make(chan struct{})}
	r.waits[token] = cl
	r.byCorr[corr] = cl
	r.calls.Add(1)
	return cl, nil
}

// forget ends cl's wait. A request whose caller chose its correlation id
// and stopped waiting before its reply came leaves that id owed a reply.
func (r *Requester) forget(cl *call, chosen bool) {
	r.calls.Add(-1)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.unwait(cl)
	if chosen && !cl.decided.Load() && !r.closed {
		if len(r.owed) >= maxOwed {
			clear(r.owed) // a bound, not a guarantee: see owed
		}
		r.owed[cl.corr]++
	}
}

// unwait removes cl from the waiting requests, under r.mu.
func (r *Requester) unwait(cl *call) {
	if r.waits[cl.token] == cl {
		delete(r.waits, cl.token)
	}
	if r.byCorr[cl.corr] == cl {
		delete(r.byCorr, cl.corr)
	}
}

// deliver hands a reply to the request waiting for it, or drops it: the
// request of its x-acemq-reply-token; for a reply without one (from a
// responder that does not echo it), the request of its correlation id,
// unless an earlier request of that id is owed a reply (then it may be
// that one's: dropped as late).
func (r *Requester) deliver(d amqp.Delivery) {
	token, tokened := d.Headers[wire.HeaderReplyToken].(string)
	r.mu.Lock()
	var cl *call
	switch {
	case tokened:
		cl = r.waits[token]
		if cl == nil && r.owed[d.CorrelationId] > 0 {
			r.payOwed(d.CorrelationId) // an earlier request's reply: no longer owed
		}
	case r.owed[d.CorrelationId] > 0:
		r.payOwed(d.CorrelationId)
	default:
		cl = r.byCorr[d.CorrelationId]
	}
	if cl != nil {
		r.unwait(cl)
	}
	r.mu.Unlock()
	if cl == nil {
		r.late.Add(1)
		m := r.c.Metrics()
		m.Add(m.LateReplies, r.ReplyTo())
		r.log.Debug("acemq: a reply no request waits for (its caller gave up); dropped", "correlation_id", d.CorrelationId, "type", d.Type)
		return
	}
	cl.decide(d, nil) // dropped when a failure came first
}

// payOwed counts one reply owed to corr as come, under r.mu.
func (r *Requester) payOwed(corr string) {
	if r.owed[corr]--; r.owed[corr] <= 0 {
		delete(r.owed, corr)
	}
}

// returned fails the request the broker returned (no queue took it), on a
// session without confirms; with them the confirm says so.
func (r *Requester) returned(ret amqp.Return) {
	token, _ := ret.Headers[wire.HeaderReplyToken].(string)
	r.mu.Lock()
	cl := r.waits[token]
	r.mu.Unlock()
	if cl != nil {
		cl.failWith(&amqpx.PublishError{Exchange: ret.Exchange, RoutingKey: ret.RoutingKey, Err: core.ErrUnroutable})
	}
}

// session returns the live reply session, opening one when there is none.
// One open at a time; each caller waits for it only as long as its ctx.
func (r *Requester) session(ctx context.Context) (*replySession, error) {
	for {
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return nil, fmt.Errorf("%w: %w", core.ErrNoReply, core.ErrClosed)
		}
		if s := r.s; s != nil && !s.dead.Load() {
			r.mu.Unlock()
			return s, nil
		}
		if wait := r.opening; wait != nil {
			r.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, fmt.Errorf("opening the reply channel: %w", ctx.Err())
			}
		}
		opening := make(chan struct{})
		r.opening = opening
		r.mu.Unlock()
		s, err := r.open(ctx)
		r.mu.Lock()
		r.opening = nil
		close(opening)
		if err == nil && r.closed {
			go s.ch.Close()
			err = fmt.Errorf("%w: %w", core.ErrNoReply, core.ErrClosed)
		}
		if err == nil {
			r.s = s
		}
		r.mu.Unlock()
		return s, err
	}
}

// open opens a channel, subscribes it to the replies and starts its
// publisher (in confirm mode with WithRequestConfirms). Direct reply-to
// needs both on one channel: a request published on another would have no
// reply consumer.
func (r *Requester) open(ctx context.Context) (*replySession, error) {
	ch, conn, err := r.c.ChannelOn(ctx)
	if err != nil {
		return nil, err
	}
	cc := callOn(r.c, ch)
	from := core.DirectReplyTo
	if r.queue != "" {
		from = r.queue
		if len(from) > maxReplyQueueName {
			cc.Close(ctx)
			return nil, fmt.Errorf("the reply queue %q: %w: its name is %d bytes, over AMQP's 255", from, core.ErrInvalidMessage, len(from))
		}
		args := amqp.Table{wire.ArgExpires: r.ttl.Milliseconds()}
		if err := cc.Do(ctx, "queue.declare", func(ch *amqp.Channel) error {
			_, err := ch.QueueDeclare(r.queue, true, false, false, false, args)
			return err
		}); err != nil {
			cc.Close(ctx)
			return nil, fmt.Errorf("declare the reply queue %q: %w", r.queue, err)
		}
	}
	closes := ch.NotifyClose(make(chan *amqp.Error, 1))
	replies, err := amqpx.RoundTrip(ctx, cc, "basic.consume", func(ch *amqp.Channel) (<-chan amqp.Delivery, error) {
		return ch.Consume(from, "", true, false, false, false, nil)
	})
	if err != nil {
		cc.Close(ctx)
		return nil, fmt.Errorf("consume the replies from %q: %w", from, err)
	}
	onReturn := r.returned // without confirms, a return fails its request
	if r.confirm {
		onReturn = nil
	}
	p, err := amqpx.NewRequestPublisher(ctx, r.c.BlockedNote, ch, r.c.CorkOf(conn), onReturn, &r.calls)
	if err != nil {
		return nil, err
	}
	p.FrameMax = amqpx.FrameMaxOf(conn)
	s := &replySession{ch: ch, p: p}
	r.wg.Add(1)
	go r.read(s, replies, closes)
	return s, nil
}

// read hands each reply of s to its request until the channel closes.
func (r *Requester) read(s *replySession, replies <-chan amqp.Delivery, closes <-chan *amqp.Error) {
	defer r.wg.Done()
	for d := range replies {
		r.deliver(d)
	}
	var cause error = amqp.ErrClosed
	if e, ok := <-closes; ok && e != nil {
		cause = e
	}
	r.lost(s, cause)
}

// lost ends s: with direct reply-to, every request sent on it fails (its
// reply cannot arrive on another channel); with a reply queue they keep
// waiting, and a new session is opened for them.
func (r *Requester) lost(s *replySession, cause error) {
	s.dead.Store(true)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.s == s {
		r.s = nil
	}
	if r.closed {
		return
	}
	if r.queue != "" {
		if len(r.waits) > 0 {
			r.wg.Add(1)
			go r.reopen()
		}
		return
	}
	err := &unavailableError{err: fmt.Errorf("%w: the reply channel closed before the reply came (direct reply-to delivers it to that channel only): %w", core.ErrNoReply, cause)}
	for _, cl := range r.waits {
		if cl.s == s {
			cl.failWith(err)
			r.unwait(cl)
		}
	}
}

// reopen opens a session for the requests waiting on a reply queue, with
// backoff, until one opens or the Requester is closed.
func (r *Requester) reopen() {
	defer r.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-r.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	wait, most := r.c.ReconnectBounds()
	for {
		if _, err := r.session(ctx); err == nil || ctx.Err() != nil || errors.Is(err, core.ErrClosed) {
			return
		}
		select {
		case <-time.After(wait):
		case <-r.c.UpSignal():
		case <-ctx.Done():
			return
		}
		wait = min(2*wait, most)
	}
}

// Close stops the Requester: every request still waiting fails with an
// error matching core.ErrNoReply and core.ErrClosed, and its channel is closed,
// within ctx. The reply queue of WithReplyQueue is left to its TTL.
func (r *Requester) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	close(r.done)
	s := r.s
	r.s = nil
	err := fmt.Errorf("%w: %w", core.ErrNoReply, core.ErrClosed)
	for _, cl := range r.waits {
		cl.failWith(err)
		r.unwait(cl)
	}
	r.mu.Unlock()
	if s != nil {
		s.dead.Store(true)
		go s.ch.Close()
	}
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("close the requester: its reply channel did not close in time: %w", ctx.Err())
	}
}
