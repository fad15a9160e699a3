package runtime

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/redact"
	amqp "github.com/rabbitmq/amqp091-go"
)

// address is one broker URL of a connection.
type address struct {
	raw      string
	redacted string
	secret   string // the password, for scrubbing texts that quote it
}

// urlSeparator is a comma that starts another URL: a comma only separates
// where a scheme:// follows, so a comma inside a password is kept (and a
// second URL with a wrong scheme is refused rather than read as a vhost).
var urlSeparator = regexp.MustCompile(`,\s*[A-Za-z][A-Za-z0-9+.-]*://`)

// parseAddresses splits rawURL (one URL, or several separated by commas),
// appends extra, and checks each.
func parseAddresses(rawURL string, extra []string) ([]address, error) {
	var raws []string
	if strings.TrimSpace(rawURL) != "" {
		rest := rawURL
		for {
			loc := urlSeparator.FindStringIndex(rest)
			if loc == nil {
				raws = append(raws, strings.TrimSpace(rest))
				break
			}
			raws = append(raws, strings.TrimSpace(rest[:loc[0]]))
			// Keep the scheme: it starts after the comma and the spaces.
			next := rest[loc[0]+1:]
			rest = strings.TrimLeft(next, " \t\r\n")
		}
	}
	for _, e := range extra {
		raws = append(raws, strings.TrimSpace(e))
	}
	if len(raws) == 0 {
		return nil, &DialError{Kind: ErrInvalidURL, Err: errors.New("no broker URL given")}
	}
	out := make([]address, 0, len(raws))
	for _, raw := range raws {
		a := address{raw: raw, redacted: redactURL(raw), secret: passwordOf(raw)}
		if _, err := amqp.ParseURI(raw); err != nil {
			return nil, &DialError{Address: a.redacted, Kind: ErrInvalidURL, Err: err, secrets: []address{a}}
		}
		out = append(out, a)
	}
	return out, nil
}

// redactURL is raw with its password replaced by xxxxx, also when raw does
// not parse as a URL.
func redactURL(raw string) string { return redact.URL(raw) }

// passwordOf is the password in raw, found without parsing it as a URL.
func passwordOf(raw string) string { return redact.Password(raw) }

// dialAddresses connects to the first address that answers. With persist
// (the first Dial) it goes round the list again after a capped backoff
// until ctx is done; otherwise (a reconnect) it goes round once. It stops
// at once on an error that retrying cannot fix (see retryable). A
// reconnect starts at the address after the one last connected to.
func (c *Connection) dialAddresses(ctx context.Context, persist bool) (*amqp.Connection, error) {
	n := len(c.addrs)
	c.mu.Lock()
	start := c.current
	if c.everConnected {
		start = (c.current + 1) % n
	}
	c.mu.Unlock()
	wait := c.cfg.reconnectMin
	began := time.Now()
	var last *DialError
	for attempt := 1; ; attempt++ {
		for i := range n {
			idx := (start + i) % n
			a := c.addrs[idx]
			conn, err := c.dialOne(ctx, a)
			if err == nil {
				c.mu.Lock()
				c.current, c.everConnected = idx, true
				c.mu.Unlock()
				return conn, nil
			}
			if ctxEnded(ctx) {
				// The attempt was cut short by ctx (its error may be the
				// dialer's own timeout at ctx's deadline): the cause worth
				// reporting is the last attempt that ran its course.
				return nil, c.gaveUp(ctx, last, err, a, attempt, began)
			}
			kind, again := amqpx.ClassifyDial(err)
			de := &DialError{Address: a.redacted, Kind: kind, Err: err, secrets: []address{a}}
			if !again {
				return nil, de
			}
			last = de
			lastOfRound := i == n-1
			switch {
			case !lastOfRound:
				c.log.Warn("acemq: broker not reachable; trying the next address",
					"address", a.redacted, "attempt", attempt, "err", de.cause(), "next", c.addrs[(idx+1)%n].redacted, "retry_in", time.Duration(0))
			case persist:
				c.log.Warn("acemq: broker not reachable; trying again",
					"address", a.redacted, "attempt", attempt, "err", de.cause(), "next", c.addrs[start].redacted, "retry_in", wait)
			}
		}
		if !persist {
			return nil, last
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, c.gaveUp(ctx, last, nil, c.addrs[start], attempt, began)
		case <-c.done:
			return nil, ErrClosed
		}
		wait = min(wait*2, c.cfg.reconnectMax)
	}
}

