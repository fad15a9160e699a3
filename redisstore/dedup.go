package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Defaults of the options.
const (
	DefaultPrefix = "acemq:dedup:"
	DefaultTTL    = 24 * time.Hour
	DefaultLease  = 5 * time.Minute
)

// MetricDedupDuplicates counts deliveries of an id already handled,
// acked without the handler; acemq.dedup.consumer is the consumer.
const MetricDedupDuplicates = "acemq.dedup.duplicates"

var (
	// ErrNoMessageID is the reason a message without x-acemq-id (nor an
	// AMQP message-id) is parked: no identity, no dedup.
	ErrNoMessageID = errors.New("redisstore: dedup: the message has no x-acemq-id: no identity, no dedup")
	// ErrUnavailable is wrapped when Redis did not answer for longer than
	// WithUnavailableHold: the delivery is retried.
	ErrUnavailable = errors.New("redisstore: Redis is unavailable")
)

// done is a handled id's value; a lease's is its owner's token.
const done = "done"

// Option configures a Dedup.
type Option func(*config)

type config struct {
	prefix        string
	ttl, lease    time.Duration
	holdMax       time.Duration
	meterProvider metric.MeterProvider
	logger        *slog.Logger
}

// WithPrefix starts every key (default "acemq:dedup:"); the key of an id is
// <prefix><consumer>:<id> (see Key).
func WithPrefix(p string) Option { return func(c *config) { c.prefix = p } }

// WithTTL sets how long a handled id is remembered (default 24 hours).
func WithTTL(d time.Duration) Option { return func(c *config) { c.ttl = d } }

// WithLease sets how long a delivery's hold on its id lasts (default 5
// minutes): it is renewed every third of it while the handler runs, and
// expires this long after a process that died holding it.
func WithLease(d time.Duration) Option { return func(c *config) { c.lease = d } }

// WithUnavailableHold sets how long a delivery waits for Redis that does
// not answer before it is retried (default 10 minutes, under the broker's
// 30-minute consumer timeout), counted from when the consumer received it
// (runtime.ReceivedAt; Process called outside a handler counts from its
// first failure): every delivery of a full prefetch is held about this
// long, not the last of them a hold per delivery ahead of it.
func WithUnavailableHold(d time.Duration) Option { return func(c *config) { c.holdMax = d } }

// WithMeterProvider sets where the metrics go (default otel's global).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.meterProvider = mp }
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// Dedup keeps consumers' handled message ids in Redis.
type Dedup struct {
	rdb        redis.UniversalClient
	cfg        config
	duplicates metric.Int64Counter
	down       atomic.Bool
	stats      struct{ handled, duplicates atomic.Int64 }
}

// NewDedup is a dedup store on rdb.
func NewDedup(rdb redis.UniversalClient, opts ...Option) (*Dedup, error) {
	c := config{prefix: DefaultPrefix, ttl: DefaultTTL, lease: DefaultLease, holdMax: 10 * time.Minute,
		meterProvider: otel.GetMeterProvider(), logger: slog.Default()}
	for _, o := range opts {
		o(&c)
	}
	if rdb == nil || c.ttl <= 0 || c.lease <= 0 || c.holdMax <= 0 {
		return nil, fmt.Errorf("redisstore: NewDedup: want a client and positive TTL, lease and hold (got %v, %v, %v)", c.ttl, c.lease, c.holdMax)
	}
	d := &Dedup{rdb: rdb, cfg: c}
	var err error
	d.duplicates, err = c.meterProvider.Meter("github.com/acemq/acemq-go/redisstore").Int64Counter(MetricDedupDuplicates,
		metric.WithDescription("deliveries of an id already handled, acked without the handler"))
	return d, err
}

// Key is the Redis key of consumer's id: <prefix><consumer>:<id>, with
// any '%' and ':' of the consumer written %25 and %3A, so that the first
// ':' after the prefix ends the consumer and no two (consumer, id) pairs
// share a key (a queue named "orders:eu" and its id "42" are not the
// queue "orders" and its id "eu:42"). A consumer with neither keeps the
// key it always had.
func (d *Dedup) Key(consumer, id string) string {
	return d.cfg.prefix + consumerKey.Replace(consumer) + ":" + id
}

// consumerKey escapes a consumer's name in a key (a Replacer does not
// rewrite what it wrote: the %25 of a '%' stays).
var consumerKey = strings.NewReplacer("%", "%25", ":", "%3A")

// Process handles consumer's message id once (as the package says): it
// takes the id's lease, calls handle, and on Accept marks the id handled
// for the TTL; anything else, or a panic, frees the id. An id already
// handled is acked without handle; one leased by another delivery waits
// for it. An empty id is parked (ErrNoMessageID).
func (d *Dedup) Process(ctx context.Context, consumer, id string, handle func(ctx context.Context) runtime.Ack) runtime.Ack {
	if id == "" {
		return runtime.Park(ErrNoMessageID)
	}
	key := d.Key(consumer, id)
	token, err := d.claim(ctx, key)
	if err != nil {
		return runtime.Retry(err)
	}
	if token == "" {
		d.stats.duplicates.Add(1)
		d.duplicates.Add(ctx, 1, metric.WithAttributes(attribute.String("acemq.dedup.consumer", consumer)))
		return runtime.Accept()
	}
	return d.run(ctx, key, token, handle)
}

