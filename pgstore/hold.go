package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// claimHeld is claim, tried again while the database does not answer:
// the delivery is held (unsettled, its worker waiting) with a backoff from
// waitMin doubling to waitMax, as the runtime holds a delivery through a
// schema registry's outage, until holdMax after the consumer received it
// (runtime.ReceivedAt; from the first try when ctx is no handler's), each
// try's start of a transaction bounded by what is left of it. The
// hold is counted from receipt, not from the delivery's turn: the
// deliveries behind it in the prefetch were unacknowledged all along, and
// counted from each one's turn the last of a full prefetch would stay
// unacknowledged for a hold per delivery ahead of it. A delivery whose
// turn comes past its hold is tried once. Past holdMax, or when ctx ends,
// the error wraps ErrUnavailable and the delivery is retried.
func (in *Inbox) claimHeld(ctx context.Context, consumer, id string, retention time.Duration) (pgx.Tx, bool, error) {
	c := in.cfg.inbox
	from, received := runtime.ReceivedAt(ctx)
	if !received {
		from = time.Now()
	}
	wait, since := c.waitMin, time.Time{}
	for {
		// A database that takes the connection and never answers is
		// given what is left of the hold (lastTry at least, or the hold
		// when shorter), not the operating system's connect timeout.
		tx, fresh, err := in.claim(ctx, max(c.holdMax-time.Since(from), min(lastTry, c.holdMax)), consumer, id, retention)
		if err == nil || !unavailable(err) || ctx.Err() != nil {
			in.answered(ctx, consumer, err, !since.IsZero())
			return tx, fresh, err
		}
		if since.IsZero() {
			since = time.Now()
			in.holding(ctx, consumer, err)
		}
		in.unavailable.Add(ctx, 1, metric.WithAttributes(attribute.String("acemq.inbox.consumer", consumer)))
		left := c.holdMax - time.Since(from)
		if left <= 0 {
			in.released(ctx, consumer)
			return nil, false, fmt.Errorf("%w: held %v: %w", ErrUnavailable, time.Since(from).Round(time.Second), err)
		}
		select {
		case <-ctx.Done():
			in.released(ctx, consumer)
			return nil, false, fmt.Errorf("%w: %w (%w)", ErrUnavailable, ctx.Err(), err)
		case <-time.After(min(wait, left)): // the last try at the hold's end
		}
		wait = min(wait*2, c.waitMax)
	}
}

// lastTry bounds the start of a transaction of a delivery whose hold is
// over (or nearly): it is tried once more, briefly.
const lastTry = 2 * time.Second

// errNoAnswer is a try's start of a transaction that got no answer within
// its bound (its own deadline, ctx still alive).
var errNoAnswer = errors.New("no answer")

// unavailable reports whether err means the database did not answer (a
// connection refused, lost or timed out, a server shutting down or not
// accepting connections yet), as opposed to an answer (a missing table, a
// constraint) that waiting would not change.
func unavailable(err error) bool {
	if errors.Is(err, errNoAnswer) {
		return true
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case len(pgErr.Code) == 5 && pgErr.Code[:2] == "08": // connection exception
			return true
		case pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03", pgErr.Code == "53300":
			return true // admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections
		}
		return false
	}
	return true
}

// holding notes a delivery held for the database.
func (in *Inbox) holding(ctx context.Context, consumer string, err error) {
	in.held.Add(ctx, 1, metric.WithAttributes(attribute.String("acemq.inbox.consumer", consumer)))
	h := &in.health
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held++
	h.err = err
	if !h.down {
		h.down, h.since = true, time.Now()
		in.log.WarnContext(ctx, "acemq: inbox: the database does not answer; holding deliveries until it does", "consumer", consumer, "err", err)
	}
}

// released notes a held delivery given up on (ctx ended, held too long).
func (in *Inbox) released(ctx context.Context, consumer string) {
	in.held.Add(ctx, -1, metric.WithAttributes(attribute.String("acemq.inbox.consumer", consumer)))
	in.health.mu.Lock()
	in.health.held--
	in.health.mu.Unlock()
}

// answered notes that the database answered a claim (err nil or an
// answer), releasing the delivery when it had been held.
func (in *Inbox) answered(ctx context.Context, consumer string, err error, wasHeld bool) {
	h := &in.health
	h.mu.Lock()
	defer h.mu.Unlock()
	if wasHeld {
		h.held--
		in.held.Add(ctx, -1, metric.WithAttributes(attribute.String("acemq.inbox.consumer", consumer)))
	}
	if err != nil && unavailable(err) {
		return
	}
	if h.down {
		h.down = false
		in.log.InfoContext(ctx, "acemq: inbox: the database answers again; held deliveries go on", "down_for", time.Since(h.since).Round(time.Millisecond))
	}
}

// InboxState is the database as the inbox last met it.
type InboxState struct {
	// Available is false from a try that met a database that did not
	// answer until one that it answered.
	Available bool
	// Since is when it became unavailable (zero when available).
	Since time.Time
	// Err is the last error that made it unavailable.
	Err error
	// Held is the deliveries waiting for it now.
	Held int
}

// State is the database's state as the inbox last met it.
func (in *Inbox) State() InboxState {
	h := &in.health
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.down {
		return InboxState{Available: true, Held: h.held}
	}
	return InboxState{Since: h.since, Err: h.err, Held: h.held}
}

// Ready is nil while the database answers the inbox, else an error
// wrapping ErrUnavailable: for a readiness probe beside
// runtime.HealthHandler's.
func (in *Inbox) Ready() error {
	s := in.State()
	if s.Available {
		return nil
	}
	return fmt.Errorf("%w since %s (%d deliveries held): %w", ErrUnavailable, s.Since.UTC().Format(time.RFC3339), s.Held, s.Err)
}

// Check is the inbox for runtime.HealthHandler (a readiness probe): not
// ready while deliveries are held for the database (Ready), nor when the
// database does not answer a look at the inbox's table within the probe's
// time (an idle consumer's database is asked, not only a busy one's):
//
//	http.Handle("/readyz", runtime.HealthHandler(conn, payments, inbox.Check()))
func (in *Inbox) Check() runtime.Check {
	return runtime.Check{Name: "pgstore inbox " + in.cfg.prefix + "inbox", Ready: in.ping}
}

// ping is Ready, then a look at the table in a transaction of its own.
func (in *Inbox) ping(ctx context.Context) error {
	if err := in.Ready(); err != nil {
		return err
	}
	tx, err := in.db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, "SELECT 1 FROM "+in.table+" LIMIT 0"); err != nil {
		if unavailable(err) || ctx.Err() != nil {
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		return fmt.Errorf("pgstore: inbox: %s: %w", in.table, err)
	}
	return nil
}
