package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acemq/acemq-go/bench/orders"
	"github.com/acemq/acemq-go/pgstore"
	"github.com/acemq/acemq-go/runtime"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The inbox case (I1, issue 20 item 7): handled msg/s through pgstore's
// inbox against the same SQL written by hand with pgx in the handler. Both
// sides consume n Avro orders with the generated consumer (prefetch 256,
// inboxConcurrency handlers), and each message is one transaction: the
// inbox row (consumer, id) inserted ON CONFLICT DO NOTHING, then, when it
// was new, the effect (a row of bench_effects), then the commit. The
// inbox's side is ConsumeBenchInbox (bench.inbox's `inbox:`), whose handler
// takes the transaction; the by-hand side is ConsumeBenchAvro (bench.avro)
// with a handler that begins, inserts, inserts and commits itself.

// inboxConcurrency is both sides' handlers at once (the pool has room for
// each, and for the fill).
const inboxConcurrency = 8

// inboxRetention is bench.inbox's manifest retention, which the by-hand
// side writes too.
const inboxRetention = 24 * time.Hour

// effectSQL is the handler's effect, the same on both sides.
const effectSQL = `INSERT INTO bench_effects (message_id, order_id, total) VALUES ($1, $2, $3)`

// byHandInboxSQL is what the inbox inserts (pgstore's claim), written by
// hand.
const byHandInboxSQL = `INSERT INTO acemq_inbox (consumer, message_id, expires_at) VALUES ($1, $2, now() + $3::interval) ON CONFLICT DO NOTHING`

// setupInbox makes the inbox case's business table and the inbox.
func (pg *pgEnv) setupInbox(ctx context.Context) error {
	if _, err := pg.pool.Exec(ctx, `CREATE TABLE bench_effects (id bigserial PRIMARY KEY, message_id text NOT NULL, order_id text NOT NULL, total float8 NOT NULL)`); err != nil {
		return fmt.Errorf("--pg: %w", err)
	}
	var err error
	pg.inbox, err = pgstore.NewInbox(pg.pool)
	return err
}

// inboxCounter counts the handled messages and closes done at the n-th.
type inboxCounter struct {
	n    int64
	seen atomic.Int64
	once sync.Once
	done chan struct{}
}

func (c *inboxCounter) count() {
	if c.seen.Add(1) == c.n {
		c.once.Do(func() { close(c.done) })
	}
}

// inboxHandler is the inbox side's handler: the effect in the inbox's
// transaction (counted before the inbox commits it, a commit's time at the
// end of a run that the by-hand side has in it: under 1/n of a run).
type inboxHandler struct{ c *inboxCounter }

func (h inboxHandler) HandleOrderAvro(ctx context.Context, tx pgx.Tx, m *runtime.Message[orders.OrderAvro]) runtime.Ack {
	if _, err := tx.Exec(ctx, effectSQL, m.Envelope.ID, m.Payload.OrderID, m.Payload.Total); err != nil {
		return runtime.Retry(err)
	}
	h.c.count()
	return runtime.Accept()
}

// byHandHandler is the by-hand side's: the inbox's SQL in its own
// transaction, with pgx.
type byHandHandler struct {
	pg *pgEnv
	c  *inboxCounter
}

func (h byHandHandler) HandleOrderAvro(ctx context.Context, m *runtime.Message[orders.OrderAvro]) runtime.Ack {
	tx, err := h.pg.pool.Begin(ctx)
	if err != nil {
		return runtime.Retry(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var tag pgconn.CommandTag
	if tag, err = tx.Exec(ctx, byHandInboxSQL, queueAvro, m.Envelope.ID, inboxRetention); err != nil {
		return runtime.Retry(err)
	}
	if tag.RowsAffected() == 0 {
		return runtime.Accept() // a duplicate
	}
	if _, err := tx.Exec(ctx, effectSQL, m.Envelope.ID, m.Payload.OrderID, m.Payload.Total); err != nil {
		return runtime.Retry(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return runtime.Retry(err)
	}
	h.c.count()
	return runtime.Accept()
}

// inboxConsume is I1's inbox side; byHand its by-hand side.
func inboxConsume(byHand bool) runFunc {
	return func(ctx context.Context, e *env, n int) (time.Duration, int, error) {
		pg := e.pg
		if _, err := pg.pool.Exec(ctx, "TRUNCATE acemq_inbox, bench_effects"); err != nil {
			return 0, 0, err
		}
		q, key := queueInbox, "inbox"
		if byHand {
			q, key = queueAvro, "avro"
		}
		msgs := make([]orders.OrderAvro, 256)
		for i := range msgs {
			msgs[i] = e.avroValue
		}
		for done := 0; done < n; done += len(msgs) {
			if err := runtime.PublishBatch(ctx, e.conn, orders.TypeOfOrderAvro(), "bench", msgs[:min(len(msgs), n-done)], runtime.WithRoutingKey(key)); err != nil {
				return 0, 0, fmt.Errorf("fill %s: %w", q, err)
			}
		}
		c := &inboxCounter{n: int64(n), done: make(chan struct{})}
		opts := []runtime.ConsumeOption{runtime.WithPrefetch(256), runtime.WithConcurrency(inboxConcurrency)}
		start := e.clockStart()
		var cons *runtime.Consumer
		var err error
		if byHand {
			cons, err = orders.ConsumeBenchAvro(ctx, e.conn, byHandHandler{pg: pg, c: c}, opts...)
		} else {
			cons, err = orders.ConsumeBenchInbox(ctx, e.conn, pg.inbox, inboxHandler{c: c}, opts...)
		}
		if err != nil {
			return 0, 0, err
		}
		select {
		case <-c.done:
		case <-ctx.Done():
			_ = cons.Close(context.Background())
			return 0, 0, fmt.Errorf("consume %s: %d of %d handled: %w", q, c.seen.Load(), n, ctx.Err())
		}
		took := time.Since(start)
		if err := cons.Close(ctx); err != nil {
			return 0, 0, err
		}
		// Every message's effect committed once, and no more (not timed):
		// a side that loses or repeats effects cannot look fast.
		var effects, inboxed int
		if err := pg.pool.QueryRow(ctx, "SELECT (SELECT count(*) FROM bench_effects), (SELECT count(*) FROM acemq_inbox)").Scan(&effects, &inboxed); err != nil {
			return 0, 0, err
		}
		if effects != n || inboxed != n {
			return 0, 0, fmt.Errorf("%s: %d messages handled, %d effects and %d inbox rows committed", q, n, effects, inboxed)
		}
		return took, n, nil
	}
}
