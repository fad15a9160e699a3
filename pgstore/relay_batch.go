package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// settleTimeout bounds the wait for the confirms of a batch in flight,
// which is finished even when Run's ctx ends (so that what the broker
// confirmed is deleted rather than published again).
const settleTimeout = 30 * time.Second

// outboxRow is a row read back for relaying.
type outboxRow struct {
	id       int64
	key      *string
	attempts int
	o        runtime.Outgoing
	bad      error // the row could not be read back (its headers)
}

// refusal is a row the broker, or the runtime's check, refused.
type refusal struct {
	id         int64
	attempts   int
	err        error
	unreadable bool // its headers could not be read back
}

// relayBatch publishes a batch of the held shards' rows (the one read
// ahead during the previous batch, else one read now), reads the next
// batch while this one's confirms are outstanding, then deletes what the
// broker confirmed and records what it refused. It returns how many rows
// it published.
//
// The batch read ahead leaves out the rows in flight (by id: no
// high-water mark, so a row that commits late with a lower id is read by
// a later batch), and is published only once this batch is settled, less
// the rows of every key one of whose rows this batch did not get
// confirmed (refused, or not sent): those wait in the table behind it, as
// the fetch's own filter has them wait. So a key's rows still go out one
// after the other, each once its predecessor is confirmed, and a row is
// still deleted only after its confirm.
func (r *Relay) relayBatch(ctx context.Context) (int, error) {
	if len(r.held) == 0 {
		r.ahead = nil
		return 0, nil
	}
	rows := r.ahead
	r.ahead = nil
	if len(rows) == 0 {
		var err error
		if rows, err = r.fetch(ctx, nil); err != nil || len(rows) == 0 {
			return 0, err
		}
	}
	b := r.start(ctx, rows)
	// The read ahead, on the relay's connection (the confirms do not use
	// it), not cancelled by ctx: pgx closes a connection whose query ctx
	// cancels, and the confirmed rows of this batch must still be deleted
	// on it.
	fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	next, ferr := r.fetch(fctx, rowIDs(rows))
	fcancel()
	b.settle()
	res := b.out
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	if len(res.confirmed) > 0 {
		// The window a crash repeats: confirmed, not yet deleted.
		r.cfg.logger.Debug("acemq: outbox confirmed", "table", r.ob.name, "rows", len(res.confirmed))
		if _, err := r.conn.Exec(dctx, `DELETE FROM `+r.ob.table+` WHERE id = ANY($1)`, res.confirmed); err != nil {
			return 0, err
		}
	}
	if err := r.refuse(dctx, res.refused); err != nil {
		return 0, err
	}
	if res.unavailable != nil {
		wait := r.brokerDown.next(r.cfg)
		r.cfg.logger.Warn("acemq: outbox relay: the broker is unavailable, retrying", "table", r.ob.name,
			"error", res.unavailable, "tries", r.brokerDown.tries, "retry_in", wait)
		sleep(ctx, wait)
		return len(rows), nil // the rows read ahead are read again
	}
	r.brokerDown.reset()
	if ferr != nil {
		return 0, ferr
	}
	r.ahead = carryOver(next, rows, res.confirmed)
	return len(rows), nil
}

func rowIDs(rows []outboxRow) []int64 {
	ids := make([]int64, len(rows))
	for i, rw := range rows {
		ids[i] = rw.id
	}
	return ids
}

// carryOver is the batch read ahead less the rows of each key that has a
// row in the batch just settled which was not confirmed: those are held
// behind it.
func carryOver(next, rows []outboxRow, confirmed []int64) []outboxRow {
	ok := make(map[int64]bool, len(confirmed))
	for _, id := range confirmed {
		ok[id] = true
	}
	blocked := map[string]bool{}
	for _, rw := range rows {
		if rw.key != nil && !ok[rw.id] {
			blocked[*rw.key] = true
		}
	}
	out := next[:0]
	for _, rw := range next {
		if rw.key != nil && blocked[*rw.key] {
			continue
		}
		out = append(out, rw)
	}
	return out
}

