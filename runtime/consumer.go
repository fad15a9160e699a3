package runtime

import (
	"context"

	"github.com/acemq/acemq-go/runtime/internal/consume"
)

// ConsumerSpec is what generated code knows about a consumer: its queue,
// the manifest's retry policy and its routes.
type ConsumerSpec = consume.ConsumerSpec

// Consumer consumes one queue until Close. Its engine is
// internal/consume's (the delivery's life: receive, decode ahead, handle,
// settle, copy, hold, ack batching).
type Consumer struct{ e *consume.Consumer }

// Consume subscribes to spec.Queue and runs the routes' handlers on what
// arrives, until Close. Before it subscribes it declares q.dlq and q.parked
// (unless WithoutDeclare), so that a give-up never publishes into a queue
// that is not there. The retry policy is the WithRetry option's, else
// spec.Retry, else the connection's, else NoRetry().
//
// ctx bounds the start only (declaring and subscribing); handlers get a
// context carrying ctx's values that is cancelled when Close gives up
// waiting for them.
func Consume(ctx context.Context, c *Connection, spec ConsumerSpec, opts ...ConsumeOption) (*Consumer, error) {
	cfg := consume.Defaults()
	for _, o := range opts {
		o.applyConsume(&cfg)
	}
	c.consumeConfig(&cfg)
	e, err := consume.Start(ctx, spec, cfg)
	if err != nil {
		return nil, err
	}
	cs := &Consumer{e: e}
	if err := c.track(e); err != nil {
		e.Abort()
		return nil, err
	}
	c.metrics.ZeroQueue(spec.Queue)
	e.Run()
	return cs, nil
}

// Queue is the queue the consumer reads.
func (cs *Consumer) Queue() string { return cs.e.Queue() }

// Close stops the consumer: no new deliveries are taken, in-flight handlers
// finish, and retries held in memory are republished at once with their
// attempt advanced, so no count is lost. Deliveries prefetched but not
// started go back to the queue, with a basic.nack ("not processed": on
// RabbitMQ 4.3 a quorum queue does not count it against its delivery
// limit, as it counts a channel closed on them). Close waits for the broker's confirm of
// every copy the consumer wrote (a retry, a dead letter, a park) before it
// acks their originals. ctx bounds the whole of Close: when it expires,
// handlers still running get their context cancelled, held retries not yet
// republished and deliveries whose copy is not confirmed yet are left to
// the broker (it redelivers them), and Close returns an error matching
// ctx's. What Close gives up on is the consumer's own channel, never the
// connection (other consumers and publishers on it go on): when ctx ends
// with handlers still running, deliveries unsettled or the broker not
// answering, Close returns without waiting, the channel is closed in the
// background (the broker then puts its unsettled deliveries back on the
// queue; a handler that returns later settles nothing), and the error
// names the queue and how many handlers were still running and deliveries
// unsettled.
func (cs *Consumer) Close(ctx context.Context) error { return cs.e.Close(ctx) }

// Done is closed when the consumer has stopped for good: after Close, or
// once its connection was closed while it was resubscribing. Err says why.
func (cs *Consumer) Done() <-chan struct{} { return cs.e.Done() }

// Err is nil while the consumer runs and after Close; once it stopped for
// another reason (its connection closed under it) it is that reason,
// matching ErrClosed.
func (cs *Consumer) Err() error { return cs.e.Err() }

// Stats is a snapshot of what the consumer holds and has handled.
func (cs *Consumer) Stats() ConsumerStats { return cs.e.Stats() }

// The states of a Consumer (ConsumerStats.State).
const (
	ConsumerConsuming     = consume.ConsumerConsuming
	ConsumerResubscribing = consume.ConsumerResubscribing // its channel was lost; it subscribes again with backoff
	ConsumerStopped       = consume.ConsumerStopped       // Close was called, or its connection was closed
	// ConsumerFailing: its connection was closed on a frame the client
	// cannot read (a message's header table) in the last two minutes; it
	// consumes on a connection of its own and backs off.
	ConsumerFailing = consume.ConsumerFailing
)

// ConsumerStats is what a consumer has done since it started, for health
// checks and dashboards (Consumer.Stats).
type ConsumerStats = consume.ConsumerStats
