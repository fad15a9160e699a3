package amqpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/acemq/acemq-go/runtime/internal/core"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Publisher is one confirm-mode channel of a connection session: one
// carries the application's publishes, another the consumers' copies.
// Publishes are pipelined: each call queues its message for the channel's
// one writer goroutine (which takes the delivery tags and writes, in queue
// order, as many as are queued each time it wakes) and waits once, for its
// own outcome: its confirm, or its write's failure.
//
// A mandatory publish that no queue takes comes back as basic.return before
// its basic.ack. amqp091-go hands both to listeners from its one reader
// goroutine, in that order, and blocks until they are taken; one goroutine
// here takes both from unbuffered channels, so it always sees a return
// before the confirm of the same message. A return names no delivery tag:
// it is matched to the publish in flight with the same message id,
// exchange and routing key. The id alone is not enough: a consumer
// republishes a message (same id, another queue) while the confirm of the
// original publish, waiting for the broker's disk, may still be in flight.
// Neither are the three together when two publishes in flight share them
// (the same message twice on a dead-letter queue, replayed through one
// exchange): the broker returns an unroutable one at once, before the
// confirm of a routed one published earlier, so no order tells them
// apart. So there is never more than one: the writer holds a publish
// whose id, exchange and routing key are in flight until that one's
// confirm (the publishes behind it wait too, to keep their order).
type Publisher struct {
	ch *amqp.Channel
	// cork, when set, is the connection's socket: the writer corks it
	// while it writes a batch, so the batch goes out in one write.
	cork *CorkConn
	// frameMax is the connection's negotiated frame_max: what a message's
	// header frame must fit (framesize.go).
	FrameMax int
	// unconfirmed: the channel is not in confirm mode (a Requester's, whose
	// reply is its request's confirmation): a publish's outcome is its
	// write, and each basic.return goes to onReturn.
	unconfirmed bool
	onReturn    func(amqp.Return)
	// waiting, when set (a Requester's), counts its requests waiting for
	// their replies. While more wait than are queued, the writer, once
	// woken, yields once before it takes what is queued, so that the
	// callers woken with it (each by its reply) queue theirs too and the
	// batch goes out in one corked write (bench/NOTES.md, "RR1 at 64
	// in flight"). A lone request is written without the yield.
	waiting *atomic.Int64

	// One writer goroutine takes the tags and writes, in the order the
	// messages were queued (queued, under mu; kick wakes it). space bounds
	// the queue: a publish waits for room within its ctx, so that one
	// queued behind a write the broker does not read (a memory alarm)
	// gives up when its ctx does. The writer skips a message whose ctx
	// ended while it waited.
	space chan struct{}
	kick  chan struct{} // buffered 1
	quit  chan struct{} // closed by fail: the writer stops
	// freed (buffered 1) is signalled when a key leaves byKey: the writer
	// may be waiting for it (awaitKey).
	freed chan struct{}

	// thens are asynchronous outcomes for drainThens, off the loop;
	// draining says a drainer runs.
	thenMu   sync.Mutex
	thens    []thenOutcome
	draining bool
	// wrote are the outcomes of the unconfirmed writes of the writer's
	// batch, settled after it (settleWritten); the writer's alone.
	wrote []thenOutcome

	mu      sync.Mutex
	queued  []*Inflight
	pending map[uint64]*Inflight
	byKey   map[ReturnKey][]uint64 // tags in flight, oldest first
	dead    error                  // set once the channel is gone
}

// ErrChannelLost is the failure of publishes in flight when their channel
// closes before the broker confirmed them.
var ErrChannelLost = errors.New("the publishing channel closed before the broker confirmed")

// ReturnKey is what a basic.return says of the message it returns.
// ReturnKey is what a basic.return names of a publish: its message id,
// exchange and routing key.
type ReturnKey struct{ id, exchange, routingKey string }

type Inflight struct {
	Key      ReturnKey
	returned bool
	// What the writer writes, under tag, unless ctx ended first; msg is
	// dropped once written.
	ctx       context.Context
	tag       uint64
	Mandatory bool
	Msg       amqp.Publishing
	// written is set once the writer wrote it: a caller whose ctx ends
	// while it waits says which wait it gave up (the write, the confirm).
	written atomic.Bool
	// The outcome (a failed or skipped write included) goes to then when
	// it is set (an asynchronous publish), else to done (buffered 1): a
	// synchronous publish waits once, for the outcome, not for its write
	// and then its confirm.
	done chan error
	Then func(error)
	// arrived, when set, is marked once the outcome is known, before then
	// is queued for the drainer: a copy's bound no longer takes the copy
	// (copybound.go), whose outcome may wait there behind another's.
	Arrived *atomic.Bool
	// callerSettles (a Requester's unconfirmed request): a write that
	// succeeded is settled by its caller when it stops waiting, not by a
	// drainer goroutine, unless the caller stopped first. handover decides
	// which, once: handedOver (the writer's, after the write reached the
	// socket) or callerLeft (the caller's); a failure is the writer's, as
	// for every publish.
	CallerSettles bool
	handover      atomic.Int32
}

