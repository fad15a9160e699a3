package pgstore

import (
	"log/slog"
	"time"
)

// Relay defaults.
const (
	DefaultRelayBatch = 500
	DefaultRelayPoll  = 5 * time.Second
)

// RelayOption configures a Relay (NewRelay).
type RelayOption interface{ applyRelay(*relayConfig) }

type relayOptionFunc func(*relayConfig)

func (f relayOptionFunc) applyRelay(c *relayConfig) { f(c) }

type relayConfig struct {
	batch               int
	poll                time.Duration
	backoff, maxBackoff time.Duration
	logger              *slog.Logger
}

func newRelayConfig(opts []RelayOption) relayConfig {
	c := relayConfig{batch: DefaultRelayBatch, poll: DefaultRelayPoll, backoff: time.Second, maxBackoff: 5 * time.Minute}
	for _, o := range opts {
		o.applyRelay(&c)
	}
	if c.batch < 1 {
		c.batch = DefaultRelayBatch
	}
	if c.poll <= 0 {
		c.poll = DefaultRelayPoll
	}
	if c.backoff <= 0 {
		c.backoff = time.Second
	}
	if c.maxBackoff < c.backoff {
		c.maxBackoff = c.backoff
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	return c
}

// WithRelayBatch sets how many rows a relay reads at once and keeps in
// flight at most (default DefaultRelayBatch, 500).
func WithRelayBatch(n int) RelayOption {
	return relayOptionFunc(func(c *relayConfig) { c.batch = n })
}

// WithRelayPoll sets how often an idle relay looks at the table without
// being notified (default DefaultRelayPoll, 5 s): for rows written
// without PublishTx's NOTIFY, for the shards of a relay that stopped, and
// for rows whose retry time came. A row PublishTx writes wakes the relay
// holding its shard at once, through LISTEN/NOTIFY.
func WithRelayPoll(d time.Duration) RelayOption {
	return relayOptionFunc(func(c *relayConfig) { c.poll = d })
}

// WithRelayBackoff sets the wait before a row the broker refused
// (unroutable, nacked, its exchange missing), or one Publish would
// refuse, is tried again: min after
// the first refusal, doubling up to max (default 1 s to 5 min); and the
// wait after the broker or the database is found unavailable: min,
// doubling with each try up to 30 s (or max, when lower), back to min
// once the relay gets through (the database answers, a batch goes out).
func WithRelayBackoff(min, max time.Duration) RelayOption {
	return relayOptionFunc(func(c *relayConfig) { c.backoff, c.maxBackoff = min, max })
}

// WithRelayLogger sets the relay's logger (default slog.Default()).
func WithRelayLogger(l *slog.Logger) RelayOption {
	return relayOptionFunc(func(c *relayConfig) { c.logger = l })
}