// fetch reads up to a batch of rows of the held shards in id order,
// without the rows due later, those of a key behind such a row, and those
// in except (a batch in flight).
func (r *Relay) fetch(ctx context.Context, except []int64) ([]outboxRow, error) {
	t := r.ob.table
	if except == nil {
		except = []int64{}
	}
	rows, err := r.conn.Query(ctx, `SELECT id, ordering_key, attempts, exchange, routing_key, mandatory,
    message_id, correlation_id, type, content_type, delivery_mode, msg_timestamp, header_table, headers, body
FROM `+t+` o
WHERE shard = ANY($1) AND (not_before IS NULL OR not_before <= now()) AND NOT (id = ANY($3))
  AND (ordering_key IS NULL OR NOT EXISTS (SELECT 1 FROM `+t+` e
    WHERE e.attempts > 0 AND e.ordering_key = o.ordering_key AND e.id < o.id AND e.not_before > now()))
ORDER BY id LIMIT $2`, r.held, r.cfg.batch, except)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanRow)
}

func scanRow(row pgx.CollectableRow) (outboxRow, error) {
	var (
		rw            outboxRow
		mode          int16
		table, legacy []byte
	)
	m := &rw.o.Msg
	err := row.Scan(&rw.id, &rw.key, &rw.attempts, &rw.o.Exchange, &rw.o.RoutingKey, &rw.o.Mandatory,
		&m.MessageId, &m.CorrelationId, &m.Type, &m.ContentType, &mode, &m.Timestamp, &table, &legacy, &m.Body)
	if err != nil {
		return rw, err
	}
	m.DeliveryMode = uint8(mode)
	m.Timestamp = m.Timestamp.UTC()
	if rw.key != nil {
		rw.o.OrderingKey = *rw.key
	}
	if m.Headers, err = readHeaders(table, legacy); err != nil {
		rw.bad = err
	}
	return rw, nil
}

// refuse records each refusal on its row: one more attempt, the error,
// and the time before which it is not tried again.
func (r *Relay) refuse(ctx context.Context, refused []refusal) error {
	for _, f := range refused {
		wait := r.backoff(f.attempts)
		reason := f.reason()
		msg := "acemq: outbox relay: the broker refused a row"
		if reason == "invalid" || reason == "unreadable" {
			msg = "acemq: outbox relay: a row cannot be published as it is (Publish would refuse it)"
		}
		r.cfg.logger.Warn(msg, "table", r.ob.name, "id", f.id, "reason", reason,
			"attempts", f.attempts+1, "error", f.err, "retry_in", wait)
		r.refusedRows.Add(ctx, 1, metric.WithAttributes(attribute.String("acemq.outbox.table", r.ob.name),
			attribute.String("acemq.outbox.reason", reason)))
		// The row is due when the database's clock says so: the wait is
		// read back from it, so a relay never wakes before its fetch
		// would find the row.
		var ms int64
		err := r.conn.QueryRow(ctx, `UPDATE `+r.ob.table+` SET attempts = attempts + 1, last_error = $2,
    not_before = now() + $3 * interval '1 millisecond' WHERE id = $1
RETURNING ceil(extract(epoch FROM not_before - clock_timestamp()) * 1000)::bigint`, f.id, f.err.Error(), wait.Milliseconds()).Scan(&ms)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if at := time.Now().Add(time.Duration(max(ms, 0)+10) * time.Millisecond); r.nextRetry.IsZero() || at.Before(r.nextRetry) {
			r.nextRetry = at
		}
	}
	return nil
}

// backoff is the wait after a row's attempts-th refusal (0-based).
func (r *Relay) backoff(attempts int) time.Duration {
	d := r.cfg.backoff
	for i := 0; i < attempts && d < r.cfg.maxBackoff; i++ {
		d *= 2
	}
	return min(d, r.cfg.maxBackoff)
}

// refused reports whether err is a failure of the row itself (rather
// than the broker being unavailable): the broker refusing it, or the
// runtime's check refusing what Publish would refuse (a short string over
// 255 bytes, a header of no AMQP type, a header frame over frame_max, in a
// row written into the table by other means than PublishTx). Such a row
// is recorded as refused on its row and tried again after a backoff, its
// key's later rows held behind it; only an unavailable broker is waited
// out.
func refused(err error) bool {
	return refusal{err: err}.reason() != ""
}

// reason is the acemq.outbox.reason of a refusal ("" for an error that
// is not one).
func (f refusal) reason() string {
	switch {
	case f.unreadable:
		return "unreadable"
	case errors.Is(f.err, runtime.ErrInvalidMessage):
		return "invalid"
	case errors.Is(f.err, runtime.ErrUnroutable):
		return "unroutable"
	case errors.Is(f.err, runtime.ErrNacked):
		return "nacked"
	case errors.Is(f.err, runtime.ErrExchangeNotFound):
		return "exchange_not_found"
	}
	return ""
}
