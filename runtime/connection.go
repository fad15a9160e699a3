package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel"
)

// Connection is a connection to RabbitMQ shared by publishers, consumers
// and operator calls. It reconnects on its own: a call after the broker
// went away dials a fresh connection with fresh channels, and consumers
// resubscribe with backoff. It never reuses a channel across connections,
// so an ack of a delivery from a dead session fails instead of acking
// another message. Safe for concurrent use.
type Connection struct {
	addrs    []address
	redacted string // every address, passwords redacted, comma-separated
	cfg      dialConfig
	log      *slog.Logger
	metrics  *metrics
	registry SchemaRegistry

	mu sync.Mutex
	// conn is the live connection of this session; dialing is closed when
	// the dial in progress ends.
	conn    *amqp.Connection
	dialing chan struct{}
	// current is the index in addrs of the address last connected to;
	// a reconnect starts with the one after it.
	current       int
	everConnected bool
	// closing refuses new consumers; closed refuses everything.
	closing, closed bool
	// pub carries the application's publishes, side the consumers' retries,
	// dead letters and parks: an application publish that makes the broker
	// close its channel (an exchange that does not exist) cannot fail a
	// consumer's set-aside, nor the other way round.
	pub, side *publisher
	// exchanges the session has seen exist, checked passively before the
	// first publish to each.
	exchanges map[string]bool
	// pulls are one channel per queue pulled from: an error on one queue
	// does not return another queue's unsettled deliveries.
	pulls map[string]*amqp.Channel
	// consumers are closed by Close.
	consumers map[*Consumer]struct{}

	done chan struct{} // closed by Close
}

// sharedRegistry is the registry of connections dialled without
// WithSchemaRegistry (and of Avro types without a TypeRegistry): one per
// process, with ids derived from each schema's canonical form, so that a
// publisher and a consumer agree on schema ids in one program or in two.
var sharedRegistry = NewFingerprintRegistry()

// Dial connects to the broker at rawURL (amqp:// or amqps://), or to the
// first that answers of several brokers (the nodes of a cluster): rawURL
// may be a comma-separated list of URLs, and WithAddresses adds more. The
// addresses are tried in turn, on this first dial and on every reconnect;
// a reconnect starts with the address after the one that was lost.
//
// A broker that is not there yet (connection refused, DNS failure,
// timeout) is tried again, round the list, with a backoff doubling from
// 100ms to 10s (WithReconnectBackoff), each failed attempt logged once at
// Warn with the delay before the next, until ctx is done: a service that
// starts before its broker needs no loop of its own. What retrying cannot
// fix fails at once: a refused login or unknown vhost (ErrAuth), a URL
// that does not parse or has another scheme (ErrInvalidURL).
//
// ctx bounds this first connection only; the Connection lives until Close.
// Errors are *DialError: they show the URL with its password redacted,
// match ErrAuth, ErrUnreachable or ErrInvalidURL with errors.Is, and keep
// their cause (errors.As(err, **amqp.Error), errors.Is(err,
// syscall.ECONNREFUSED), context.DeadlineExceeded). Logs never show a
// password either.
func Dial(ctx context.Context, rawURL string, opts ...DialOption) (*Connection, error) {
	cfg := dialConfig{reconnectMin: 100 * time.Millisecond, reconnectMax: 10 * time.Second}
	for _, o := range opts {
		o.applyDial(&cfg)
	}
	addrs, err := parseAddresses(rawURL, cfg.addresses)
	if err != nil {
		return nil, err
	}
	shown := make([]string, len(addrs))
	for i, a := range addrs {
		shown[i] = a.redacted
	}
	c := &Connection{addrs: addrs, redacted: strings.Join(shown, ","), cfg: cfg, done: make(chan struct{})}
	if c.cfg.reconnectMin <= 0 {
		c.cfg.reconnectMin = 100 * time.Millisecond
	}
	if c.cfg.reconnectMax < c.cfg.reconnectMin {
		c.cfg.reconnectMax = c.cfg.reconnectMin
	}
	if c.cfg.origin == "" {
		c.cfg.origin = defaultOrigin()
	}
	c.log = cfg.logger
	if c.log == nil {
		c.log = slog.Default()
	}
	c.log = c.log.With("broker", c.redacted)
	mp := cfg.meterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	c.metrics = newMetrics(mp)
	c.registry = cfg.registry
	if c.registry == nil {
		c.registry = sharedRegistry
	}
	if c.cfg.retry != nil {
		if err := c.cfg.retry.Validate(); err != nil {
			return nil, fmt.Errorf("dial %s: %w", c.redacted, err)
		}
	}
	if _, err := c.connect(ctx, true); err != nil {
		return nil, err
	}
	return c, nil
}

