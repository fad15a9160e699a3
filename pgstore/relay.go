package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/metric"
)

// MetricOutboxRefused counts the times a relay could not publish a row
// for a reason of the row's own (docs/metrics.md): the row stays, its
// attempts and last error recorded, and is tried again after a backoff.
// It carries acemq.outbox.table and acemq.outbox.reason: invalid (a row
// Publish would refuse: ErrInvalidMessage), unroutable, nacked,
// exchange_not_found, unreadable (its headers could not be read back).
const MetricOutboxRefused = "acemq.outbox.refused"

// Relay publishes an outbox's rows with confirms and deletes each row
// only once the broker has confirmed it: a crash between the confirm and
// the delete publishes the row again (at least once; an inbox makes the
// effect once). See Run.
type Relay struct {
	ob   *Outbox
	pool *pgxpool.Pool
	cfg  relayConfig

	// One Run's state (Run is not for concurrent use: start several
	// relays instead).
	conn      *pgx.Conn
	table     uint32 // the table's oid: the advisory lock class of its shards
	held      []int32
	balanced  time.Time
	nextRetry time.Time
	// ahead is the batch read while the previous one's confirms were
	// outstanding, to be published next (relayBatch).
	ahead []outboxRow

	refusedRows metric.Int64Counter // MetricOutboxRefused

	// The waits while the database (dbDown) or the broker (brokerDown)
	// is unavailable: each doubling, reset once the relay gets through.
	dbDown, brokerDown outage
}

// maxOutageWait bounds the wait between tries while the database or the
// broker is unavailable (WithRelayBackoff's max when lower): the relay
// finds it back within that.
const maxOutageWait = 30 * time.Second

// outage counts the tries that met an unavailable database or broker
// since the relay last got through.
type outage struct{ tries int }

// next is the wait before the next try: WithRelayBackoff's min, doubling
// with each try, up to maxOutageWait (or the max, when lower).
func (o *outage) next(c relayConfig) time.Duration {
	bound := max(min(c.maxBackoff, maxOutageWait), c.backoff)
	d := c.backoff
	for i := 0; i < o.tries && d < bound; i++ {
		d *= 2
	}
	o.tries++
	return min(d, bound)
}

func (o *outage) reset() { o.tries = 0 }

// NewRelay returns a relay of ob's rows, read from the database of pool
// (whose config it dials a connection of its own with), published on
// ob's connection.
func NewRelay(ob *Outbox, pool *pgxpool.Pool, opts ...RelayOption) *Relay {
	m := ob.cfg.meterProvider.Meter("github.com/acemq/acemq-go/pgstore")
	refusedRows, _ := m.Int64Counter(MetricOutboxRefused, metric.WithUnit("{try}"),
		metric.WithDescription("Tries to publish an outbox row that failed for a reason of the row's own; the row stays and is tried again after a backoff."))
	return &Relay{ob: ob, pool: pool, cfg: newRelayConfig(opts), refusedRows: refusedRows}
}

// Run relays until ctx ends, then returns nil. It holds one database
// connection of its own: LISTEN on the outbox's channel, and advisory
// locks on the shards it relays. Several relays (processes) may run on
// one outbox: each holds its share of the Shards shards (a shard is held
// by one relay at a time; a relay that stops or loses its connection
// frees its shards, and the others take them at their next poll), so
// no row is published by two relays except across such a loss, and the
// rows of one ordering key go out in id order, from one relay, each row
// of a key only once its predecessor is confirmed. Rows without a key are
// pipelined up to the batch size.
//
// A row the broker refuses (unroutable, nacked, its exchange missing), or
// one Publish would refuse (written into the table by other means than
// PublishTx: a short string over 255 bytes, a header of no AMQP type, a
// header frame over frame_max; it is never written to the broker), stays,
// with its attempts and last error, counted in MetricOutboxRefused, and is
// tried again after a backoff; the later rows of its key wait behind it. While the broker or
// the database is unavailable Run waits and tries again, WithRelayBackoff's
// min at first, doubling with each try up to 30 s (or the max, when
// lower), one warning a try, and back to the min once it gets through: it
// returns an error only when the outbox's table does not exist (run
// Migrate).
func (r *Relay) Run(ctx context.Context) error {
	for {
		err := r.session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42P01" {
			return fmt.Errorf("pgstore: relay of %s: %w (run pgstore.Migrate, or apply `acemq sql outbox`)", r.ob.name, err)
		}
		wait := r.dbDown.next(r.cfg)
		r.cfg.logger.Warn("acemq: outbox relay: database unavailable, retrying", "table", r.ob.name, "error", err,
			"tries", r.dbDown.tries, "retry_in", wait)
		if !sleep(ctx, wait) {
			return nil
		}
	}
}

// session relays on one connection until ctx ends or the connection
// fails; closing the connection frees its shards.
func (r *Relay) session(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, r.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	r.conn, r.held, r.balanced, r.ahead = conn, nil, time.Time{}, nil
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = conn.Close(cctx)
		r.conn, r.held, r.ahead = nil, nil, nil
	}()
	// The table as the connection's search_path finds it: its oid names
	// its locks and its notifications apart from another schema's.
	if err := conn.QueryRow(ctx, "SELECT $1::regclass::oid", r.ob.table).Scan(&r.table); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{r.ob.name}.Sanitize()); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock_shared($1, $2)", r.class(), int32(Shards)); err != nil {
		return err
	}
	r.dbDown.reset() // the database answered: it is back
	for ctx.Err() == nil {
		if err := r.round(ctx); err != nil {
			return err
		}
	}
	return nil
}

// round balances the shards when due, relays one batch, and waits for
// work when the batch was not full.
func (r *Relay) round(ctx context.Context) error {
	if time.Since(r.balanced) >= r.cfg.poll {
		if err := r.balance(ctx); err != nil {
			return err
		}
	}
	n, err := r.relayBatch(ctx)
	if err != nil || n == r.cfg.batch || len(r.ahead) > 0 {
		return err
	}
	return r.wait(ctx)
}

// class is the first key of the advisory locks of the table's shards (and
// of its relays' member lock): its oid, as the int4 the two-key lock
// functions take (pg_locks shows it back as an oid).
func (r *Relay) class() int32 { return int32(r.table) }

// sleep waits d, or less when ctx ends (then false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