// ctxEnded reports a ctx that is done or whose deadline has passed (the
// dialer's timeout at the deadline can come a moment before ctx.Done).
func ctxEnded(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// gaveUp is the error of a dial whose ctx ended: it matches ctx's error,
// ErrUnreachable, and the last attempt's cause.
func (c *Connection) gaveUp(ctx context.Context, last *DialError, err error, a address, attempts int, began time.Time) error {
	cause := ctx.Err()
	if cause == nil {
		cause = context.DeadlineExceeded
	}
	secrets := []address{a}
	if last != nil {
		secrets = append(secrets, last.secrets...)
		cause = fmt.Errorf("%w after %d attempts in %s; last error: %w", cause, attempts, time.Since(began).Round(time.Millisecond), last.Err)
	} else if err != nil && !errors.Is(err, cause) {
		cause = fmt.Errorf("%w: %w", cause, err)
	}
	addr := a.redacted
	if len(c.addrs) > 1 {
		addr = c.redacted
	}
	return &DialError{Address: addr, Kind: ErrUnreachable, Err: cause, secrets: secrets}
}

// dialOne makes one connection attempt to a, bounded by ctx.
func (c *Connection) dialOne(ctx context.Context, a address) (*amqp.Connection, error) {
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName(c.cfg.origin)
	tlsCfg, askedForCert := amqpx.WatchCertificateRequest(amqpx.TlsFor(c.cfg.tls))
	cfg := amqp.Config{
		Properties:      props,
		TLSClientConfig: tlsCfg,
		Heartbeat:       amqpx.EffectiveHeartbeat(c.cfg.heartbeat),
		Locale:          "en_US",
	}
	var sock net.Conn
	// A plain socket is corked by the publishers' writers (corkconn.go);
	// a TLS one is not (not measured yet).
	var cork *amqpx.CorkConn
	var watch atomic.Pointer[amqpx.HandshakeWatch]
	plain := !strings.HasPrefix(strings.ToLower(a.raw), "amqps:")
	dial := amqpx.ContextDialer(ctx, plain, !c.cfg.noHeaderFilter, func(nc net.Conn, w *amqpx.HandshakeWatch) { sock = nc; watch.Store(w) })
	cfg.Dial = dial
	if plain {
		cfg.Dial = func(network, addr string) (net.Conn, error) {
			conn, err := dial(network, addr)
			if err != nil {
				return nil, err
			}
			cork = &amqpx.CorkConn{Conn: conn}
			return cork, nil
		}
	}
	type result struct {
		conn *amqp.Connection
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		conn, err := amqp.DialConfig(a.raw, cfg)
		err = amqpx.CertificateRequired(err, askedForCert)
		if w := watch.Load(); w != nil {
			err = amqpx.HandshakeCutIn(err, w.Cut(), plain)
		}
		ch <- result{conn, err}
	}()
	select {
	case r := <-ch:
		if r.err == nil {
			c.keepSocket(r.conn, sock)
			if cork != nil {
				c.keepCork(r.conn, cork)
			}
		}
		return r.conn, r.err
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.conn != nil {
				r.conn.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// keepCork remembers conn's corkable socket until conn closes.
func (c *Connection) keepCork(conn *amqp.Connection, cork *amqpx.CorkConn) {
	c.corks.Store(conn, cork)
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	go func() {
		<-closed
		c.corks.Delete(conn)
	}()
}

// corkOf is conn's corkable socket, nil when it has none.
func (c *Connection) corkOf(conn *amqp.Connection) *amqpx.CorkConn {
	cork, _ := c.corks.Load(conn)
	k, _ := cork.(*amqpx.CorkConn)
	return k
}
