package redisstore

import (
	"context"

	"github.com/acemq/acemq-go/runtime"
)

// Middleware runs each handler of the consumer it is installed on
// (runtime.WithMiddleware) inside Process, the consumer in the keys being
// the queue it reads.
func (d *Dedup) Middleware() runtime.Middleware {
	return func(next runtime.HandlerFunc) runtime.HandlerFunc {
		return func(ctx context.Context, m *runtime.Incoming) runtime.Ack {
			return d.Process(ctx, m.Queue, m.Envelope.ID, func(ctx context.Context) runtime.Ack { return next(ctx, m) })
		}
	}
}
