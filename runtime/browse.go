package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Browse reads queue without consuming it: it calls fn for each message in
// queue order, the first max of them (every one when max <= 0), holding
// each unsettled on a channel of its own, and when the look is over it
// returns all of them with one nack (multiple, requeue), which the broker
// applies at once: each message goes back to its place, and whoever reads
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
func (c *Connection) Browse(ctx context.Context, queue string, max int, fn func(*Delivery) error) (int, error) {
	ch, err := c.channel(ctx)
	if err != nil {
		return 0, fmt.Errorf("browse %q: %w", queue, err)
	}
	defer ch.Close()
	var n, acked int
	var last uint64
	for max <= 0 || n < max {
		if err = ctx.Err(); err != nil {
			break
		}
		d, ok, gerr := ch.Get(queue, false)
		if gerr != nil {
			err = fmt.Errorf("browse %q: %w", queue, notFound(gerr))
			break
		}
		if !ok {
			break
		}
		n++
		last = d.DeliveryTag
		del := &Delivery{
			Body: d.Body, Headers: d.Headers,
			Envelope: envelopeOf(d.Headers, d.MessageId, d.CorrelationId, d.Type, d.ContentType),
			Exchange: d.Exchange, RoutingKey: d.RoutingKey, Redelivered: d.Redelivered,
			ContentType: d.ContentType, Type: d.Type, ch: ch, tag: d.DeliveryTag,
		}
		err = fn(del)
		if del.acked {
			acked++
		}
		if err != nil {
			break
		}
	}
	if last > 0 && !ch.IsClosed() {
		if nerr := ch.Nack(last, true, true); nerr != nil {
			return n, errors.Join(err, fmt.Errorf("browse %q: return what was read (it returns when the channel closes): %w", queue, nerr))
		}
		waitReturned(ch, queue, n-acked)
	}
	return n, err
}

// waitReturned waits until queue counts at least n ready messages again
// after a nack that returned n: the broker puts a large batch back
// gradually (2000 persistent messages took seconds on a busy 3.10), and a
// reader right after should find the queue whole. It gives up when the
// count stops growing for 2s, or after 30s (someone else is consuming).
func waitReturned(ch *amqp.Channel, queue string, n int) {
	deadline := time.Now().Add(30 * time.Second)
	best, since := -1, time.Now()
	for time.Now().Before(deadline) {
		q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
		if err != nil || q.Messages >= n {
			return
		}
		if q.Messages > best {
			best, since = q.Messages, time.Now()
		} else if time.Since(since) > 2*time.Second {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
