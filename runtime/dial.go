package runtime

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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
			kind, again := classifyDial(err)
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

// tlsFor is the caller's TLS configuration for one attempt: a clone, since
// amqp091-go writes the attempt's host into an empty ServerName, and on the
// caller's own config that name would stick for every later address (a
// failover to a node whose certificate names another host would fail its
// verification). A ServerName the caller set is kept, for every address.
func tlsFor(cfg *tls.Config) *tls.Config {
	if cfg == nil {
		return nil
	}
	return cfg.Clone()
}

// watchCertificateRequest makes cfg record whether the broker asked for a
// client certificate while cfg has none to give. Under TLS 1.3 the broker
// refuses a missing certificate after the client's handshake is done, with
// an alert the client reads only on its first read; amqp091-go, writing
// its protocol header meanwhile, often reports just that the connection
// closed (504). The record lets certificateRequired say why. A cfg that
// brings certificates, or chooses them itself, is left as it is.
func watchCertificateRequest(cfg *tls.Config) (*tls.Config, *atomic.Bool) {
	asked := new(atomic.Bool)
	if cfg == nil || len(cfg.Certificates) > 0 || cfg.GetClientCertificate != nil {
		return cfg, asked
	}
	cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		asked.Store(true)
		return &tls.Certificate{}, nil // none, as without the callback
	}
	return cfg, asked
}

// errNoClientCertificate is the cause of a dial the broker closed after
// asking for a client certificate the TLS configuration did not have.
type errNoClientCertificate struct{ err error }

func (e *errNoClientCertificate) Error() string {
	return "the broker asked for a client certificate and the TLS configuration has none (tls: certificate required; set Certificates in WithTLS's config): " + e.err.Error()
}

func (e *errNoClientCertificate) Unwrap() error { return e.err }

// certificateRequired explains err when the broker asked for a client
// certificate none was sent for and then closed the connection (the alert,
// a read or write error, or amqp091-go's closed connection); an answer of
// the broker's own (a refused login, say) is left as it is.
func certificateRequired(err error, asked *atomic.Bool) error {
	if err == nil || !asked.Load() {
		return err
	}
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Server {
		return err
	}
	return &errNoClientCertificate{err: err}
}

// dialOne makes one connection attempt to a, bounded by ctx.
func (c *Connection) dialOne(ctx context.Context, a address) (*amqp.Connection, error) {
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName(c.cfg.origin)
	tlsCfg, askedForCert := watchCertificateRequest(tlsFor(c.cfg.tls))
	cfg := amqp.Config{
		Properties:      props,
		TLSClientConfig: tlsCfg,
		Heartbeat:       effectiveHeartbeat(c.cfg.heartbeat),
		Locale:          "en_US",
	}
	var sock net.Conn
	// A plain socket is corked by the publishers' writers (corkconn.go);
	// a TLS one is not (not measured yet).
	var cork *amqpx.CorkConn
	var watch atomic.Pointer[handshakeWatch]
	plain := !strings.HasPrefix(strings.ToLower(a.raw), "amqps:")
	dial := contextDialer(ctx, plain, !c.cfg.noHeaderFilter, func(nc net.Conn, w *handshakeWatch) { sock = nc; watch.Store(w) })
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
		err = certificateRequired(err, askedForCert)
		if w := watch.Load(); w != nil {
			err = handshakeCutIn(err, w.cut(), plain)
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

// handshakeTimeout bounds the TCP connect and the AMQP handshake of one
// attempt, as amqp091-go's default dialer does.
const handshakeTimeout = 30 * time.Second

// contextDialer is amqp091-go's DefaultDial made to stop when ctx does;
// got receives the socket and the watch on its reads (handshakeWatch). On
// a plain connection the broker's frames pass through headerFilter (unless
// filter is false).
func contextDialer(ctx context.Context, plain, filter bool, got func(net.Conn, *handshakeWatch)) func(network, addr string) (net.Conn, error) {
	return func(network, addr string) (net.Conn, error) {
		d := net.Dialer{Timeout: handshakeTimeout}
		sock, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		w := &handshakeWatch{Conn: sock}
		got(sock, w)
		var conn net.Conn = w
		deadline := time.Now().Add(handshakeTimeout)
		if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
			deadline = dl
		}
		// Cleared by amqp091-go once the handshake is done.
		if err := conn.SetDeadline(deadline); err != nil {
			conn.Close()
			return nil, err
		}
		if !plain {
			// amqps: amqp091-go runs TLS over this conn; the frames are
			// not readable here.
			return conn, nil
		}
		if filter {
			conn = &amqpx.HeaderFilterConn{Conn: conn}
		}
		return &capabilityConn{Conn: conn}, nil
	}
}

// handshakeWatch is an attempt's socket that remembers the first error
// reading it gave. amqp091-go reports a connection the other end closed
// or reset during the handshake as its own error, with the socket's error
// as text only (501 FRAME_ERROR "EOF", "connection reset by peer"; a close
// after start-ok as 403 "username or password not allowed", a guess):
// the watch keeps the cause, for handshakeCutIn.
type handshakeWatch struct {
	net.Conn
	mu    sync.Mutex
	first error
}

func (w *handshakeWatch) Read(p []byte) (int, error) {
	n, err := w.Conn.Read(p)
	if err != nil {
		w.mu.Lock()
		if w.first == nil {
			w.first = err
		}
		w.mu.Unlock()
	}
	return n, err
}

// cut is the first error reading the socket gave, when it says the other
// end closed or reset the connection, or went silent (a timeout); nil
// otherwise.
func (w *handshakeWatch) cut() error {
	w.mu.Lock()
	err := w.first
	w.mu.Unlock()
	var ne net.Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNABORTED),
		errors.As(err, &ne):
		return err
	}
	return nil
}

