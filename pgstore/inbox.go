package pgstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Names of the inbox's metrics (docs/metrics.md). Each carries
// acemq.inbox.consumer, the consumer whose inbox it is (its queue unless
// WithConsumerName says otherwise).
const (
	// MetricInboxDuplicates counts deliveries whose id the consumer had
	// already handled: acknowledged without calling the handler.
	MetricInboxDuplicates = "acemq.inbox.duplicates"
	// MetricInboxUnavailable counts tries to start a delivery's
	// transaction that met a database that did not answer; the delivery
	// was held, not retried, parked or dead-lettered.
	MetricInboxUnavailable = "acemq.inbox.unavailable"
	// MetricInboxHeld is the deliveries waiting for the database now.
	MetricInboxHeld = "acemq.inbox.held"
	// MetricInboxCleaned counts inbox rows past their retention deleted.
	MetricInboxCleaned = "acemq.inbox.cleaned"
)

// DefaultRetention is how long an inbox remembers a message id: a copy of
// the message arriving later than this is handled again. NServiceBus's
// default; a copy a week late is a replay, which KeepAttempts makes
// deliberate.
const DefaultRetention = 7 * 24 * time.Hour

var (
	// ErrNoMessageID is the reason a message without x-acemq-id (nor an
	// AMQP message-id) is parked on an inbox queue: without an identity
	// there is no dedup, and it is never handled blindly.
	ErrNoMessageID = errors.New("pgstore: inbox: the message has no x-acemq-id: no identity, no dedup")
	// ErrUnavailable is wrapped by the inbox's errors when the database
	// did not answer.
	ErrUnavailable = errors.New("pgstore: the database is unavailable")
)

type inboxConfig struct {
	retention time.Duration
	consumer  string
	// waitMin, waitMax: the backoff between tries while the database does
	// not answer; holdMax: how long a delivery is held before it is
	// retried through the consumer's policy.
	waitMin, waitMax, holdMax time.Duration
}

func defaultInboxConfig() inboxConfig {
	return inboxConfig{retention: DefaultRetention, waitMin: 250 * time.Millisecond, waitMax: 10 * time.Second, holdMax: 10 * time.Minute}
}

func (c inboxConfig) validate() error {
	return errors.Join(positive("WithRetention", c.retention), positive("WithUnavailableHold", c.holdMax))
}

// WithRetention sets how long the inbox remembers an id (default 7 days):
// a row is deleted by Cleanup once it is that old.
func WithRetention(d time.Duration) Option {
	return optionFunc(func(c *config) { c.inbox.retention = d })
}

// WithConsumerName names the consumer in the inbox's rows (default: the
// queue the middleware's consumer reads). Two consumers with one name
// share their dedup.
func WithConsumerName(name string) Option {
	return optionFunc(func(c *config) { c.inbox.consumer = name })
}

// WithUnavailableHold sets how long a delivery is held while the database
// does not answer (default 10 minutes, below the broker's 30-minute
// consumer timeout), counted from when the consumer received it
// (runtime.ReceivedAt; Process called outside a handler counts from its
// first try), so that every delivery of a full prefetch stays
// unacknowledged for about the hold, not the last of them for a hold per
// delivery ahead of it; past it the delivery is retried through the
// consumer's retry policy with an error wrapping ErrUnavailable. Each try
// is given what is left of the hold to begin its transaction (a delivery
// whose hold is over, one try of at most 2 s), so that a database that
// takes the connection and never answers does not stretch it.
func WithUnavailableHold(d time.Duration) Option {
	return optionFunc(func(c *config) { c.inbox.holdMax = d })
}

// Inbox keeps a consumer's handled message ids in PostgreSQL, in the
// handler's own transaction: its effects in the same database happen once
// per id (docs/exactly-once.md). Make one with NewInbox; install its
// Middleware on a consumer, or call Process.
type Inbox struct {
	db     DB
	cfg    config
	table  string
	log    *slog.Logger
	health inboxHealth

	duplicates  metric.Int64Counter
	unavailable metric.Int64Counter
	held        metric.Int64UpDownCounter
	cleaned     metric.Int64Counter
	stats       struct{ handled, duplicates atomic.Int64 }
}

// NewInbox is an inbox in db's <prefix>inbox table (Migrate creates it).
func NewInbox(db DB, opts ...Option) (*Inbox, error) {
	if db == nil {
		return nil, errors.New("pgstore: NewInbox: no database")
	}
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	in := &Inbox{db: db, cfg: c, table: c.table("inbox"), log: c.logger}
	return in, in.instruments()
}

func (in *Inbox) instruments() error {
	m := in.cfg.meterProvider.Meter("github.com/acemq/acemq-go/pgstore")
	var e [4]error
	in.duplicates, e[0] = m.Int64Counter(MetricInboxDuplicates, metric.WithDescription("deliveries of an id already handled, acked without the handler"))
	in.unavailable, e[1] = m.Int64Counter(MetricInboxUnavailable, metric.WithDescription("tries that met a database that did not answer"))
	in.held, e[2] = m.Int64UpDownCounter(MetricInboxHeld, metric.WithDescription("deliveries waiting for the database"))
	in.cleaned, e[3] = m.Int64Counter(MetricInboxCleaned, metric.WithDescription("inbox rows past their retention deleted"))
	return errors.Join(e[:]...)
}

