package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/obs"
	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/trace"
)

// Delivery is one unsettled message taken by Pull. It keeps every header
// (an operator reads x-acemq-error); settle it with Ack or Nack. Left
// unsettled, it returns to its queue when the connection closes, or when a
// later Pull from the same queue fails (the queue was deleted, or the
// Pull's ctx ended before the broker answered).
type Delivery struct {
	Body        []byte
	Headers     map[string]any
	Envelope    Envelope
	Exchange    string
	RoutingKey  string
	Redelivered bool
	ContentType string
	Type        string

	ch    *amqp.Channel
	tag   uint64
	acked bool // by Ack, for Browse's count of what it returns
}

// Ack settles the delivery: the broker forgets it. ctx is not consulted by
// the broker protocol (an ack has no reply); it is accepted for symmetry
// and checked before sending.
func (d *Delivery) Ack(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := d.ch.Ack(d.tag, false); err != nil {
		return fmt.Errorf("ack: %w", err)
	}
	d.acked = true
	return nil
}

// Nack returns the delivery to the head of its queue (requeue) or drops it
// (the queue's dead-letter exchange, if any, receives it).
func (d *Delivery) Nack(ctx context.Context, requeue bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := d.ch.Nack(d.tag, false, requeue); err != nil {
		return fmt.Errorf("nack: %w", err)
	}
	return nil
}

// Pull takes one message from queue without subscribing and returns it
// unsettled, or nil when the queue is empty. A missing queue is an error
// matching ErrQueueNotFound. ctx bounds the whole call: when it ends
// before the broker answers, Pull returns ctx's error and abandons the
// queue's Pull channel (what earlier Pulls from the queue left unsettled
// goes back to it, see Delivery). A Pull is the
// messaging conventions' receive operation: a span "<queue> receive", the
// child of ctx's, linked to the message's publish, and its measurements
// (docs/metrics.md).
func (c *Connection) Pull(ctx context.Context, queue string) (*Delivery, error) {
	start := time.Now()
	span := c.startReceive(ctx, queue, "receive")
	d, err := c.pull(ctx, queue, span)
	typ := ""
	if d != nil {
		typ = d.Type
	}
	c.metrics.Received(queue, typ, d != nil, time.Since(start), err)
	obs.EndReceive(span, err)
	return d, err
}

func (c *Connection) pull(ctx context.Context, queue string, span trace.Span) (*Delivery, error) {
	ch, err := c.pullChannel(ctx, queue)
	if err != nil {
		return nil, err
	}
	cc := c.callOn(ch)
	got, err := amqpx.RoundTrip(ctx, cc, "basic.get", func(ch *amqp.Channel) (pulled, error) {
		d, ok, err := ch.Get(queue, false)
		return pulled{d, ok}, err
	})
	if cc.Abandoned {
		// The channel closes once the Get returns: the next Pull opens a
		// fresh one.
		c.dropPullChannel(queue, ch)
	}
	if err != nil {
		return nil, fmt.Errorf("pull %q: %w", queue, notFound(err))
	}
	d, ok := got.d, got.ok
	if !ok {
		return nil, nil
	}
	env := core.EnvelopeOf(d.Headers, d.MessageId, d.CorrelationId, d.Type, d.ContentType)
	obs.ReceivedMessage(span, &d, env, true)
	return &Delivery{
		Body:        d.Body,
		Headers:     d.Headers,
		Envelope:    env,
		Exchange:    d.Exchange,
		RoutingKey:  d.RoutingKey,
		Redelivered: d.Redelivered,
		ContentType: d.ContentType,
		Type:        d.Type,
		ch:          ch,
		tag:         d.DeliveryTag,
	}, nil
}

// pulled is what basic.get returns.
type pulled struct {
	d  amqp.Delivery
	ok bool
}

// dropPullChannel forgets ch as queue's Pull channel.
func (c *Connection) dropPullChannel(queue string, ch *amqp.Channel) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pulls[queue] == ch {
		delete(c.pulls, queue)
	}
}

// pullChannel is the channel Pull uses for queue: one per queue, so that an
// error on one queue (which closes its channel and returns its unsettled
// deliveries) leaves the deliveries pulled from other queues alone.
func (c *Connection) pullChannel(ctx context.Context, queue string) (*amqp.Channel, error) {
	c.mu.Lock()
	if ch := c.pulls[queue]; ch != nil && !ch.IsClosed() {
		c.mu.Unlock()
		return ch, nil
	}
	c.mu.Unlock()
	ch, err := c.channel(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur := c.pulls[queue]; cur != nil && !cur.IsClosed() {
		go amqpx.CloseQuietly(ch) // a round trip: not under c.mu
		return cur, nil
	}
	if c.pulls == nil {
		c.pulls = map[string]*amqp.Channel{}
	}
	c.pulls[queue] = ch
	return ch, nil
}

// MessageCount is the number of messages ready in queue (not counting
// unsettled ones). A missing queue is an error matching ErrQueueNotFound.
func (c *Connection) MessageCount(ctx context.Context, queue string) (int, error) {
	cc, err := c.callChannel(ctx)
	if err != nil {
		return 0, fmt.Errorf("message count of %q: %w", queue, err)
	}
	defer cc.Close(ctx)
	q, err := inspect(ctx, cc, queue)
	if err != nil {
		return 0, fmt.Errorf("message count of %q: %w", queue, notFound(err))
	}
	return q.Messages, nil
}

// inspect is a passive queue.declare of queue (its counts), within ctx.
func inspect(ctx context.Context, cc *amqpx.CallChannel, queue string) (amqp.Queue, error) {
	return amqpx.RoundTrip(ctx, cc, "queue.declare", func(ch *amqp.Channel) (amqp.Queue, error) {
		return ch.QueueDeclarePassive(queue, false, false, false, false, nil)
	})
}

func notFound(err error) error {
	if amqpx.IsNotFound(err) {
		return fmt.Errorf("%w: %w", ErrQueueNotFound, err)
	}
	return err
}