// Address is the broker URL, password redacted, of the live connection,
// or of the one last connected to: with several addresses, the node in use.
func (c *Connection) Address() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.addrs[c.current].redacted
}

// Origin is what the connection writes in x-acemq-origin.
func (c *Connection) Origin() string { return c.cfg.origin }

// Registry is the schema registry the connection's Avro types use: the
// WithSchemaRegistry option's, else the process default (an Avro type with
// its own TypeRegistry uses that one on a connection without the option).
func (c *Connection) Registry() SchemaRegistry { return c.registry }

// Close closes the connection. Consumers still running are closed first
// (see Consumer.Close), each bounded by ctx; unsettled deliveries go back to
// their queues. Closing the AMQP connection waits for the broker's reply
// until ctx's deadline (5s without one).
func (c *Connection) Close(ctx context.Context) error {
	c.mu.Lock()
	c.closing = true
	consumers := make([]*Consumer, 0, len(c.consumers))
	for cs := range c.consumers {
		consumers = append(consumers, cs)
	}
	c.mu.Unlock()
	var errs []error
	for _, cs := range consumers {
		errs = append(errs, cs.Close(ctx))
	}
	if err := errors.Join(errs...); err != nil {
		c.log.Warn("acemq: closing consumers", "err", err)
	}

	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.done)
	conn := c.conn
	c.conn, c.pub, c.side, c.pulls, c.exchanges = nil, nil, nil, nil, nil
	c.mu.Unlock()
	if conn == nil || conn.IsClosed() {
		return nil
	}
	if err := conn.CloseDeadline(deadlineOf(ctx)); err != nil && !errors.Is(err, amqp.ErrClosed) {
		return fmt.Errorf("close %s: %w", c.redacted, err)
	}
	return nil
}

func (c *Connection) track(cs *Consumer) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing || c.closed {
		return ErrClosed
	}
	if c.consumers == nil {
		c.consumers = map[*Consumer]struct{}{}
	}
	c.consumers[cs] = struct{}{}
	return nil
}

func (c *Connection) untrack(cs *Consumer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.consumers, cs)
}

// amqpConn returns the live amqp connection, dialling a fresh one when
// the last one died: each address once, in turn (see Dial).
func (c *Connection) amqpConn(ctx context.Context) (*amqp.Connection, error) {
	return c.connect(ctx, false)
}

// connect returns the live amqp connection or dials one; with persist it
// keeps trying a broker that is not there until ctx is done. One dial at a
// time, made without holding c.mu, so Close and other callers are never
// stuck behind it; each caller waits for it only as long as its own ctx
// allows.
func (c *Connection) connect(ctx context.Context, persist bool) (*amqp.Connection, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, ErrClosed
		}
		if c.conn != nil && !c.conn.IsClosed() {
			conn := c.conn
			c.mu.Unlock()
			return conn, nil
		}
		if wait := c.dialing; wait != nil {
			c.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, fmt.Errorf("dial %s: %w", c.redacted, ctx.Err())
			}
		}
		done := make(chan struct{})
		c.dialing = done
		c.mu.Unlock()

		conn, err := c.dialAddresses(ctx, persist)

		c.mu.Lock()
		c.dialing = nil
		close(done)
		if err == nil && c.closed {
			conn.Close()
			err = ErrClosed
		}
		if err == nil {
			c.conn, c.pub, c.side, c.exchanges = conn, nil, nil, nil
			c.pulls = nil
		}
		c.mu.Unlock()
		return conn, err
	}
}

// channel opens a fresh channel on the live connection.
func (c *Connection) channel(ctx context.Context) (*amqp.Channel, error) {
	conn, err := c.amqpConn(ctx)
	if err != nil {
		return nil, err
	}
	ch, err := conn.Channel()
	if err != nil {
		// The connection may have died between the check and the call.
		c.mu.Lock()
		if c.conn == conn {
			c.conn = nil
		}
		c.mu.Unlock()
		conn.Close()
		if conn, err = c.amqpConn(ctx); err != nil {
			return nil, err
		}
		if ch, err = conn.Channel(); err != nil {
			return nil, fmt.Errorf("open channel on %s: %w", c.redacted, err)
		}
	}
	return ch, nil
}

func defaultOrigin() string {
	prog := filepath.Base(os.Args[0])
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return prog + "@" + host
}

func deadlineOf(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(5 * time.Second)
}
