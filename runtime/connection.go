package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/codec"
	"github.com/acemq/acemq-go/runtime/internal/consume"
	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/obs"
	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
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
	// origin is cfg.origin boxed once, as each publish's x-acemq-origin.
	origin   any
	log      *slog.Logger
	metrics  *obs.Metrics
	registry SchemaRegistry
	// delayPrefix is the delay topology Declare declared last (WithDelay).
	delayPrefix atomic.Pointer[string]
	// codecs is how c picks a message type's codec (core.CodecFor).
	codecs core.CodecChoice
	// tracers caches the tracer of the provider in use (see tracing).
	tracers obs.Tracers
	// corks are the sockets of live connections, by connection
	// (*amqp.Connection → *amqpx.CorkConn), for the publishers' writers.
	corks sync.Map

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
	pub, side *amqpx.Publisher
	// exchanges the session has seen exist, checked passively before the
	// first publish to each.
	exchanges map[string]bool
	// pulls are one channel per queue pulled from: an error on one queue
	// does not return another queue's unsettled deliveries.
	pulls map[string]*amqp.Channel
	// consumers are closed by Close.
	consumers map[*consume.Consumer]struct{}
	// quorum are the queues this Connection declared as quorum: the only
	// ones whose x-delivery-count it trusts (queuetype.go).
	quorum consume.QuorumQueues
	// native are the NativeRetry queues this Connection declared, with
	// their broker delays: what a requeue's log line says it waits.
	native consume.NativeQueues
	// blocked is set while the broker has blocked conn (connection.blocked:
	// a memory or disk alarm), with the broker's reason.
	blocked       bool
	blockedReason string
	// health is what State reports: since when, and the last error.
	health connHealth
	// socks are the sockets of the connections dialled and not yet seen
	// closed: Close closes one whose broker does not answer in time.
	socks map[*amqp.Connection]net.Conn
	// up is closed, and replaced, each time a dial succeeds: consumers
	// waiting to resubscribe wake at once instead of at their next backoff.
	up chan struct{}

	done chan struct{} // closed by Close
}

// sharedRegistry is the registry of connections dialled without
// WithSchemaRegistry (and of Avro types without a registry of their own): one per
// process, with ids derived from each schema's canonical form, so that a
// publisher and a consumer agree on schema ids in one program or in two.
var sharedRegistry = codec.NewFingerprintRegistry()

// Dial connects to the broker at rawURL (amqp:// or amqps://), or to the
// first that answers of several brokers (the nodes of a cluster): rawURL
// may be a comma-separated list of URLs, and WithAddresses adds more. The
// addresses are tried in turn, on this first dial and on every reconnect;
// a reconnect starts with the address after the one that was lost.
//
// A broker that is not there yet (connection refused, DNS failure,
// timeout, a connection closed or reset before the AMQP handshake
// completed: a broker starting up, a load balancer with no broker behind
// it) is tried again, round the list, with a backoff doubling from
// 100ms to 2s (WithReconnectBackoff), each failed attempt logged once at
// Warn with the delay before the next, until ctx is done: a service that
// starts before its broker needs no loop of its own. What retrying cannot
// fix fails at once: a refused login or unknown vhost (ErrAuth), a URL
// that does not parse or has another scheme (ErrInvalidURL).
//
// ctx bounds this first connection only; the Connection lives until Close.
// Errors are *DialError: they show the URL with its password redacted,
// match ErrAuth, ErrUnreachable (and so ErrUnavailable) or ErrInvalidURL
// with errors.Is, and keep their cause (errors.As(err, **amqp.Error),
// errors.Is(err, syscall.ECONNREFUSED), context.DeadlineExceeded). Logs
// never show a password either.
func Dial(ctx context.Context, rawURL string, opts ...DialOption) (*Connection, error) {
	cfg := dialConfig{reconnectMin: 100 * time.Millisecond, reconnectMax: 2 * time.Second, heartbeat: 10 * time.Second}
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
	c := &Connection{addrs: addrs, redacted: strings.Join(shown, ","), cfg: cfg, done: make(chan struct{}), up: make(chan struct{})}
	if c.cfg.reconnectMin <= 0 {
		c.cfg.reconnectMin = 100 * time.Millisecond
	}
	if c.cfg.reconnectMax < c.cfg.reconnectMin {
		c.cfg.reconnectMax = c.cfg.reconnectMin
	}
	if c.cfg.origin == "" {
		c.cfg.origin = defaultOrigin()
	}
	c.origin = c.cfg.origin
	c.log = cfg.logger
	if c.log == nil {
		c.log = slog.Default()
	}
	c.log = c.log.With("broker", c.redacted)
	mp := cfg.meterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	c.metrics = obs.NewMetrics(mp)
	c.registry = cfg.registry
	if c.registry == nil {
		c.registry = sharedRegistry
	}
	c.codecs = codecChoice(cfg, c.registry)
	if c.cfg.retry != nil {
		if err := c.cfg.retry.Validate(); err != nil {
			return nil, fmt.Errorf("dial %s: %w", c.redacted, err)
		}
	}
	if _, err := c.connect(ctx, true); err != nil {
		return nil, err
	}
	c.metrics.Observe(c.eachConsumer)
	return c, nil
}

