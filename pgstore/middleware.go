package pgstore

import (
	"context"

	"github.com/acemq/acemq-go/runtime"
	"github.com/jackc/pgx/v5"
)

// Middleware runs each handler of the consumer it is installed on
// (runtime.WithMiddleware) inside Process: the handler finds its
// transaction with Tx(ctx). The consumer in the rows is the queue, unless
// WithConsumerName named it.
func (in *Inbox) Middleware() runtime.Middleware {
	return func(next runtime.HandlerFunc) runtime.HandlerFunc {
		return func(ctx context.Context, m *runtime.Incoming) runtime.Ack {
			return in.Process(ctx, in.consumerOf(m.Queue), m.Envelope.ID, func(ctx context.Context, _ pgx.Tx) runtime.Ack {
				return next(ctx, m)
			})
		}
	}
}

func (in *Inbox) consumerOf(queue string) string {
	if in.cfg.inbox.consumer != "" {
		return in.cfg.inbox.consumer
	}
	return queue
}