// The states of inflight.handover.
const (
	handedOver int32 = 1 + iota // written: its caller settles it
	callerLeft                  // its caller stopped waiting first: the writer settles it
)

// CallerSettled is the caller's side of f's handover: true when the writer
// handed f's successful write over and the caller is to settle it; false
// when the writer keeps it (not written yet, or failed).
func (f *Inflight) CallerSettled() bool {
	return f.CallerSettles && !f.handover.CompareAndSwap(0, callerLeft)
}

// settle hands f's outcome over; it never blocks the confirm loop. A
// synchronous publish's goes to its done. An asynchronous one's then is
// called off the loop, in order, by a drainer goroutine started when there
// is none (thens end spans and record metrics, which user code behind them
// may hold up): amqp091-go gives up a return or confirm its listener does
// not take within 5 s, and a return given up would make an unroutable
// publish look confirmed.
func (p *Publisher) settle(f *Inflight, err error) {
	if f.Then == nil {
		f.done <- err
		return
	}
	if f.Arrived != nil {
		f.Arrived.Store(true)
	}
	p.thenMu.Lock()
	p.thens = append(p.thens, thenOutcome{then: f.Then, err: err})
	start := !p.draining
	p.draining = true
	p.thenMu.Unlock()
	if start {
		go p.drainThens()
	}
}

// thenOutcome is an asynchronous publish's outcome waiting for its then.
type thenOutcome struct {
	then func(error)
	err  error
	f    *Inflight // the publish, when written by writeUnconfirmed
}

// drainThens calls the queued thens in order until none is left.
func (p *Publisher) drainThens() {
	var batch []thenOutcome
	for {
		p.thenMu.Lock()
		if len(p.thens) == 0 {
			p.draining = false
			p.thenMu.Unlock()
			return
		}
		batch, p.thens = p.thens, batch[:0]
		p.thenMu.Unlock()
		for i, o := range batch {
			o.then(o.err)
			batch[i] = thenOutcome{}
		}
	}
}

// NewPublisher puts ch in confirm mode, within ctx, and starts its
// goroutines; cork, when set, is the connection's socket (corkconn.go);
// note is the broker's block, for a stalled confirm.select.
func NewPublisher(ctx context.Context, note func() string, ch *amqp.Channel, cork *CorkConn) (*Publisher, error) {
	return startPublisher(ctx, note, ch, cork, nil, nil)
}

// NewRequestPublisher is a Requester's publisher of ch, gathering while
// more than one of its requests wait (publisher.waiting): in confirm mode
// when onReturn is nil; else without: each publish is settled once
// written, and the broker's returns go to onReturn (called from the
// publisher's loop; it must not block).
func NewRequestPublisher(ctx context.Context, note func() string, ch *amqp.Channel, cork *CorkConn, onReturn func(amqp.Return), waiting *atomic.Int64) (*Publisher, error) {
	return startPublisher(ctx, note, ch, cork, onReturn, waiting)
}

