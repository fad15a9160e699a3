package amqpx

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
// its round trips through RoundTrip or newChannel, so that it returns at
// ctx's end; what it waited on is abandoned, never the connection (other
// callers on it go on): the request goes on in the background, and the
// channel it was on is closed once it returns (the broker answered, or the
// connection ended), which gives back to their queues the deliveries it
// held. The error says what was waited for and what was left, and matches
// ctx's.

// CallChannel is a channel one call uses for its round trips, each bounded
// by the call's ctx (RoundTrip). Once a round trip is abandoned the channel
// belongs to the goroutine still waiting on it, which closes it: the call
// must not use it any more (amqp091-go's channels take one round trip at a
// time).
type CallChannel struct {
	// Note is what a StalledError adds about the connection: the broker's
	// block, if any.
	Note      func() string
	Ch        *amqp.Channel
	Abandoned bool
}

// StalledError is the error of a round trip given up at ctx's end.
type StalledError struct {
	What string // the request: "queue.declare"
	Left string // what was abandoned
	Note string // the broker's block, if any (blockedNote)
	Err  error  // ctx's
}

func (e *StalledError) Error() string {
	return fmt.Sprintf("the broker did not answer %s in time%s; abandoned %s: %v", e.What, e.Note, e.Left, e.Err)
}

func (e *StalledError) Unwrap() error { return e.Err }

// abandonedChannel is what a StalledError says of a channel left to close
// on its own.
const abandonedChannel = "its channel, not the connection (the channel is closed once the broker answers or the connection ends; what it held goes back to its queue)"

// RoundTrip runs call, one request on cc's channel that waits for the
// broker's reply, and returns what it returns; when ctx ends first it
// returns at once a *StalledError naming what, and cc is abandoned (see
// CallChannel). A ctx already done sends nothing.
func RoundTrip[T any](ctx context.Context, cc *CallChannel, what string, call func(*amqp.Channel) (T, error)) (T, error) {
	var zero T
	if cc.Abandoned {
		return zero, fmt.Errorf("%s: %w", what, errAbandoned)
	}
	if err := ctx.Err(); err != nil {
		return zero, fmt.Errorf("%s not sent: %w", what, err)
	}
	if ctx.Done() == nil {
		return call(cc.Ch)
	}
	v, err, ok := Within(ctx, func() (T, error) { return call(cc.Ch) }, func(T, error) { CloseQuietly(cc.Ch) })
	if !ok {
		cc.Abandoned = true
		return zero, &StalledError{What: what, Left: abandonedChannel, Note: cc.Note(), Err: ctx.Err()}
	}
	return v, err
}

// errAbandoned is the error of a call on a channel a round trip abandoned.
var errAbandoned = errors.New("the channel was abandoned by an earlier round trip")

// Within runs call in a goroutine and returns its results, with ok, if it
// returns before ctx ends; otherwise it returns at ctx's end with ok
// false, and late gets call's results once it returns (to clean up).
func Within[T any](ctx context.Context, call func() (T, error), late func(T, error)) (v T, err error, ok bool) {
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

// Do is RoundTrip for a request that returns only an error.
func (cc *CallChannel) Do(ctx context.Context, what string, call func(*amqp.Channel) error) error {
	_, err := RoundTrip(ctx, cc, what, func(ch *amqp.Channel) (struct{}, error) { return struct{}{}, call(ch) })
	return err
}

// Close closes the channel within ctx; past it (or once abandoned) the
// Close goes on in the background.
func (cc *CallChannel) Close(ctx context.Context) {
	if cc.Abandoned || cc.Ch.IsClosed() {
		return
	}
	if ctx.Err() != nil {
		go CloseQuietly(cc.Ch)
		return
	}
	_ = cc.Do(ctx, "channel.close", closeChannel)
}

func closeChannel(ch *amqp.Channel) error { return ch.Close() }

// CloseQuietly closes ch, for a channel nobody waits on.
func CloseQuietly(ch *amqp.Channel) {
	if ch != nil {
		_ = ch.Close()
	}
}

// NewChannel opens a channel on conn within ctx: channel.open is a round
// trip too. A channel that opens after ctx ended is closed. note is the
// broker's block, for the error.
func NewChannel(ctx context.Context, conn *amqp.Connection, note func() string) (*amqp.Channel, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("channel.open not sent: %w", err)
	}
	if ctx.Done() == nil {
		return conn.Channel()
	}
	ch, err, ok := Within(ctx, conn.Channel, func(ch *amqp.Channel, _ error) { CloseQuietly(ch) })
	if !ok {
		return nil, &StalledError{What: "channel.open", Left: "the channel it asked for, not the connection (closed if it opens)", Note: note(), Err: ctx.Err()}
	}
	return ch, err
}

// Stalled reports an error of a round trip given up at ctx's end.
func Stalled(err error) bool {
	var se *StalledError
	return errors.As(err, &se)
}
