package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/core"
	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/trace"
)

// Pending is a message written to the broker whose confirm has not been
// waited for: what PublishAsync returns, as amqp091-go's
// DeferredConfirmation. Its outcome is the error Publish would have
// returned for the same message; it is settled by the broker's confirm,
// its return, or the loss of the channel, whether or not anyone waits.
type Pending struct {
	exchange, key string
	done          chan struct{}
	err           error // set before done is closed
	// a is the publish, allocated with its Pending (bench/NOTES.md,
	// "The publisher's CPU a message").
	a asyncPublish
}

// Done is closed once the outcome is known: Wait then returns at once.
func (p *Pending) Done() <-chan struct{} { return p.done }

// Wait waits for the broker's confirm and returns what Publish returns for
// the message: nil once confirmed; an error matching ErrUnroutable when no
// queue took a mandatory message, ErrNacked when the broker refused it,
// ErrUnavailable when the channel closed before the confirm (the message
// may have arrived). When ctx ends first Wait returns an error wrapping
// ctx's, as Publish does, and the message stays pending: a later Wait can
// still see its outcome.
func (p *Pending) Wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	default:
	}
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return errors.Join(&PublishError{Exchange: p.exchange, RoutingKey: p.key,
			Err: fmt.Errorf("waiting for the broker's confirm: %w", ctx.Err())})
	}
}

// PublishAsync encodes v with mt's codec and queues it for the writer of
// the connection's confirm channel, and returns without waiting for the
// write or the broker's confirm: the Pending's Wait (or Done) gives the
// outcome, a failed write included.
// Keeping many publishes pending from one goroutine pipelines them as
// PublishBatch does, without waiting for a whole batch; bound how many are
// pending (a window) so that memory and the broker's backlog stay bounded.
//
// The message is built and sent as Publish sends it (mandatory unless
// WithoutMandatory, a new x-acemq-id...), in the order of the calls. An
// error from PublishAsync means the message was not queued, so never sent:
// an encoding error matching ErrInvalidMessage, ErrBlocked while the broker
// blocks the connection, ErrUnavailable during an outage, ctx's error when
// it ended while the write queue was full. ctx bounds the dial, the
// codec's registry calls, the wait for room and the wait for the write (a
// message whose ctx ended before the writer reached it is not sent, and its
// Pending says so), not the confirm: cancelling it after the write does not
// touch the Pending.
func PublishAsync[T any](ctx context.Context, c *Connection, mt *MessageType[T], exchange string, v T, opts ...PublishOption) (*Pending, error) {
	codec, err := core.CodecFor(mt, connLink{c})
	if err != nil {
		return nil, err
	}
	o, _, err := c.encodeOne(ctx, mt.Name(), codec, exchange, v, opts)
	if err != nil {
		return nil, err
	}
	if err := c.routeDue(&o); err != nil {
		return nil, fmt.Errorf("publish %s to exchange %q: %w", mt.Name(), exchange, err)
	}
	return c.publishAsync(ctx, false, o)
}

// publishAsync writes o on the application's confirm channel (with side,
// the consumers') and returns its Pending, settled from the confirm loop.
// Its span and its acemq.publish.duration end with the outcome, as a
// synchronous publish's.
func (c *Connection) publishAsync(ctx context.Context, side bool, o amqpx.Outgoing) (*Pending, error) {
	pd := &Pending{exchange: o.Exchange, key: o.Key, done: make(chan struct{})}
	pd.a.pd = pd
	if err := c.sendAsync(ctx, side, &o, &pd.a); err != nil {
		<-pd.done // settled with err, or with the channel's loss during the write
		return nil, pd.err
	}
	return pd, nil
}

// publishThen is publishAsync without a Pending: o's outcome, the error
// Publish would have returned, goes to then once (from the confirm loop's
// drainer), after its span and its acemq.publish.duration ended. An error
// means o was not queued; then has had an outcome by the time it returns
// (that error, or the channel's loss during the write). arrived, when
// set, is marked once the outcome is known, before it waits for the
// drainer (inflight.arrived).
func (c *Connection) publishThen(ctx context.Context, side bool, o amqpx.Outgoing, then func(error), arrived *atomic.Bool) error {
	a := &asyncPublish{then: then}
	a.f.Arrived = arrived
	return c.sendAsync(ctx, side, &o, a)
}

// asyncPublish is an asynchronous publish: its write's bookkeeping on the
// confirm channel and what its outcome needs, in one allocation (with its
// Pending's, for publishAsync).
type asyncPublish struct {
	c           *Connection
	span        trace.Span
	start       time.Time
	exchange    string
	key         string
	typ, origin string
	settled     atomic.Bool
	// The outcome goes to pd (publishAsync's) or then (publishThen's).
	pd   *Pending
	then func(error)
	f    amqpx.Inflight
}

// settle is a's outcome, from the confirm channel (its inflight's then).
func (a *asyncPublish) settle(err error) { a.settleOnce(err) }

// settleOnce settles a with err unless it is settled already: its span
// and acemq.publish.duration end, then its outcome is the error Publish
// returns.
func (a *asyncPublish) settleOnce(err error) bool {
	if !a.settled.CompareAndSwap(false, true) {
		return false
	}
	o := amqpx.Outgoing{Exchange: a.exchange, Key: a.key, Origin: a.origin, Msg: amqp.Publishing{Type: a.typ}}
	if err != nil {
		err = a.c.publishError(o, err)
	}
	a.c.endPublish(a.span, &o, a.start, err)
	if err != nil {
		err = errors.Join(err) // the very form Publish returns
	}
	if a.pd == nil {
		a.then(err)
		return true
	}
	a.pd.err = err
	close(a.pd.done)
	return true
}

// sendAsync starts o's span, checks the exchange, takes the confirm
// channel (the side one with side) and queues o for its writer as a, as
// publishAll does for each message. When it returns an error, a has had
// an outcome (that error, or the channel's loss during the write).
func (c *Connection) sendAsync(ctx context.Context, side bool, o *amqpx.Outgoing, a *asyncPublish) error {
	a.c, a.start, a.exchange, a.key, a.origin = c, time.Now(), o.Exchange, o.Key, o.Origin
	a.span = c.startPublish(ctx, o)
	a.typ = o.Msg.Type
	a.f.Then = a.settle
	err := c.queueAsync(ctx, side, o, &a.f)
	if err != nil {
		a.settleOnce(err)
	}
	return err
}

// queueAsync is sendAsync's queueing of o as f.
func (c *Connection) queueAsync(ctx context.Context, side bool, o *amqpx.Outgoing, f *amqpx.Inflight) error {
	if err := c.checkExchange(ctx, o.Exchange); err != nil {
		return err
	}
	p, err := c.publisher(ctx, side)
	if err != nil {
		return err
	}
	if err := c.blockedErr(); err != nil {
		return err
	}
	if err := p.Fit(o); err != nil {
		return err
	}
	f.Key, f.Mandatory, f.Msg = amqpx.KeyOf(o), o.Mandatory, o.Msg
	return p.Enqueue(ctx, f)
}