func startPublisher(ctx context.Context, note func() string, ch *amqp.Channel, cork *CorkConn, onReturn func(amqp.Return), waiting *atomic.Int64) (*Publisher, error) {
	if onReturn != nil {
		p := &Publisher{ch: ch, cork: cork, waiting: waiting, unconfirmed: true, onReturn: onReturn, space: make(chan struct{}, writeQueue), kick: make(chan struct{}, 1),
			freed: make(chan struct{}, 1), quit: make(chan struct{}), pending: map[uint64]*Inflight{}, byKey: map[ReturnKey][]uint64{}}
		returns := ch.NotifyReturn(make(chan amqp.Return))
		closes := ch.NotifyClose(make(chan *amqp.Error, 1))
		go p.loopUnconfirmed(returns, closes)
		go p.writer()
		return p, nil
	}
	cc := &CallChannel{Ch: ch, Note: note}
	if err := cc.Do(ctx, "confirm.select", func(ch *amqp.Channel) error { return ch.Confirm(false) }); err != nil {
		cc.Close(ctx)
		return nil, fmt.Errorf("confirm mode: %w", err)
	}
	p := &Publisher{ch: ch, cork: cork, waiting: waiting, space: make(chan struct{}, writeQueue), kick: make(chan struct{}, 1), freed: make(chan struct{}, 1),
		quit: make(chan struct{}), pending: map[uint64]*Inflight{}, byKey: map[ReturnKey][]uint64{}}
	returns := ch.NotifyReturn(make(chan amqp.Return))
	// The confirms are buffered so that amqp091-go's reader hands a
	// multiple ack's tags over without waiting for the loop at each one;
	// the returns stay unbuffered: the reader hands a return over before
	// it reads the confirm of the same message, so the loop has taken it
	// (and marks it before it takes anything else) before that confirm is
	// in the buffer.
	confirms := ch.NotifyPublish(make(chan amqp.Confirmation, confirmBuffer))
	closes := ch.NotifyClose(make(chan *amqp.Error, 1))
	go p.loop(returns, confirms, closes)
	go p.writer()
	return p, nil
}

// confirmBuffer is how many confirms amqp091-go's reader may hand over
// before the loop takes them.
const confirmBuffer = 256

func (p *Publisher) loop(returns <-chan amqp.Return, confirms <-chan amqp.Confirmation, closes <-chan *amqp.Error) {
	for {
		select {
		case r, ok := <-returns:
			if !ok {
				returns = nil
				continue
			}
			p.markReturned(r)
		case cf, ok := <-confirms:
			if !ok {
				var err error = amqp.ErrClosed
				if e, ok := <-closes; ok && e != nil {
					err = e
				}
				p.Fail(fmt.Errorf("%w (the message may have arrived): %w", ErrChannelLost, err))
				return
			}
			p.resolve(cf)
		}
	}
}

// loopUnconfirmed hands an unconfirmed channel's returns to onReturn until
// the channel closes.
func (p *Publisher) loopUnconfirmed(returns <-chan amqp.Return, closes <-chan *amqp.Error) {
	for r := range returns {
		p.onReturn(r)
	}
	var err error = amqp.ErrClosed
	if e, ok := <-closes; ok && e != nil {
		err = e
	}
	p.Fail(fmt.Errorf("%w: %w", ErrChannelLost, err))
}

func (p *Publisher) markReturned(r amqp.Return) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// Returns of one key arrive in publish order, but a confirm may be held
	// back (amqp091-go delivers confirms in tag order, returns at once): mark
	// the oldest publish of that key not marked yet.
	for _, tag := range p.byKey[ReturnKey{r.MessageId, r.Exchange, r.RoutingKey}] {
		if f := p.pending[tag]; f != nil && !f.returned {
			f.returned = true
			return
		}
	}
}

func (p *Publisher) resolve(cf amqp.Confirmation) {
	p.mu.Lock()
	f := p.pending[cf.DeliveryTag]
	delete(p.pending, cf.DeliveryTag)
	if f != nil {
		p.forget(f.Key, cf.DeliveryTag)
	}
	p.mu.Unlock()
	if f == nil {
		return
	}
	switch {
	case !cf.Ack:
		p.settle(f, core.ErrNacked)
	case f.returned:
		p.settle(f, core.ErrUnroutable)
	default:
		p.settle(f, nil)
	}
}

// forget drops tag from the return index; p.mu is held.
func (p *Publisher) forget(key ReturnKey, tag uint64) {
	tags := p.byKey[key]
	for i, t := range tags {
		if t == tag {
			tags = append(tags[:i], tags[i+1:]...)
			break
		}
	}
	if len(tags) == 0 {
		delete(p.byKey, key)
		select {
		case p.freed <- struct{}{}:
		default: // signalled already
		}
	} else {
		p.byKey[key] = tags
	}
}

func (p *Publisher) Fail(err error) {
	p.mu.Lock()
	p.dead = err
	close(p.quit)
	pending, queued := p.pending, p.queued
	p.pending, p.byKey, p.queued = map[uint64]*Inflight{}, map[ReturnKey][]uint64{}, nil
	p.mu.Unlock()
	for _, f := range pending {
		p.settle(f, err)
	}
	for _, f := range queued {
		<-p.space
		p.settle(f, err)
	}
}

func (p *Publisher) Alive() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dead == nil && !p.ch.IsClosed()
}