// Prefix is the prefix of the inbox's table (WithPrefix), which a
// generated Consume function checks against its manifest's table_prefix.
func (in *Inbox) Prefix() string { return in.cfg.prefix }

type txKey struct{}

// Tx is the transaction of the delivery being handled, which the inbox's
// middleware put in ctx: do the handler's work in it, and do not commit
// or roll it back (the inbox does, on the handler's Ack).
func Tx(ctx context.Context) (pgx.Tx, bool) {
	tx, ok := ctx.Value(txKey{}).(pgx.Tx)
	return tx, ok
}

// Process handles the message id of consumer once: in a new transaction
// it inserts (consumer, id) into the inbox, then calls handle with that
// transaction (also in ctx, see Tx). Accept commits, and Process returns
// Accept only once the commit succeeded (a failed commit is a Retry);
// any other Ack, or a panic, rolls back, so the id is free again. An id
// already committed is a duplicate: Process returns Accept without calling
// handle. An id whose first delivery is still being handled waits on its
// row: it is a duplicate once that commits, and handled once it rolls back.
// An empty id is parked (ErrNoMessageID). A database that does not answer
// holds the delivery (State, MetricInboxHeld) until it does.
func (in *Inbox) Process(ctx context.Context, consumer, id string, handle func(ctx context.Context, tx pgx.Tx) runtime.Ack) runtime.Ack {
	return in.process(ctx, consumer, id, in.cfg.inbox.retention, handle)
}

func (in *Inbox) process(ctx context.Context, consumer, id string, retention time.Duration, handle func(context.Context, pgx.Tx) runtime.Ack) runtime.Ack {
	if id == "" {
		return runtime.Park(ErrNoMessageID)
	}
	tx, fresh, err := in.claimHeld(ctx, consumer, id, retention)
	if err != nil {
		return runtime.Retry(err)
	}
	if !fresh {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		in.duplicate(ctx, consumer, id)
		return runtime.Accept()
	}
	return in.run(ctx, tx, handle)
}

func (in *Inbox) duplicate(ctx context.Context, consumer, id string) {
	in.stats.duplicates.Add(1)
	in.duplicates.Add(ctx, 1, metric.WithAttributes(attribute.String("acemq.inbox.consumer", consumer)))
	in.log.DebugContext(ctx, "acemq: inbox: duplicate acknowledged without its handler", "consumer", consumer, "id", id)
}

// run calls handle in tx and ends tx by its Ack; a panic rolls tx back on
// its way to the runtime, which records it as it does a handler's.
func (in *Inbox) run(ctx context.Context, tx pgx.Tx, handle func(context.Context, pgx.Tx) runtime.Ack) runtime.Ack {
	ended := false
	defer func() {
		if !ended {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	ack := handle(context.WithValue(ctx, txKey{}, tx), tx)
	ended = true
	if ack.Kind() != runtime.AckAccept {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return ack
	}
	if err := tx.Commit(ctx); err != nil {
		return runtime.Retry(fmt.Errorf("pgstore: inbox: commit: %w", err))
	}
	in.stats.handled.Add(1)
	return ack
}

// claim begins a transaction and inserts (consumer, id): fresh reports
// whether the row is new (false: a duplicate). Its begin is bounded by
// within; a begin with no answer by then wraps errNoAnswer.
func (in *Inbox) claim(ctx context.Context, within time.Duration, consumer, id string, retention time.Duration) (tx pgx.Tx, fresh bool, err error) {
	bctx, cancel := context.WithTimeout(ctx, within)
	tx, err = in.db.Begin(bctx)
	silent := err != nil && bctx.Err() != nil && ctx.Err() == nil
	cancel() // the transaction does not keep the begin's ctx
	if silent {
		return nil, false, fmt.Errorf("pgstore: inbox: begin: %w within %v: %w", errNoAnswer, within.Round(time.Millisecond), err)
	}
	if err != nil {
		return nil, false, fmt.Errorf("pgstore: inbox: begin: %w", err)
	}
	tag, err := tx.Exec(ctx, "INSERT INTO "+in.table+" (consumer, message_id, expires_at) VALUES ($1, $2, now() + $3::interval) ON CONFLICT DO NOTHING",
		consumer, id, retention)
	if err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return nil, false, fmt.Errorf("pgstore: inbox: insert into %s: %w", in.table, err)
	}
	return tx, tag.RowsAffected() == 1, nil
}

// InboxStats counts what an Inbox did since it was made.
type InboxStats struct {
	Handled    int64 // handlers whose Accept was committed
	Duplicates int64 // deliveries acked without their handler
}

// Stats is what the inbox counted so far.
func (in *Inbox) Stats() InboxStats {
	return InboxStats{Handled: in.stats.handled.Load(), Duplicates: in.stats.duplicates.Load()}
}

// inboxHealth is the database's state as the inbox last met it.
type inboxHealth struct {
	mu    sync.Mutex
	down  bool
	since time.Time
	err   error
	held  int
}
