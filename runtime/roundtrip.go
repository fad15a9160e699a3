package runtime

import (
	"context"
	"errors"
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"
)

// amqp091-go's synchronous methods (channel.open, queue.declare,
// basic.get, confirm.select, basic.consume, basic.cancel, channel.close,
// ...) take no ctx: each writes its request and waits for the broker's
// reply for as long as the connection lives. A broker that stops reading
// (a network that drops what the client sends, a node that hangs) keeps
// them waiting until the heartbeats declare the connection dead, about
// three heartbeats later. Every call of the runtime that takes a ctx makes
// its round trips through roundTrip or newChannel, so that it returns at
// ctx's end; what it waited on is abandoned, never the connection (other
// callers on it go on): the request goes on in the background, and the
// channel it was on is closed once it returns (the broker answered, or the
// connection ended), which gives back to their queues the deliveries it
// held. The error says what was waited for and what was left, and matches
// ctx's.

// callChannel is a channel one call uses for its round trips, each bounded
// by the call's ctx (roundTrip). Once a round trip is abandoned the channel
// belongs to the goroutine still waiting on it, which closes it: the call
// must not use it any more (amqp091-go's channels take one round trip at a
// time).
type callChannel struct {
	c         *Connection
	ch        *amqp.Channel
	abandoned bool
}

// stalledError is the error of a round trip given up at ctx's end.
type stalledError struct {
	what string // the request: "queue.declare"
	left string // what was abandoned
	note string // the broker's block, if any (blockedNote)
	err  error  // ctx's
}

func (e *stalledError) Error() string {
	return fmt.Sprintf("the broker did not answer %s in time%s; abandoned %s: %v", e.what, e.note, e.left, e.err)
}

func (e *stalledError) Unwrap() error { return e.err }

// abandonedChannel is what a stalledError says of a channel left to close
// on its own.
const abandonedChannel = "its channel, not the connection (the channel is closed once the broker answers or the connection ends; what it held goes back to its queue)"

// roundTrip runs call, one request on cc's channel that waits for the
// broker's reply, and returns what it returns; when ctx ends first it
// returns at once a *stalledError naming what, and cc is abandoned (see
// callChannel). A ctx already done sends nothing.
func roundTrip[T any](ctx context.Context, cc *callChannel, what string, call func(*amqp.Channel) (T, error)) (T, error) {
	var zero T
	if cc.abandoned {
		return zero, fmt.Errorf("%s: %w", what, errAbandoned)
	}
	if err := ctx.Err(); err != nil {
		return zero, fmt.Errorf("%s not sent: %w", what, err)
	}
	if ctx.Done() == nil {
		return call(cc.ch)
	}
	v, err, ok := within(ctx, func() (T, error) { return call(cc.ch) }, func(T, error) { closeQuietly(cc.ch) })
	if !ok {
		cc.abandoned = true
		return zero, &stalledError{what: what, left: abandonedChannel, note: cc.c.blockedNote(), err: ctx.Err()}
	}
	return v, err
}

// errAbandoned is the error of a call on a channel a round trip abandoned.
var errAbandoned = errors.New("the channel was abandoned by an earlier round trip")

// within runs call in a goroutine and returns its results, with ok, if it
// returns before ctx ends; otherwise it returns at ctx's end with ok
// false, and late gets call's results once it returns (to clean up).
func within[T any](ctx context.Context, call func() (T, error), late func(T, error)) (v T, err error, ok bool) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result)
	gone := make(chan struct{})
	go func() {
		v, err := call()
		select {
		case done <- result{v, err}:
		case <-gone:
			late(v, err)
		}
	}()
	select {
	case r := <-done:
		return r.v, r.err, true
	case <-ctx.Done():
		close(gone)
		return v, err, false
	}
}

// do is roundTrip for a request that returns only an error.
func (cc *callChannel) do(ctx context.Context, what string, call func(*amqp.Channel) error) error {
	_, err := roundTrip(ctx, cc, what, func(ch *amqp.Channel) (struct{}, error) { return struct{}{}, call(ch) })
	return err
}

// close closes the channel within ctx; past it (or once abandoned) the
// close goes on in the background.
func (cc *callChannel) close(ctx context.Context) {
	if cc.abandoned || cc.ch.IsClosed() {
		return
	}
	if ctx.Err() != nil {
		go closeQuietly(cc.ch)
		return
	}
	_ = cc.do(ctx, "channel.close", closeChannel)
}

func closeChannel(ch *amqp.Channel) error { return ch.Close() }

// closeQuietly closes ch, for a channel nobody waits on.
func closeQuietly(ch *amqp.Channel) {
	if ch != nil {
		_ = ch.Close()
	}
}

// newChannel opens a channel on conn within ctx: channel.open is a round
// trip too. A channel that opens after ctx ended is closed.
func (c *Connection) newChannel(ctx context.Context, conn *amqp.Connection) (*amqp.Channel, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("channel.open not sent: %w", err)
	}
	if ctx.Done() == nil {
		return conn.Channel()
	}
	ch, err, ok := within(ctx, conn.Channel, func(ch *amqp.Channel, _ error) { closeQuietly(ch) })
	if !ok {
		return nil, &stalledError{what: "channel.open", left: "the channel it asked for, not the connection (closed if it opens)", note: c.blockedNote(), err: ctx.Err()}
	}
	return ch, err
}

// callChannel opens a channel for one call's round trips.
func (c *Connection) callChannel(ctx context.Context) (*callChannel, error) {
	ch, err := c.channel(ctx)
	if err != nil {
		return nil, err
	}
	return &callChannel{c: c, ch: ch}, nil
}

// stalled reports an error of a round trip given up at ctx's end.
func stalled(err error) bool {
	var se *stalledError
	return errors.As(err, &se)
}