// Queue queues one message for the writer, waiting for room within ctx,
// and returns it: its outcome, its write's failure included, arrives on
// its done (awaitOutcome). A batch queues all its messages before it waits
// for any, so the writer writes them in one go (corked).
func (p *Publisher) Queue(ctx context.Context, exchange, key string, mandatory bool, msg amqp.Publishing) (*Inflight, error) {
	f := &Inflight{Key: ReturnKey{msg.MessageId, exchange, key}, Mandatory: mandatory, Msg: msg, done: make(chan error, 1)}
	return f, p.Enqueue(ctx, f)
}

// AwaitOutcome waits within ctx for the outcome of f, queued by queue.
func (f *Inflight) AwaitOutcome(ctx context.Context) error {
	select {
	case err := <-f.done:
		return err
	case <-ctx.Done():
	}
	if !f.written.Load() {
		return fmt.Errorf("the write did not finish (the broker is not reading; the message may still be sent): %w", ctx.Err())
	}
	return fmt.Errorf("waiting for the broker's confirm: %w", ctx.Err())
}

// writeQueue is how many messages may wait for the writer.
const writeQueue = 256

// Enqueue queues f for the writer, waiting for room within ctx. An
// asynchronous publish's outcome goes to f.Then, called off the confirm
// loop (settle); then is not called when enqueue returns an error, unless
// the channel closed meanwhile (then it may be called with the channel's
// loss too).
func (p *Publisher) Enqueue(ctx context.Context, f *Inflight) error {
	if err := ctx.Err(); err != nil {
		return err // the same error whether or not there is room
	}
	select {
	case p.space <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("waiting to write behind an earlier publish the broker has not read: %w", ctx.Err())
	}
	f.ctx = ctx
	p.mu.Lock()
	if p.dead != nil {
		err := p.dead
		p.mu.Unlock()
		<-p.space
		return err
	}
	p.queued = append(p.queued, f)
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default: // the writer is awake already
	}
	return nil
}

// writer writes what is queued, in order, until the channel is gone.
func (p *Publisher) writer() {
	var batch []*Inflight
	for {
		select {
		case <-p.kick:
		case <-p.quit:
			return
		}
		if p.waiting != nil {
			p.gather()
		}
		p.mu.Lock()
		batch, p.queued = p.queued, batch[:0]
		p.mu.Unlock()
		p.writeBatch(batch)
	}
}

// gather yields once while more requests wait for their replies than are
// queued: the callers woken with the writer (by their replies) are
// runnable and queue theirs before the batch is taken. With nothing else
// runnable Gosched returns at once; yielding again while the queue grew
// gathered no more (bench/NOTES.md, "RR1 at 64 in flight").
func (p *Publisher) gather() {
	p.mu.Lock()
	queued := len(p.queued)
	p.mu.Unlock()
	if p.waiting.Load() > int64(queued) {
		runtime.Gosched()
	}
}

// writeBatch writes batch in order, the connection corked meanwhile when
// there is more than one message (corkconn.go), and empties it. Before it
// waits for a publish of the same key in flight (awaitKey), it uncorks:
// that publish may be among the writes held, and its confirm would never
// come.
func (p *Publisher) writeBatch(batch []*Inflight) {
	corked := false
	for i, f := range batch {
		if !p.unconfirmed && p.keyBusy(f) { // an unconfirmed publish is never in byKey
			if corked {
				p.cork.Uncork()
				corked = false
			}
			p.awaitKey(f)
		}
		if !corked && p.cork != nil && len(batch)-i > 1 {
			p.cork.Cork()
			corked = true
		}
		p.writeOne(f)
		batch[i] = nil
		<-p.space
	}
	if corked {
		p.cork.Uncork()
	}
	p.settleWritten()
}

// settleWritten settles the unconfirmed publishes written by the batch
// (writeUnconfirmed), after the batch's uncork: a write held by the cork
// has not reached the socket before. When the socket's write failed, so
// did theirs.
func (p *Publisher) settleWritten() {
	if len(p.wrote) == 0 {
		return
	}
	var failed error
	if p.cork != nil {
		failed = p.cork.Failed()
	}
	p.thenMu.Lock()
	queued := false
	for i, o := range p.wrote {
		err := o.err
		if err == nil && failed != nil {
			err = failed
		}
		p.wrote[i] = thenOutcome{}
		if err == nil && o.f != nil && o.f.CallerSettles && o.f.handover.CompareAndSwap(0, handedOver) {
			continue // its caller settles it (inflight.callerSettles)
		}
		p.thens = append(p.thens, thenOutcome{then: o.then, err: err})
		queued = true
	}
	p.wrote = p.wrote[:0]
	start := queued && !p.draining
	if start {
		p.draining = true
	}
	p.thenMu.Unlock()
	if start {
		go p.drainThens()
	}
}

