package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/obs"
	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Browse reads queue without consuming it: it calls fn for each message in
// queue order, the first max of them (every one when max <= 0), holding
// each unsettled on a consumer of its own (as many as the queue held when
// the look began), and when the look is over it returns all of them with
// one nack (multiple, requeue), which the broker applies at once: each message goes back to its place, and whoever reads
// the queue next sees it as it was. (Returned one at a time, a message
// would be the next one read, for ever.) It waits until the broker counts
// them back before it returns (the broker puts a large batch back
// gradually). It returns how many messages it read.
//
// fn may Ack a delivery to take it out of the queue; it must not Nack one.
// An error from fn stops the look (everything read still goes back) and is
// returned. While a look runs, the messages it holds are invisible to
// other readers; if the process dies they return when its connection
// closes. On a quorum queue each return counts against the delivery limit.
//
// A look is one span "<queue> browse", the child of ctx's, linked to each
// message's publish; the messages it reads count in acemq.browsed, not as
// consumed, except one fn acks (docs/metrics.md).
func (c *Connection) Browse(ctx context.Context, queue string, max int, fn func(*Delivery) error) (int, error) {
	span := c.startReceive(ctx, queue, "browse")
	n, err := c.browse(ctx, queue, max, fn, span)
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("messaging.batch.message_count", n))
	}
	obs.EndReceive(span, err)
	return n, err
}

func (c *Connection) browse(ctx context.Context, queue string, max int, fn func(*Delivery) error, span trace.Span) (int, error) {
	cc, err := c.callChannel(ctx)
	if err != nil {
		return 0, fmt.Errorf("browse %q: %w", queue, err)
	}
	defer cc.Close(ctx)
	q, err := inspect(ctx, cc, queue)
	if err != nil {
		return 0, fmt.Errorf("browse %q: %w", queue, notFound(err))
	}
	want := q.Messages
	if max > 0 && max < want {
		want = max
	}
	if want == 0 {
		return 0, nil
	}
	// A consumer of its own with no prefetch limit: the broker pushes the
	// messages without a round trip each (basic.get costs one), and none is
	// acked, so the channel may hold them all.
	tag := "acemq-browse-" + core.NewID()
	deliveries, err := amqpx.RoundTrip(ctx, cc, "basic.consume", func(ch *amqp.Channel) (<-chan amqp.Delivery, error) {
		return ch.Consume(queue, tag, false, false, false, false, nil)
	})
	if err != nil {
		return 0, fmt.Errorf("browse %q: %w", queue, notFound(err))
	}
	n, acked, err := c.browseRead(ctx, cc.Ch, queue, want, deliveries, fn, span)
	if cc.Ch.IsClosed() {
		return n, errors.Join(err, fmt.Errorf("browse %q: the channel closed (what was read returns to the queue)", queue))
	}
	// Stop the pushes, then return everything outstanding on the channel —
	// what fn saw and what was pushed after — with one nack (tag 0,
	// multiple: all of them). Past ctx's end the channel is abandoned
	// instead: closing it returns them all the same.
	if cerr := cc.Do(ctx, "basic.cancel", func(ch *amqp.Channel) error { return ch.Cancel(tag, false) }); cerr != nil {
		return n, errors.Join(err, fmt.Errorf("browse %q: cancel: %w", queue, cerr))
	}
	if nerr := cc.Ch.Nack(0, true, true); nerr != nil {
		return n, errors.Join(err, fmt.Errorf("browse %q: return what was read (it returns when the channel closes): %w", queue, nerr))
	}
	if werr := waitReturned(ctx, cc, queue, q.Messages-acked); werr != nil {
		return n, errors.Join(err, fmt.Errorf("browse %q: %w", queue, werr))
	}
	return n, err
}

// browseRead calls fn for each delivery until want were read, fn fails,
// the queue stays idle or ctx ends; it returns how many it read and how
// many of them fn acked.
func (c *Connection) browseRead(ctx context.Context, ch *amqp.Channel, queue string, want int, deliveries <-chan amqp.Delivery,
	fn func(*Delivery) error, span trace.Span) (n, acked int, err error) {
	idle := time.NewTimer(browseIdle)
	defer idle.Stop()
	for n < want {
		select {
		case d, ok := <-deliveries:
			if !ok {
				return n, acked, nil
			}
			n++
			env := core.EnvelopeOf(d.Headers, d.MessageId, d.CorrelationId, d.Type, d.ContentType)
			obs.ReceivedMessage(span, &d, env, false)
			del := &Delivery{
				Body: d.Body, Headers: d.Headers, Envelope: env,
				Exchange: d.Exchange, RoutingKey: d.RoutingKey, Redelivered: d.Redelivered,
				ContentType: d.ContentType, Type: d.Type, ch: ch, tag: d.DeliveryTag,
			}
			err = fn(del)
			if del.acked {
				acked++
			}
			c.metrics.BrowsedOne(queue, d.Type, del.acked)
			if err != nil {
				return n, acked, err
			}
			idle.Reset(browseIdle)
		case <-idle.C:
			return n, acked, nil // someone else took the rest
		case <-ctx.Done():
			return n, acked, ctx.Err()
		}
	}
	return n, acked, nil
}

// browseIdle is how long Browse waits for the next message before it
// takes the queue as read (another consumer took the rest).
const browseIdle = 5 * time.Second

// waitReturned waits until queue counts at least n ready messages again
// after a nack that returned them: the broker puts a large batch back
// gradually (2000 persistent messages took seconds on a busy 3.10), and a
// reader right after should find the queue whole. It gives up when the
// count stops growing for 2s, after 30s (someone else is consuming), or
// at ctx's end (the messages go back all the same). Its error is for a
// broker that did not answer the count in time (its channel abandoned).
func waitReturned(ctx context.Context, cc *amqpx.CallChannel, queue string, n int) error {
	deadline := time.Now().Add(30 * time.Second)
	best, since := -1, time.Now()
	for time.Now().Before(deadline) && ctx.Err() == nil {
		q, err := inspect(ctx, cc, queue)
		if amqpx.Stalled(err) {
			return fmt.Errorf("waiting for %d messages back on the queue (they go back all the same): %w", n, err)
		}
		if err != nil || q.Messages >= n {
			return nil
		}
		if q.Messages > best {
			best, since = q.Messages, time.Now()
		} else if time.Since(since) > 2*time.Second {
			return nil
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
		}
	}
	return nil
}
