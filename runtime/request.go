package runtime

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

// ErrNoReply is matched by the error of a request whose reply can no longer
// arrive: its reply channel closed (the connection was lost; direct
// reply-to delivers a reply only to the channel that sent the request) or
// the Requester was closed. It also matches ErrUnavailable when the
// connection was lost, ErrClosed when the Requester or its connection was
// closed.
var ErrNoReply = core.ErrNoReply

// ReplyError is a responder's answer that is an error, not a reply: what a
// request's caller gets from Request instead of a reply, never a timeout.
// A request handler that returns one has its Code and Reason sent as they
// are; any other error is sent with Code "error" and its text as Reason.
// Code names the kind of failure ("error", "panic", "bad_request",
// "wrong_reply_type", "rejected", "parked", "not_handled", or a
// responder's own code); Reason is the responder's text (capped at 4096
// bytes); Request is the request's message type and Responder the
// responder's x-acemq-origin, both filled in by the caller's side.
type ReplyError = core.ReplyError

// Requester sends requests and waits for their replies: one channel per
// Requester, on which it consumes its replies and publishes its requests;
// concurrent requests share it, told apart by a reply token of its own
// (x-acemq-reply-token), whatever their correlation ids. By default
// the replies come by RabbitMQ's direct reply-to (no queue: the broker
// hands a reply straight to the channel that sent the request, at most
// once); WithReplyQueue names a durable queue of the Requester's own
// instead. Make one with NewRequester; it opens its channel on first use,
// and again after a connection loss. Safe for concurrent use.
type Requester struct {
	c     *Connection
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

// RequesterOption configures a Requester.
type RequesterOption interface{ applyRequester(*Requester) }

type requesterOptionFunc func(*Requester)

func (f requesterOptionFunc) applyRequester(r *Requester) { f(r) }

// defaultReplyQueueTTL is how long a reply queue of WithReplyQueue lives
// without a consumer (its x-expires) unless the option says otherwise.
const defaultReplyQueueTTL = 30 * time.Minute

// WithReplyQueue makes the Requester take its replies from a durable queue
// of its own instead of direct reply-to: a reply that arrives while the
// Requester reconnects waits there and reaches its caller, if the caller
// still waits. The queue is named wire.ReplyQueuePrefix + name (name as it is
// when it begins with wire.ReplyQueuePrefix already), the shape a responder
// replies to (Requester.ReplyTo says the name). It is declared durable
// with x-expires ttl (30 minutes when ttl is 0): the broker
// deletes it once no requester has used it for that long (RabbitMQ 4.3
// refuses transient queues that are not exclusive). name must be one
// client's alone: two requesters on one queue take each other's replies.
func WithReplyQueue(name string, ttl time.Duration) RequesterOption {
	return requesterOptionFunc(func(r *Requester) {
		if !strings.HasPrefix(name, wire.ReplyQueuePrefix) {
			name = wire.ReplyQueuePrefix + name
		}
		r.queue, r.ttl = name, ttl
		if r.ttl <= 0 {
			r.ttl = defaultReplyQueueTTL
		}
	})
}

// WithRequestConfirms publishes the Requester's requests in confirm mode
// and fails a request the broker refuses (a basic.nack: a request queue's
// x-overflow reject-publish, a broker's internal error) at once with
// ErrNacked. Without it, requests are not confirmed: a request's reply is
// its confirmation, a request no queue takes still fails at once with
// ErrUnroutable (it is mandatory; the broker returns it), and one the
// broker refuses fails at its ctx's end. Confirms cost the broker a frame
// and the client its bookkeeping for every request: about a fifth of the
// round trips per second (bench/NOTES.md, RR1).
func WithRequestConfirms() RequesterOption {
	return requesterOptionFunc(func(r *Requester) { r.confirm = true })
}

// NewRequester returns a Requester sending on c. Close it when done.
func NewRequester(c *Connection, opts ...RequesterOption) *Requester {
	r := &Requester{c: c, waits: map[string]*call{}, byCorr: map[string]*call{}, owed: map[string]int{},
		tokenPrefix: core.NewID() + ".", done: make(chan struct{})}
	for _, o := range opts {
		o.applyRequester(r)
	}
	r.log = c.log.With("reply_to", r.replyTo())
	return r
}

// LateReplies is how many replies came for no waiting request: after their
// caller's ctx ended, or twice. They are dropped, never handed to another
// request.
func (r *Requester) LateReplies() int64 { return r.late.Load() }

// Waiting is how many requests wait for their reply.
func (r *Requester) Waiting() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.waits)
}

// ReplyTo is the reply_to its requests carry: amq.rabbitmq.reply-to, or
// its reply queue's name (WithReplyQueue).
func (r *Requester) ReplyTo() string { return r.replyTo() }

func (r *Requester) replyTo() string {
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
	c       *Connection
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
		err = cl.c.publishError(cl.o, err)
	}
	cl.c.endPublish(cl.span, &cl.o, cl.start, err)
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

