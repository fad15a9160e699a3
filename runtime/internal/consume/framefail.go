package consume

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/core"
	amqp "github.com/rabbitmq/amqp091-go"
)

// A frame amqp091-go cannot read (a header table it refuses, where the
// header filter is not in place: under amqps, or a shape the filter does
// not know) makes amqp091-go close the whole connection (a FRAME_ERROR of
// its own, not the broker's); the broker puts the message back at the head
// of the queue and the consumer's next session meets it again. The
// consumer whose session died that way is counted (acemq.consumer.frame_errors),
// logged once at Error with its queue, reported as failing by Stats (and
// so by HealthHandler), and from then on subscribes on a connection of its
// own, so that its failures no longer take the publishers and the other
// consumers of the shared connection with them; each further death of
// that kind doubles its wait before subscribing again, from
// frameFailMin to frameFailMax: a slow retry, never a hot loop. The
// message stays on the queue for the operator (docs/reliability.md,
// "Hostile header tables").
const (
	frameFailMin = time.Second
	frameFailMax = time.Minute
	// frameFailHealthy is how long after its last frame error a consumer
	// is reported failing.
	frameFailHealthy = 2 * frameFailMax
)

// errConsumerClosing is what the subscription of a consumer being closed
// meets; the resubscribe loop then stops.
var errConsumerClosing = errors.New("the consumer is closing")

// clientFrameError is the error a session's channel was closed with when
// amqp091-go itself closed the connection on a frame it could not parse;
// else nil. amqp091-go closes with a FRAME_ERROR of its own on every read
// error, a lost socket (EOF, reset) too: only a parse error's reason
// counts. The broker's own FRAME_ERROR (frame_too_large) is a close from
// the server.
func clientFrameError(e *amqp.Error) *amqp.Error {
	if e == nil || e.Code != amqp.FrameError || e.Server {
		return nil
	}
	for _, parse := range []*amqp.Error{amqp.ErrSyntax, amqp.ErrFrame, amqp.ErrFrameTooLarge} {
		if strings.Contains(e.Reason, parse.Reason) {
			return e
		}
	}
	return nil
}

// frameFailed is called for a dead session: when a frame error of the
// client closed its connection, it counts it, isolates the consumer on a
// connection of its own and returns the wait before the next subscribe;
// otherwise it returns 0 and forgets earlier frame errors.
func (cs *Consumer) frameFailed(s *session) time.Duration {
	e := clientFrameError(s.lostErr())
	n, wait := cs.stats.frameFailed(e, time.Since(s.began) > frameFailMax)
	if e == nil {
		return 0
	}
	cs.isolated.Store(true)
	cs.metrics.Add(cs.metrics.FrameErrors, cs.queue)
	if n == 1 {
		cs.log.Error("acemq: the consumer's connection was closed on a frame the client cannot read (a message's header table?); it moves to a connection of its own and backs off",
			"err", e, "next_in", wait)
	} else {
		cs.log.Debug("acemq: the consumer's connection was closed on a frame the client cannot read again", "err", e, "frame_errors", n, "next_in", wait)
	}
	return wait
}

// frameFailed records a session's end: with a frame error, the count of
// such ends in a row (started again when the session lived longer than
// frameFailMax) and the wait before the next subscribe; without, the count
// is forgotten.
func (c *consumerCounters) frameFailed(e *amqp.Error, lived bool) (int, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e == nil {
		c.frameFails = 0
		return 0, 0
	}
	if lived {
		c.frameFails = 0
	}
	c.frameFails++
	c.frameTotal++
	wait := min(frameFailMin<<min(c.frameFails-1, 16), frameFailMax)
	c.frameErr = fmt.Errorf("its connection was closed on a frame the client cannot read, %d times in a row (next try in %s): %w", c.frameFails, wait, e)
	c.frameAt = time.Now()
	return c.frameFails, wait
}

// failing is the frame error to report while the last one is recent.
func (c *consumerCounters) failing() error {
	if c.frameErr == nil || time.Since(c.frameAt) > frameFailHealthy {
		return nil
	}
	return c.frameErr
}

// channelOn opens a channel for a subscription: on the shared connection,
// or, once the consumer is isolated, on its own.
func (cs *Consumer) channelOn(ctx context.Context) (*amqp.Channel, *amqp.Connection, error) {
	if !cs.isolated.Load() {
		return cs.conn.ChannelOn(ctx)
	}
	conn, err := cs.ownConn(ctx)
	if err != nil {
		return nil, nil, err
	}
	ch, err := cs.conn.NewChannel(ctx, conn)
	if err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("open channel on the consumer's own connection: %w", err)
	}
	return ch, conn, nil
}

// ownConn is the consumer's own connection, dialled when it has none alive.
func (cs *Consumer) ownConn(ctx context.Context) (*amqp.Connection, error) {
	cs.mu.Lock()
	conn := cs.own
	cs.mu.Unlock()
	if conn != nil && !conn.IsClosed() {
		return conn, nil
	}
	if cs.conn.Closed() {
		return nil, core.ErrClosed
	}
	conn, err := cs.conn.DialOwn(ctx)
	if err != nil {
		return nil, err
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closing {
		conn.Close()
		return nil, errConsumerClosing
	}
	cs.own = conn
	return conn, nil
}

// releaseOwn closes the consumer's own connection at the end of Close: in
// the background when Close abandoned its channel (serr).
func (cs *Consumer) releaseOwn(s *session, serr error) {
	var ab *abandonedError
	if errors.As(serr, &ab) {
		go cs.closeOwn(s)
		return
	}
	cs.closeOwn(s)
}

// closeOwn closes the consumer's own connection, if any, once s's channel
// has closed (its last acks are out), within a bound.
func (cs *Consumer) closeOwn(s *session) {
	cs.mu.Lock()
	conn := cs.own
	cs.mu.Unlock()
	if conn == nil {
		return
	}
	if s != nil && s.conn == conn {
		select {
		case <-s.gone:
		case <-time.After(5 * time.Second):
		}
	}
	_ = conn.CloseDeadline(time.Now().Add(5 * time.Second))
}