// Address is the broker URL, password redacted, of the live connection,
// or of the one last connected to: with several addresses, the node in use.
func (c *Connection) Address() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.addrs[c.current].redacted
}

// Close closes the connection. Consumers still running are closed first,
// together (see Consumer.Close), bounded by ctx; unsettled deliveries go
// back to their queues. Closing the AMQP connection waits for the broker's
// reply until ctx's deadline (5s without one). Close returns by that
// deadline even when the broker does not answer (a memory alarm blocks the
// whole connection): it then closes the socket and says so in its error.
func (c *Connection) Close(ctx context.Context) error {
	c.mu.Lock()
	c.closing = true
	consumers := make([]*consume.Consumer, 0, len(c.consumers))
	for cs := range c.consumers {
		consumers = append(consumers, cs)
	}
	c.mu.Unlock()
	errs := make([]error, len(consumers))
	var wg sync.WaitGroup
	for i, cs := range consumers {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = cs.Close(ctx) }()
	}
	wg.Wait()
	err := errors.Join(errs...)
	if err != nil {
		c.log.Warn("acemq: closing consumers", "err", err)
	}

	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.health.since = time.Now()
	close(c.done)
	c.metrics.Unobserve()
	conn := c.conn
	c.conn, c.pub, c.side, c.pulls, c.exchanges = nil, nil, nil, nil, nil
	c.mu.Unlock()
	if conn == nil || conn.IsClosed() {
		return err
	}
	if cerr := c.closeConn(ctx, conn); cerr != nil {
		err = errors.Join(err, fmt.Errorf("close %s: %w", c.redacted, cerr))
	}
	return err
}

// closeConn sends connection.close and waits for the broker's reply until
// ctx's deadline (5s without one); past it, it closes the socket, which
// ends every call still waiting on conn. (amqp091-go's CloseDeadline alone
// does not bound the wait: each frame the broker sends moves the socket's
// read deadline three heartbeats on.)
func (c *Connection) closeConn(ctx context.Context, conn *amqp.Connection) error {
	deadline := deadlineOf(ctx)
	note := c.blockedNote()
	expired := time.NewTimer(time.Until(deadline))
	defer expired.Stop()
	done := make(chan error, 1)
	go func() { done <- conn.CloseDeadline(deadline) }()
	var cerr error
	select {
	case cerr = <-done:
		if cerr == nil || errors.Is(cerr, amqp.ErrClosed) {
			return nil
		}
		if ctx.Err() == nil && time.Now().Before(deadline) {
			return cerr
		}
	case <-ctx.Done():
	case <-expired.C:
	}
	c.closeSocket(conn)
	if cerr == nil {
		cerr = <-done
	}
	why := ctx.Err()
	if why == nil {
		why = context.DeadlineExceeded
	}
	return &amqpx.StalledError{What: "connection.close", Note: note, Left: "the connection (closed its socket)", Err: fmt.Errorf("%w (%w)", why, cerr)}
}

// blockedNote is ", connection blocked by the broker: <reason>" while the
// broker blocks the connection, else "": for error texts.
func (c *Connection) blockedNote() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.blocked {
		return ""
	}
	return " (connection blocked by the broker: " + c.blockedReason + ")"
}

// blockedErr is the error of a publish refused at once while the broker
// blocks the connection, or nil.
func (c *Connection) blockedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.blocked {
		return nil
	}
	return &blockedError{reason: c.blockedReason}
}

