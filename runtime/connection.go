package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
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
	url      string
	redacted string
	cfg      dialConfig
	log      *slog.Logger
	metrics  *metrics
	registry SchemaRegistry

	mu sync.Mutex
	// conn is the live connection of this session; dialing is closed when
	// the dial in progress ends.
	conn    *amqp.Connection
	dialing chan struct{}
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
// WithSchemaRegistry: one per process, so that a publisher and a consumer
// in the same program agree on schema ids.
var sharedRegistry = NewMemoryRegistry()

// Dial connects to the broker at url (amqp:// or amqps://). ctx bounds the
// first connection attempt only; the Connection lives until Close. Errors
// and logs show the URL with its password redacted.
func Dial(ctx context.Context, rawURL string, opts ...DialOption) (*Connection, error) {
	cfg := dialConfig{reconnectMin: 100 * time.Millisecond, reconnectMax: 10 * time.Second}
	for _, o := range opts {
		o.applyDial(&cfg)
	}
	c := &Connection{url: rawURL, redacted: redact(rawURL), cfg: cfg, done: make(chan struct{})}
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
	if _, err := c.amqpConn(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Origin is what the connection writes in x-acemq-origin.
func (c *Connection) Origin() string { return c.cfg.origin }

// Registry is the schema registry the connection's Avro types use.
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
// the last one died. One dial at a time, made without holding c.mu, so
// Close and other callers are never stuck behind it; each caller waits for
// it only as long as its own ctx allows.
func (c *Connection) amqpConn(ctx context.Context) (*amqp.Connection, error) {
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

		conn, err := c.dial(ctx)

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

func (c *Connection) dial(ctx context.Context) (*amqp.Connection, error) {
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName(c.cfg.origin)
	cfg := amqp.Config{
		Properties:      props,
		TLSClientConfig: c.cfg.tls,
		Heartbeat:       10 * time.Second,
		Locale:          "en_US",
	}
	type result struct {
		conn *amqp.Connection
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		conn, err := amqp.DialConfig(c.url, cfg)
		ch <- result{conn, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("dial %s: %s", c.redacted, c.scrub(r.err.Error()))
		}
		return r.conn, nil
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.conn != nil {
				r.conn.Close()
			}
		}()
		return nil, fmt.Errorf("dial %s: %w", c.redacted, ctx.Err())
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

// scrub removes the password from a text that may quote the URL.
func (c *Connection) scrub(s string) string {
	if u, err := url.Parse(c.url); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			s = strings.ReplaceAll(s, p, "xxxxx")
		}
	}
	return s
}

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
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
