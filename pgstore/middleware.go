package pgstore

import (
	"context"
	"errors"

	"github.com/acemq/acemq-go/runtime"
	"github.com/jackc/pgx/v5"
)

// ErrNoTx is the reason a message is parked when a handler that takes the
// inbox's transaction (HandleTx) runs without the inbox's middleware.
var ErrNoTx = errors.New("pgstore: no inbox transaction in the handler's ctx: install Inbox.Middleware on the consumer")

// Middleware runs each handler of the consumer it is installed on
// (runtime.WithMiddleware) inside Process: the handler finds its
// transaction with Tx(ctx). The consumer in the rows is the queue. opts
// may set WithRetention and WithConsumerName for this consumer (the
// generated Consume functions pass the manifest's inbox retention); the
// other options are the Inbox's.
func (in *Inbox) Middleware(opts ...Option) runtime.Middleware {
	c := in.cfg
	for _, o := range opts {
		o.apply(&c)
	}
	retention, name := c.inbox.retention, c.inbox.consumer
	if retention <= 0 {
		retention = in.cfg.inbox.retention
	}
	return func(next runtime.HandlerFunc) runtime.HandlerFunc {
		return func(ctx context.Context, m *runtime.Incoming) runtime.Ack {
			consumer := m.Queue
			if name != "" {
				consumer = name
			}
			return in.process(ctx, consumer, m.Envelope.ID, retention, func(ctx context.Context, _ pgx.Tx) runtime.Ack {
				return next(ctx, m)
			})
		}
	}
}

// TxHandler is a handler that takes the inbox's transaction: the shape of
// a generated handler method of a queue with an inbox: in the manifest.
type TxHandler[T any] func(ctx context.Context, tx pgx.Tx, m *runtime.Message[T]) runtime.Ack

// HandleTx adapts h to a runtime.Handler: h is given the transaction the
// inbox's middleware put in ctx. Without one (the middleware was not
// installed) the message is parked with ErrNoTx, never handled outside a
// transaction.
func HandleTx[T any](h TxHandler[T]) runtime.Handler[T] {
	return func(ctx context.Context, m *runtime.Message[T]) runtime.Ack {
		tx, ok := Tx(ctx)
		if !ok {
			return runtime.Park(ErrNoTx)
		}
		return h(ctx, tx, m)
	}
}