func (d *Dedup) run(ctx context.Context, key, token string, handle func(context.Context) runtime.Ack) runtime.Ack {
	ended := false
	stop := d.renew(context.WithoutCancel(ctx), key, token)
	defer func() {
		if !ended {
			stop()
			d.free(context.WithoutCancel(ctx), key, token)
		}
	}()
	ack := handle(ctx)
	ended = true
	stop()
	if ack.Kind() != runtime.AckAccept {
		d.free(context.WithoutCancel(ctx), key, token)
		return ack
	}
	// The effect is done: a marker that cannot be written repeats it on
	// redelivery (at least once), so the Accept stands.
	if err := d.rdb.Set(context.WithoutCancel(ctx), key, done, d.cfg.ttl).Err(); err != nil {
		d.cfg.logger.WarnContext(ctx, "acemq: dedup: the handled marker was not written; a redelivery will run the handler again", "key", key, "err", err)
	}
	d.stats.handled.Add(1)
	return ack
}

// renewScript extends a lease only when it is still the caller's.
var renewScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0`)

// renew keeps key's lease while the handler runs: every third of the
// lease it is extended to a whole lease again, if it is still token's, so
// that a handler that outlives one lease is not run beside a duplicate; a
// process that dies stops renewing, and its lease expires as before. A
// lease found lost (it expired while Redis did not answer, and another
// delivery took it) is logged once and no longer renewed. stop ends the
// renewals (one under way is cancelled), and returns once none is.
func (d *Dedup) renew(ctx context.Context, key, token string) (stop func()) {
	ctx, cancel := context.WithCancel(ctx) // a renewal under way ends with stop
	quit, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		every := max(d.cfg.lease/3, time.Millisecond)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			n, err := renewScript.Run(ctx, d.rdb, []string{key}, token, d.cfg.lease.Milliseconds()).Int()
			switch {
			case err != nil && ctx.Err() != nil:
				return
			case err != nil:
				d.cfg.logger.WarnContext(ctx, "acemq: dedup: the lease was not renewed; trying again", "key", key, "err", err)
			case n == 0:
				d.cfg.logger.WarnContext(ctx, "acemq: dedup: the lease was lost while the handler ran: a duplicate may run beside it", "key", key)
				return
			}
		}
	}()
	return sync.OnceFunc(func() { close(quit); cancel(); <-exited })
}

// freeScript deletes a lease only when it is still the caller's.
var freeScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

func (d *Dedup) free(ctx context.Context, key, token string) {
	if err := freeScript.Run(ctx, d.rdb, []string{key}, token).Err(); err != nil {
		d.cfg.logger.WarnContext(ctx, "acemq: dedup: the lease was not freed; a retry waits for it to expire", "key", key, "err", err)
	}
}

// claim takes key's lease: the new token, or "" when the id was handled.
// A lease another delivery holds is waited for; Redis that does not answer
// is waited for until the hold is over, counted from when the consumer
// received the delivery (runtime.ReceivedAt; from the first failure when
// ctx is no handler's), so that the deliveries behind it in the prefetch,
// unacknowledged all along, are held as long as it is and not a hold each
// after it; one whose turn comes past its hold is tried once.
func (d *Dedup) claim(ctx context.Context, key string) (string, error) {
	token := newToken()
	from, received := runtime.ReceivedAt(ctx)
	wait, failing := 20*time.Millisecond, false
	for {
		ok, err := d.rdb.SetNX(ctx, key, token, d.cfg.lease).Result()
		if err == nil && ok {
			d.answered()
			return token, nil
		}
		if err == nil {
			d.answered()
			v, gerr := d.rdb.Get(ctx, key).Result()
			if gerr == nil && v == done {
				return "", nil
			}
			err = gerr
			if errors.Is(gerr, redis.Nil) { // freed or expired meanwhile
				continue
			}
			if gerr == nil { // leased by another delivery
				err = nil
			}
		}
		next := wait
		if err != nil {
			if ctx.Err() != nil {
				return "", fmt.Errorf("redisstore: dedup: %w", ctx.Err())
			}
			if !failing {
				failing = true
				if !received {
					from = time.Now()
				}
			}
			if d.down.CompareAndSwap(false, true) {
				d.cfg.logger.WarnContext(ctx, "acemq: dedup: Redis does not answer; holding deliveries until it does", "err", err)
			}
			left := d.cfg.holdMax - time.Since(from)
			if left <= 0 {
				return "", fmt.Errorf("%w: held %v: %w", ErrUnavailable, time.Since(from).Round(time.Second), err)
			}
			next = min(wait, left) // the last try at the hold's end
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("redisstore: dedup: %w", ctx.Err())
		case <-time.After(next):
		}
		wait = min(wait*2, time.Second)
	}
}

func (d *Dedup) answered() {
	if d.down.CompareAndSwap(true, false) {
		d.cfg.logger.Info("acemq: dedup: Redis answers again")
	}
}

// Ready is nil unless the last try met Redis not answering.
func (d *Dedup) Ready() error {
	if d.down.Load() {
		return ErrUnavailable
	}
	return nil
}

// Stats counts what the store did since it was made.
type Stats struct {
	Handled    int64 // handlers whose Accept was marked
	Duplicates int64 // deliveries acked without their handler
}

// Stats is what the store counted so far.
func (d *Dedup) Stats() Stats {
	return Stats{Handled: d.stats.handled.Load(), Duplicates: d.stats.duplicates.Load()}
}

func newToken() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
