// Package browse reads a queue without consuming it: every message pulled
// is held unsettled until the look is over, then all are returned, and the
// broker puts each back in its place (checked on RabbitMQ 3.10: the order
// after a look is the order before). A message returned at once would be
// the next one pulled, for ever; holding them all is what makes a look
// finish.
package browse

import (
	"context"
	"errors"

	"github.com/acemq/acemq-go/runtime"
)

// Each calls fn for the first max messages of queue (every message when
// max <= 0), in queue order, then returns all of them to the queue.
// progress, when set, is called after each message with how many were
// read. fn returning an error stops the look (the messages still go back).
func Each(ctx context.Context, c *runtime.Connection, queue string, max int, fn func(*runtime.Delivery) error, progress func(int)) (int, error) {
	var held []*runtime.Delivery
	var err error
	for max <= 0 || len(held) < max {
		if err = ctx.Err(); err != nil {
			break
		}
		var d *runtime.Delivery
		d, err = c.Pull(ctx, queue)
		if err != nil || d == nil {
			break
		}
		held = append(held, d)
		if progress != nil {
			progress(len(held))
		}
		if err = fn(d); err != nil {
			break
		}
	}
	// Return them last first: each goes back to its place either way, and
	// this order also keeps it for brokers that requeue at the head.
	var errs []error
	for i := len(held) - 1; i >= 0; i-- {
		if nerr := held[i].Nack(context.WithoutCancel(ctx), true); nerr != nil {
			errs = append(errs, nerr)
			break // the channel is gone: the rest return with it
		}
	}
	return len(held), errors.Join(append([]error{err}, errs...)...)
}
