package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/acemq/acemq-go/bench/orders"
	"github.com/acemq/acemq-go/pgstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	amqp "github.com/rabbitmq/amqp091-go"
)

// The outbox and inbox cases (O1, I1) need PostgreSQL: --pg, a database in which the
// run makes a schema of its own (dropped at the end) with pgstore's tables.

// pgEnv is the run's database: a pool whose search_path is its schema.
type pgEnv struct {
	pool   *pgxpool.Pool
	admin  string // the URL, for dropping the schema
	schema string
	ob     *pgstore.Outbox
	inbox  *pgstore.Inbox // I1's (inbox.go)
}

func (e *env) setupPG(ctx context.Context, url string) error {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	schema := "acemqbench_" + hex.EncodeToString(b)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("--pg: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return fmt.Errorf("--pg: %w", err)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("--pg: %w", err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	// I1's handlers each hold a connection for their transaction.
	cfg.MaxConns = 2 * inboxConcurrency
	pg := &pgEnv{admin: url, schema: schema}
	e.pg = pg // closed (schema dropped) by e.close from here on
	if pg.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return fmt.Errorf("--pg: %w", err)
	}
	if err := pgstore.Migrate(ctx, pg.pool); err != nil {
		return err
	}
	if pg.ob, err = pgstore.NewOutbox(e.conn); err != nil {
		return err
	}
	return pg.setupInbox(ctx)
}

func (pg *pgEnv) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if pg.pool != nil {
		pg.pool.Close()
	}
	if conn, err := pgx.Connect(ctx, pg.admin); err == nil {
		_, _ = conn.Exec(ctx, "DROP SCHEMA "+pg.schema+" CASCADE")
		_ = conn.Close(ctx)
	}
}