// errHandshakeCut is a connection closed or reset by the other end before
// the AMQP handshake completed: nothing that speaks AMQP answered there
// (yet). It is retried like a refused port.
type errHandshakeCut struct {
	err error // what reading the socket gave: io.EOF, ECONNRESET, ...
}

func (e *errHandshakeCut) Error() string {
	return "the connection was closed before the AMQP handshake completed (a broker starting up, or no broker behind the address): " + e.err.Error()
}

func (e *errHandshakeCut) Unwrap() error { return e.err }

// handshakeCutIn is err, amqp091-go's error of a failed handshake, as
// errHandshakeCut when the socket was closed or reset under it (cut): a
// frame error or a closed connection of amqp091-go's own making, not the
// broker's word. On a plain connection the 403 amqp091-go makes up for a
// socket closed after start-ok is one too: the runtime asks for
// authentication_failure_close there (capabilityConn), so a broker that
// refuses the login says so itself (a server 403, kept final). Under TLS
// the capability is not sent and RabbitMQ refuses a login by closing the
// socket: that 403 is kept (ErrAuth), as is everything the broker said.
func handshakeCutIn(err, cut error, plain bool) error {
	var ae *amqp.Error
	if err == nil || cut == nil || !errors.As(err, &ae) || ae.Server {
		return err
	}
	var nocert *errNoClientCertificate
	if errors.As(err, &nocert) {
		return err
	}
	switch {
	case ae.Code == amqp.FrameError, ae.Code == amqp.ChannelError,
		plain && ae.Code == amqp.AccessRefused:
		return &errHandshakeCut{err: cut}
	}
	return err
}

// classifyDial says what a failed attempt means: the sentinel it matches,
// and whether trying again may help. Trying again helps when the broker is
// not there yet (refused, reset, DNS, timeout, a broker shutting down, a
// connection closed or reset during the handshake); it cannot fix a
// refused login, an unknown vhost or a TLS mismatch.
func classifyDial(err error) (kind error, again bool) {
	var nocert *errNoClientCertificate
	if errors.As(err, &nocert) {
		return nil, false
	}
	var cut *errHandshakeCut
	if errors.As(err, &cut) {
		return ErrUnreachable, true
	}
	var ae *amqp.Error
	if errors.As(err, &ae) {
		switch ae.Code {
		case amqp.AccessRefused, amqp.NotAllowed:
			return ErrAuth, false
		case amqp.ConnectionForced, amqp.InternalError, amqp.ResourceError:
			return ErrUnreachable, true
		}
		return nil, false
	}
	var (
		verify  *tls.CertificateVerificationError
		record  tls.RecordHeaderError
		alert   tls.AlertError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
	)
	if errors.As(err, &verify) || errors.As(err, &record) || errors.As(err, &alert) ||
		errors.As(err, &unknown) || errors.As(err, &host) {
		return nil, false
	}
	var (
		dns *net.DNSError
		ne  net.Error
	)
	switch {
	case errors.As(err, &dns), errors.As(err, &ne),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return ErrUnreachable, true
	}
	return nil, false
}