// keyBusy reports whether a publish with f's message id, exchange and
// routing key is in flight.
func (p *Publisher) keyBusy(f *Inflight) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.byKey[f.Key]) > 0
}

// awaitKey waits while a publish with f's message id, exchange and
// routing key is in flight (see publisher), or until the channel is gone
// or f's caller gave up (writeOne then fails f).
func (p *Publisher) awaitKey(f *Inflight) {
	for {
		p.mu.Lock()
		busy := len(p.byKey[f.Key]) > 0
		p.mu.Unlock()
		if !busy {
			return
		}
		select {
		case <-p.freed:
		case <-p.quit:
			return
		case <-f.ctx.Done():
			return
		}
	}
}

// writeOne registers f under the next delivery tag and writes it.
func (p *Publisher) writeOne(f *Inflight) {
	if err := f.ctx.Err(); err != nil {
		// Its caller gave up while it waited: not sent.
		p.settle(f, fmt.Errorf("waiting to write behind an earlier publish the broker has not read: %w", err))
		return
	}
	if p.unconfirmed {
		p.writeUnconfirmed(f)
		return
	}
	f.tag = p.ch.GetNextPublishSeqNo()
	p.mu.Lock()
	if p.dead != nil {
		err := p.dead
		p.mu.Unlock()
		p.settle(f, err)
		return
	}
	p.pending[f.tag] = f
	p.byKey[f.Key] = append(p.byKey[f.Key], f.tag)
	p.mu.Unlock()
	err := p.ch.Publish(f.Key.exchange, f.Key.routingKey, f.Mandatory, false, f.Msg)
	f.Msg, f.ctx = amqp.Publishing{}, nil
	if err != nil {
		p.mu.Lock()
		_, still := p.pending[f.tag]
		delete(p.pending, f.tag)
		p.forget(f.Key, f.tag)
		p.mu.Unlock()
		if still {
			p.settle(f, err)
		} // else fail settled it with the channel's loss
		return
	}
	f.written.Store(true)
}

// writeUnconfirmed writes f on a channel without confirm mode: its write
// is its outcome, settled with the batch's (settleWritten; a synchronous
// publish's at once).
func (p *Publisher) writeUnconfirmed(f *Inflight) {
	p.mu.Lock()
	err := p.dead
	p.mu.Unlock()
	if err == nil {
		err = p.ch.Publish(f.Key.exchange, f.Key.routingKey, f.Mandatory, false, f.Msg)
	}
	f.Msg, f.ctx = amqp.Publishing{}, nil
	if err == nil {
		f.written.Store(true)
	}
	if f.Then == nil {
		f.done <- err
		return
	}
	p.wrote = append(p.wrote, thenOutcome{then: f.Then, err: err, f: f})
}

// ConnectionLost reports an error that comes from the connection, not
// from the message: the broker could not be reached, or the connection or
// channel went away. Such a publish may succeed if tried again.
func ConnectionLost(err error) bool {
	if errors.Is(err, core.ErrUnavailable) {
		return false // already marked
	}
	if errors.Is(err, core.ErrClosed) || errors.Is(err, core.ErrExchangeNotFound) || errors.Is(err, core.ErrNacked) || errors.Is(err, core.ErrUnroutable) {
		return false
	}
	if errors.Is(err, core.ErrUnreachable) || errors.Is(err, amqp.ErrClosed) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, ErrChannelLost) {
		return true
	}
	var ae *amqp.Error
	if errors.As(err, &ae) {
		switch ae.Code {
		case amqp.ConnectionForced, amqp.ChannelError, amqp.FrameError, amqp.UnexpectedFrame, amqp.InternalError, amqp.ResourceError:
			return true
		}
		return false
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// Fit makes o fit p's connection before it is written: a copy (o.origin
// set) loses foreign headers (FitFrame), an application publish (an
// outbox's row is one) that does not fit is refused. A copy is checked
// again as an application publish was (checkOutgoing): one the runtime
// made with a short string it cannot write is refused, not written.
func (p *Publisher) Fit(o *Outgoing) error {
	if o.Origin == "" || o.Origin == OriginOutbox {
		return TooLarge(o.Msg, p.FrameMax)
	}
	FitFrame(&o.Msg, p.FrameMax)
	return CheckOutgoing(o.Exchange, o.Key, &o.Msg, 0)
}