// fillOutbox writes n orders of format to the emptied outbox with the
// generated BenchOutbox in one transaction (not timed), and returns when
// it committed.
func (e *env) fillOutbox(ctx context.Context, format string, n int) error {
	if _, err := e.pg.pool.Exec(ctx, "TRUNCATE acemq_outbox"); err != nil {
		return err
	}
	tx, err := e.pg.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if err := e.writeOutbox(ctx, tx, format, n); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

func (e *env) writeOutbox(ctx context.Context, tx pgx.Tx, format string, n int) error {
	out := orders.NewBenchOutbox(e.pg.ob)
	for range n {
		var err error
		if format == "avro" {
			err = out.PublishOrderAvroTx(ctx, tx, e.avroValue)
		} else {
			err = out.PublishOrderJSONTx(ctx, tx, e.jsonValue)
		}
		if err != nil {
			return fmt.Errorf("fill the outbox: %w", err)
		}
	}
	return nil
}

// relayReady waits until a relay holds every shard of the outbox: it is
// listening, its first (empty) look at the table done.
func (e *env) relayReady(ctx context.Context) error {
	for {
		var held int
		err := e.pg.pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
  AND objsubid = 2 AND objid < $1 AND classid = 'acemq_outbox'::regclass::oid
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`, pgstore.Shards).Scan(&held)
		if err != nil {
			return err
		}
		if held == pgstore.Shards {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the relay holds %d of %d shards: %w", held, pgstore.Shards, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// drained waits until the queue holds the n rows' messages (an AMQP
// look, cheap: a count(*) every few milliseconds would load the database
// the relay works in), then until the outbox is empty: every row
// confirmed and deleted.
func (e *env) drained(ctx context.Context, q string, n int) error {
	for {
		st, err := e.ch.QueueDeclarePassive(q, true, false, false, false, nil)
		if err != nil {
			return err
		}
		if st.Messages >= n {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s holds %d of %d: %w", q, st.Messages, n, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	for {
		var left int
		if err := e.pg.pool.QueryRow(ctx, "SELECT count(*) FROM acemq_outbox").Scan(&left); err != nil {
			return err
		}
		if left == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the outbox still holds %d rows: %w", left, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// relayRows: a relay started on the empty outbox and ready (its shards
// held, listening: a relay that runs, as relays do, rather than one
// dialling its database for the run), then n rows written in one
// transaction, timed from its commit until the outbox is empty (each row
// published, confirmed, deleted).
func relayRows(format string) runFunc {
	return func(ctx context.Context, e *env, n int) (time.Duration, int, error) {
		if _, err := e.pg.pool.Exec(ctx, "TRUNCATE acemq_outbox"); err != nil {
			return 0, 0, err
		}
		log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		rctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- pgstore.NewRelay(e.pg.ob, e.pg.pool, pgstore.WithRelayLogger(log)).Run(rctx) }()
		stopped := func(err error) error {
			stop()
			if rerr := <-done; err == nil {
				err = rerr
			}
			return err
		}
		if err := e.relayReady(ctx); err != nil {
			return 0, 0, stopped(err)
		}
		tx, err := e.pg.pool.Begin(ctx)
		if err != nil {
			return 0, 0, stopped(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		if err := e.writeOutbox(ctx, tx, format, n); err != nil {
			return 0, 0, stopped(err)
		}
		if err := tx.Commit(ctx); err != nil {
			return 0, 0, stopped(err)
		}
		start := e.clockStart()
		err = e.drained(ctx, queueOf(format), n)
		took := time.Since(start)
		return took, n, stopped(err)
	}
}

// rawRelayRows is the same rows relayed by hand with pgx and amqp091-go:
// read 500 rows, publish them with a confirm window of window, delete
// the confirmed ones, again until none is left. Its headers are the
// string ones (what a hand-written relay storing strings would send),
// read out of the row's header_table.
func rawRelayRows(format string, window int) runFunc {
	return func(ctx context.Context, e *env, n int) (time.Duration, int, error) {
		if err := e.fillOutbox(ctx, format, n); err != nil {
			return 0, 0, err
		}
		ch, err := e.rawChannel()
		if err != nil {
			return 0, 0, err
		}
		defer ch.Close()
		conn, err := e.pg.pool.Acquire(ctx)
		if err != nil {
			return 0, 0, err
		}
		defer conn.Release()
		start := e.clockStart()
		for {
			ids, msgs, exchange, key, err := readRows(ctx, conn.Conn())
			if err != nil {
				return 0, 0, err
			}
			if len(ids) == 0 {
				return time.Since(start), n, nil
			}
			if err := publishWindow(ctx, ch, exchange, key, msgs, window); err != nil {
				return 0, 0, err
			}
			if _, err := conn.Exec(ctx, "DELETE FROM acemq_outbox WHERE id = ANY($1)", ids); err != nil {
				return 0, 0, err
			}
		}
	}
}

func readRows(ctx context.Context, conn *pgx.Conn) (ids []int64, msgs []amqp.Publishing, exchange, key string, err error) {
	rows, err := conn.Query(ctx, `SELECT id, exchange, routing_key, message_id, correlation_id, type, content_type,
    msg_timestamp, header_table, body FROM acemq_outbox ORDER BY id LIMIT 500`)
	if err != nil {
		return nil, nil, "", "", err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id      int64
			m       amqp.Publishing
			headers []byte
		)
		if err := rows.Scan(&id, &exchange, &key, &m.MessageId, &m.CorrelationId, &m.Type, &m.ContentType, &m.Timestamp, &headers, &m.Body); err != nil {
			return nil, nil, "", "", err
		}
		if m.Headers, err = stringHeaders(headers); err != nil {
			return nil, nil, "", "", err
		}
		m.DeliveryMode = amqp.Persistent
		ids, msgs = append(ids, id), append(msgs, m)
	}
	return ids, msgs, exchange, key, rows.Err()
}

// publishWindow publishes msgs mandatory with at most window unconfirmed,
// as rawPublishWindow does.
func publishWindow(ctx context.Context, ch *amqp.Channel, exchange, key string, msgs []amqp.Publishing, window int) error {
	pending := make([]*amqp.DeferredConfirmation, 0, window)
	wait := func(dc *amqp.DeferredConfirmation) error {
		ok, err := dc.WaitContext(ctx)
		if err == nil && !ok {
			err = fmt.Errorf("raw relay: nacked (delivery tag %d)", dc.DeliveryTag)
		}
		return err
	}
	for _, m := range msgs {
		if len(pending) == window {
			if err := wait(pending[0]); err != nil {
				return err
			}
			pending = pending[1:]
		}
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, exchange, key, true, false, m)
		if err != nil {
			return fmt.Errorf("raw relay: %w", err)
		}
		pending = append(pending, dc)
	}
	for _, dc := range pending {
		if err := wait(dc); err != nil {
			return err
		}
	}
	return nil
}

// stringHeaders is the string headers of an AMQP field table's entries
// (the outbox's header_table), the others skipped.
func stringHeaders(b []byte) (amqp.Table, error) {
	h := amqp.Table{}
	fixed := map[byte]int{'t': 1, 'B': 1, 'b': 1, 's': 2, 'u': 2, 'I': 4, 'i': 4, 'f': 4, 'l': 8, 'd': 8, 'T': 8, 'D': 5, 'V': 0}
	for len(b) > 0 {
		n := int(b[0])
		if len(b) < 2+n {
			return nil, errors.New("raw relay: header_table cut short")
		}
		k, typ := string(b[1:1+n]), b[1+n]
		b = b[2+n:]
		if size, ok := fixed[typ]; ok {
			if len(b) < size {
				return nil, errors.New("raw relay: header_table cut short")
			}
			b = b[size:]
			continue
		}
		if len(b) < 4 || uint64(len(b)-4) < uint64(binary.BigEndian.Uint32(b)) {
			return nil, errors.New("raw relay: header_table cut short")
		}
		size := int(binary.BigEndian.Uint32(b))
		if typ == 'S' {
			h[k] = string(b[4 : 4+size])
		}
		b = b[4+size:]
	}
	return h, nil
}