// Request publishes v as a request of type reqType to exchange and waits for
// its reply, of type repType: the decoded reply, or the responder's error
// as a *ReplyError. ctx is the timeout: when it ends first, Request returns
// an error matching ctx's, and a reply that comes later is dropped (counted
// by LateReplies). The request carries the time left as its expiration, so
// that the broker drops it unread once its caller has given up.
//
// The request is published mandatory, not confirmed (its reply confirms
// it; WithRequestConfirms asks the broker too), with the options in opts (WithRoutingKey, WithHeaders; WithCorrelationID sets
// the request's correlation id, which must be unique among the Requester's
// waiting requests; by default it is the request's message id, a fresh
// UUIDv7). A request no
// queue takes fails at once with ErrUnroutable. When the connection is lost while
// it waits, Request fails with an error matching ErrNoReply and
// ErrUnavailable (direct reply-to: the reply cannot arrive; with
// WithReplyQueue it keeps waiting until ctx ends).
func Request[Req, Rep any](ctx context.Context, r *Requester, reqType *MessageType[Req], repType *MessageType[Rep], exchange string, v Req, opts ...PublishOption) (rep Rep, err error) {
	start := time.Now()
	defer func() { r.c.metrics.Requested(exchange, reqType.Name(), repType.Name(), time.Since(start), err) }()
	var zero Rep
	codec, err := core.CodecFor(reqType, connLink{r.c})
	if err != nil {
		return zero, err
	}
	fp, _ := codec.(interface{ SchemaFingerprint() string })
	cfg := publishConfigOf(opts)
	o, err := encodeOutgoing(ctx, r.c, reqType.Name(), codec, fp, exchange, v, cfg)
	if err != nil {
		return zero, fmt.Errorf("request %s to exchange %q: %w", reqType.Name(), exchange, err)
	}
	o.Msg.Headers[wire.HeaderReplyType] = repType.Name()
	d, err := r.call(ctx, o)
	if err != nil {
		return zero, fmt.Errorf("request %s to exchange %q: %w", reqType.Name(), exchange, err)
	}
	return decodeReply(ctx, r.c, reqType.Name(), repType, d)
}

// decodeReply is d's reply as a Rep, or the responder's error.
func decodeReply[Rep any](ctx context.Context, c *Connection, request string, repType *MessageType[Rep], d amqp.Delivery) (Rep, error) {
	var v Rep
	if why, ok := d.Headers[wire.HeaderReplyError]; ok {
		reasonText, _ := why.(string)
		return v, &ReplyError{Code: core.HeaderString(d.Headers, wire.HeaderReplyErrorCode), Reason: reasonText,
			Request: request, Responder: core.HeaderString(d.Headers, wire.HeaderOrigin)}
	}
	if d.Type != repType.Name() {
		return v, fmt.Errorf("request %s: the reply: %w: it is %q, not %q", request, ErrOtherType, d.Type, repType.Name())
	}
	codec, err := core.CodecFor(repType, connLink{c})
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

// call sends o as a request and waits for its reply.
func (r *Requester) call(ctx context.Context, o amqpx.Outgoing) (amqp.Delivery, error) {
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
	m.CorrelationId, m.ReplyTo, m.DeliveryMode = id, r.replyTo(), amqp.Transient
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
	cl.span = c.startPublish(ctx, o)
	err := c.checkExchange(ctx, o.Exchange)
	if err == nil {
		err = c.blockedErr()
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
		return c.publishError(*o, err)
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
		return nil, fmt.Errorf("%w: %w", ErrNoReply, ErrClosed)
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
		r.c.metrics.Add(r.c.metrics.LateReplies, r.replyTo())
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
		cl.failWith(&PublishError{Exchange: ret.Exchange, RoutingKey: ret.RoutingKey, Err: ErrUnroutable})
	}
}

// session returns the live reply session, opening one when there is none.
// One open at a time; each caller waits for it only as long as its ctx.
func (r *Requester) session(ctx context.Context) (*replySession, error) {
	for {
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return nil, fmt.Errorf("%w: %w", ErrNoReply, ErrClosed)
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
			err = fmt.Errorf("%w: %w", ErrNoReply, ErrClosed)
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
	ch, conn, err := r.c.channelOn(ctx)
	if err != nil {
		return nil, err
	}
	cc := r.c.callOn(ch)
	from := core.DirectReplyTo
	if r.queue != "" {
		from = r.queue
		if len(from) > maxReplyQueueName {
			cc.Close(ctx)
			return nil, fmt.Errorf("the reply queue %q: %w: its name is %d bytes, over AMQP's 255", from, ErrInvalidMessage, len(from))
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
	p, err := amqpx.NewRequestPublisher(ctx, r.c.blockedNote, ch, r.c.corkOf(conn), onReturn, &r.calls)
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
	err := &unavailableError{err: fmt.Errorf("%w: the reply channel closed before the reply came (direct reply-to delivers it to that channel only): %w", ErrNoReply, cause)}
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
	wait := r.c.cfg.reconnectMin
	for {
		if _, err := r.session(ctx); err == nil || ctx.Err() != nil || errors.Is(err, ErrClosed) {
			return
		}
		select {
		case <-time.After(wait):
		case <-r.c.upSignal():
		case <-ctx.Done():
			return
		}
		wait = min(2*wait, r.c.cfg.reconnectMax)
	}
}

// Close stops the Requester: every request still waiting fails with an
// error matching ErrNoReply and ErrClosed, and its channel is closed,
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
	err := fmt.Errorf("%w: %w", ErrNoReply, ErrClosed)
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