// watchBlocked follows connection.blocked/unblocked for conn; it ends when
// conn is closed (amqp091-go closes the channel).
func (c *Connection) watchBlocked(conn *amqp.Connection) {
	blocks := conn.NotifyBlocked(make(chan amqp.Blocking, 4))
	closes := conn.NotifyClose(make(chan *amqp.Error, 1))
	go func() {
		defer c.lost(conn, closes)
		for b := range blocks {
			c.mu.Lock()
			if c.conn == conn {
				c.blocked, c.blockedReason = b.Active, b.Reason
				if c.blocked && c.blockedReason == "" {
					c.blockedReason = "no reason given"
				}
				c.health.since = time.Now()
			}
			c.mu.Unlock()
			if b.Active {
				c.log.Warn("acemq: the broker blocked the connection; publishes fail with ErrBlocked until it unblocks", "reason", b.Reason)
			} else {
				c.log.Info("acemq: the broker unblocked the connection")
			}
		}
	}()
}

// upSignal is closed when the next dial succeeds.
func (c *Connection) upSignal() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.up
}

// keepSocket remembers conn's socket, for closeSocket.
func (c *Connection) keepSocket(conn *amqp.Connection, sock net.Conn) {
	if sock == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.socks == nil {
		c.socks = map[*amqp.Connection]net.Conn{}
	}
	c.socks[conn] = sock
}

// closeSocket closes conn's socket without a word to the broker: every
// call waiting on conn returns with an error.
func (c *Connection) closeSocket(conn *amqp.Connection) {
	c.mu.Lock()
	sock := c.socks[conn]
	delete(c.socks, conn)
	c.mu.Unlock()
	if sock != nil {
		_ = sock.Close()
	}
}

// forgetSocket drops conn's socket once conn is closed.
func (c *Connection) forgetSocket(conn *amqp.Connection) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.socks, conn)
}

func (c *Connection) track(cs *consume.Consumer) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing || c.closed {
		return ErrClosed
	}
	if c.consumers == nil {
		c.consumers = map[*consume.Consumer]struct{}{}
	}
	c.consumers[cs] = struct{}{}
	return nil
}

func (c *Connection) untrack(cs *consume.Consumer) {
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
			go conn.Close() // a round trip: not under c.mu
			err = ErrClosed
		}
		if err == nil {
			c.conn, c.pub, c.side, c.exchanges = conn, nil, nil, nil
			c.pulls = nil
			c.blocked, c.blockedReason = false, ""
			c.health = connHealth{since: time.Now()}
			close(c.up)
			c.up = make(chan struct{})
		}
		if err != nil {
			c.health.failed(err)
		}
		c.mu.Unlock()
		if err == nil {
			c.watchBlocked(conn)
		}
		return conn, err
	}
}

// channel opens a fresh channel on the live connection.
func (c *Connection) channel(ctx context.Context) (*amqp.Channel, error) {
	ch, _, err := c.channelOn(ctx)
	return ch, err
}