// amqp091-go (v1.16 and v1.17) does not advertise the
// authentication_failure_close capability. Without it RabbitMQ answers a
// refused login by closing the socket after a silent delay (3s) and the
// client can only guess why; with it the broker replies at once with 403
// ACCESS_REFUSED and its reason. capabilityConn adds it to the client's
// connection.start-ok, the one frame it rewrites; every other byte passes
// through untouched. TestAMQP091AloneGetsNoRefusedLoginReply fails the
// day amqp091-go advertises the capability itself.
type capabilityConn struct {
	net.Conn
	pending   []byte // bytes of the first frames, until start-ok is seen
	sawHeader bool   // the protocol header went out
	done      bool
}

// authFailureClose is the table entry added to client-properties'
// capabilities: shortstr key, 't' (boolean), true.
var authFailureClose = append(append([]byte{byte(len("authentication_failure_close"))}, "authentication_failure_close"...), 't', 1)

func (c *capabilityConn) Write(p []byte) (int, error) {
	if c.done {
		return c.Conn.Write(p)
	}
	c.pending = append(c.pending, p...)
	if len(c.pending) >= 4 && string(c.pending[:4]) != "AMQP" && !c.sawHeader {
		// Not the AMQP handshake as expected (TLS underneath): pass through.
		c.done = true
		_, err := c.Conn.Write(c.pending)
		c.pending = nil
		return len(p), err
	}
	for !c.done {
		out, rest, ok := nextFrame(c.pending)
		if !ok {
			// Wait for the rest of the frame; a frame header always comes
			// first, so the protocol header is the only other thing here.
			if len(c.pending) >= 8 && string(c.pending[:4]) == "AMQP" {
				if _, err := c.Conn.Write(c.pending[:8]); err != nil {
					return 0, err
				}
				c.pending = c.pending[8:]
				c.sawHeader = true
				continue
			}
			return len(p), nil
		}
		if isStartOk(out) {
			out = withCapability(out)
			c.done = true
		}
		if _, err := c.Conn.Write(out); err != nil {
			return 0, err
		}
		c.pending = rest
	}
	if len(c.pending) > 0 {
		if _, err := c.Conn.Write(c.pending); err != nil {
			return 0, err
		}
	}
	c.pending = nil
	return len(p), nil
}

// nextFrame splits one whole AMQP frame (type, channel, size, payload,
// 0xCE) off the front of b.
func nextFrame(b []byte) (frame, rest []byte, ok bool) {
	if len(b) < 7 || string(b[:4]) == "AMQP" {
		return nil, b, false
	}
	size := int(binary.BigEndian.Uint32(b[3:7]))
	end := 7 + size + 1
	if len(b) < end {
		return nil, b, false
	}
	return b[:end], b[end:], true
}

// isStartOk reports a method frame on channel 0 of connection.start-ok
// (class 10, method 11).
func isStartOk(f []byte) bool {
	return len(f) >= 11 && f[0] == 1 && f[1] == 0 && f[2] == 0 &&
		binary.BigEndian.Uint16(f[7:9]) == 10 && binary.BigEndian.Uint16(f[9:11]) == 11
}

// withCapability inserts authFailureClose at the start of the
// capabilities table of a start-ok frame and fixes the three lengths
// around it (the capabilities table, client-properties, the frame). A
// frame without a capabilities table is returned as it was.
func withCapability(f []byte) []byte {
	const propsAt = 11 // frame header 7 + class 2 + method 2
	key := append([]byte{byte(len("capabilities"))}, "capabilitiesF"...)
	i := bytes.Index(f[propsAt:], key)
	if i < 0 || len(f) < propsAt+4 {
		return f
	}
	lenAt := propsAt + i + len(key) // the capabilities table's length
	if len(f) < lenAt+4 {
		return f
	}
	n := uint32(len(authFailureClose))
	out := make([]byte, 0, len(f)+len(authFailureClose))
	out = append(out, f[:lenAt+4]...)
	out = append(out, authFailureClose...)
	out = append(out, f[lenAt+4:]...)
	binary.BigEndian.PutUint32(out[lenAt:], binary.BigEndian.Uint32(out[lenAt:])+n)
	binary.BigEndian.PutUint32(out[propsAt:], binary.BigEndian.Uint32(out[propsAt:])+n)
	binary.BigEndian.PutUint32(out[3:], binary.BigEndian.Uint32(out[3:])+n)
	return out
}

// effectiveHeartbeat is what amqp091-go is asked for: it speaks whole
// seconds, and a value below one second would switch heartbeats off.
func effectiveHeartbeat(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return max(time.Second, d.Truncate(time.Second))
}