// channelOn opens a fresh channel on the live connection and says which
// connection it is on.
func (c *Connection) channelOn(ctx context.Context) (*amqp.Channel, *amqp.Connection, error) {
	conn, err := c.amqpConn(ctx)
	if err != nil {
		return nil, nil, err
	}
	ch, err := c.newChannel(ctx, conn)
	if amqpx.Stalled(err) {
		// The broker did not answer in time: the connection is kept for
		// the others on it (it is declared dead by its heartbeats if the
		// broker is gone).
		return nil, nil, fmt.Errorf("open channel on %s: %w", c.redacted, err)
	}
	if err != nil {
		// The connection may have died between the check and the call.
		c.mu.Lock()
		if c.conn == conn {
			c.conn = nil
		}
		c.mu.Unlock()
		go conn.Close() // most likely closed already; never wait on it
		if conn, err = c.amqpConn(ctx); err != nil {
			return nil, nil, err
		}
		if ch, err = c.newChannel(ctx, conn); err != nil {
			return nil, nil, fmt.Errorf("open channel on %s: %w", c.redacted, err)
		}
	}
	return ch, conn, nil
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

// eachConsumer gives fn each tracked consumer's queue, its held retries
// and its deliveries in flight, for the metrics' gauges.
func (c *Connection) eachConsumer(fn func(queue string, held, inFlight int)) {
	for _, cs := range c.trackedConsumers() {
		st := cs.Stats()
		fn(cs.Queue(), st.Held, st.InFlight)
	}
}

// connLink is c as the routes and the engines under internal/ see it
// (core.Conn): an adapter, so that what they call is not c's API.
type connLink struct{ c *Connection }

// Codecs is how c picks a message type's codec.
func (l connLink) Codecs() *core.CodecChoice { return &l.c.codecs }

// codecChoice is how a connection dialled with cfg picks a message type's
// codec; def is its registry for types without one.
func codecChoice(cfg dialConfig, def SchemaRegistry) core.CodecChoice {
	return core.CodecChoice{Registry: cfg.registry, Default: def, Reference: cfg.referenceValidation}
}

// consumeConfig gives cfg what a consumer takes from c.
func (c *Connection) consumeConfig(cfg *consume.Config) {
	cfg.Conn, cfg.Metrics, cfg.Log = connLink{c}, c.metrics, c.log
	cfg.ConnRetry, cfg.ConnMiddleware = c.cfg.retry, c.cfg.middleware
	cfg.ReconnectMin, cfg.ReconnectMax = c.cfg.reconnectMin, c.cfg.reconnectMax
	cfg.Quorum, cfg.Native = &c.quorum, &c.native
}

// The rest of connLink is consume.Conn: what a consumer calls on c.

func (l connLink) Tracer() (trace.Tracer, bool) { return l.c.tracing() }
func (l connLink) BlockedNote() string          { return l.c.blockedNote() }
func (l connLink) CorkOf(conn *amqp.Connection) *amqpx.CorkConn {
	return l.c.corkOf(conn)
}
func (l connLink) UpSignal() <-chan struct{}    { return l.c.upSignal() }
func (l connLink) Untrack(cs *consume.Consumer) { l.c.untrack(cs) }
func (l connLink) SetAside(ctx context.Context, o amqpx.Outgoing) error {
	return l.c.setAside(ctx, o)
}
func (l connLink) PublishThen(ctx context.Context, o amqpx.Outgoing, then func(error), arrived *atomic.Bool) error {
	return l.c.publishThen(ctx, true, o, then, arrived)
}
func (l connLink) ChannelOn(ctx context.Context) (*amqp.Channel, *amqp.Connection, error) {
	return l.c.channelOn(ctx)
}
func (l connLink) NewChannel(ctx context.Context, conn *amqp.Connection) (*amqp.Channel, error) {
	return l.c.newChannel(ctx, conn)
}
func (l connLink) Closed() bool { return l.c.isClosed() }
func (l connLink) DialOwn(ctx context.Context) (*amqp.Connection, error) {
	return l.c.dialAddresses(ctx, false)
}

// frameMax is the frame_max of c's connection (amqpx.DefaultFrameMax while it
// has none).
func (c *Connection) frameMax() int {
	c.mu.Lock()
	conn := c.conn
	c.mu.Unlock()
	return amqpx.FrameMaxOf(conn)
}

// isClosed reports a Connection that Close was called on.
func (c *Connection) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// trackedConsumers are the connection's consumers not yet closed.
func (c *Connection) trackedConsumers() []*consume.Consumer {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*consume.Consumer, 0, len(c.consumers))
	for cs := range c.consumers {
		out = append(out, cs)
	}
	return out
}

// The rest of connLink is rpc.Conn: what a requester and a responder call
// on c.

func (l connLink) Metrics() *obs.Metrics { return l.c.metrics }
func (l connLink) Log() *slog.Logger     { return l.c.log }
func (l connLink) BlockedErr() error     { return l.c.blockedErr() }
func (l connLink) ReconnectBounds() (lo, hi time.Duration) {
	return l.c.cfg.reconnectMin, l.c.cfg.reconnectMax
}
func (l connLink) CallChannel(ctx context.Context) (*amqpx.CallChannel, error) {
	return l.c.callChannel(ctx)
}
func (l connLink) StartPublish(ctx context.Context, o *amqpx.Outgoing) trace.Span {
	return l.c.startPublish(ctx, o)
}
func (l connLink) EndPublish(span trace.Span, o *amqpx.Outgoing, start time.Time, err error) {
	l.c.endPublish(span, o, start, err)
}
func (l connLink) PublishError(o amqpx.Outgoing, err error) error { return l.c.publishError(o, err) }
func (l connLink) CheckExchange(ctx context.Context, exchange string) error {
	return l.c.checkExchange(ctx, exchange)
}
func (l connLink) Publish(ctx context.Context, o amqpx.Outgoing) error {
	return l.c.publishAll(ctx, false, []amqpx.Outgoing{o})[0]
}
func (l connLink) NewPublishing(typ, contentType string, body []byte, headers map[string]any) amqp.Publishing {
	return l.c.newPublishing(typ, contentType, body, publishConfig{headers: headers})
}
func (l connLink) Encode(ctx context.Context, typ string, codec Codec, v any) (amqpx.Outgoing, error) {
	fp, _ := codec.(interface{ SchemaFingerprint() string })
	return encodeOutgoing(ctx, l.c, typ, codec, fp, "", v, publishConfig{})
}
