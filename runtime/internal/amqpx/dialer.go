package amqpx

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/core"
	amqp "github.com/rabbitmq/amqp091-go"
)

// TlsFor is the caller's TLS configuration for one attempt: a clone, since
// amqp091-go writes the attempt's host into an empty ServerName, and on the
// caller's own config that name would stick for every later address (a
// failover to a node whose certificate names another host would fail its
// verification). A ServerName the caller set is kept, for every address.
func TlsFor(cfg *tls.Config) *tls.Config {
	if cfg == nil {
		return nil
	}
	return cfg.Clone()
}

// WatchCertificateRequest makes cfg record whether the broker asked for a
// client certificate while cfg has none to give. Under TLS 1.3 the broker
// refuses a missing certificate after the client's handshake is done, with
// an alert the client reads only on its first read; amqp091-go, writing
// its protocol header meanwhile, often reports just that the connection
// closed (504). The record lets certificateRequired say why. A cfg that
// brings certificates, or chooses them itself, is left as it is.
func WatchCertificateRequest(cfg *tls.Config) (*tls.Config, *atomic.Bool) {
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

// CertificateRequired explains err when the broker asked for a client
// certificate none was sent for and then closed the connection (the alert,
// a read or write error, or amqp091-go's closed connection); an answer of
// the broker's own (a refused login, say) is left as it is.
func CertificateRequired(err error, asked *atomic.Bool) error {
	if err == nil || !asked.Load() {
		return err
	}
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Server {
		return err
	}
	return &errNoClientCertificate{err: err}
}

// HandshakeTimeout bounds the TCP connect and the AMQP handshake of one
// attempt, as amqp091-go's default dialer does.
const HandshakeTimeout = 30 * time.Second

// ContextDialer is amqp091-go's DefaultDial made to stop when ctx does;
// got receives the socket and the watch on its reads (handshakeWatch). On
// a plain connection the broker's frames pass through headerFilter (unless
// filter is false).
func ContextDialer(ctx context.Context, plain, filter bool, got func(net.Conn, *HandshakeWatch)) func(network, addr string) (net.Conn, error) {
	return func(network, addr string) (net.Conn, error) {
		d := net.Dialer{Timeout: HandshakeTimeout}
		sock, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		w := &HandshakeWatch{Conn: sock}
		got(sock, w)
		var conn net.Conn = w
		deadline := time.Now().Add(HandshakeTimeout)
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
			conn = &HeaderFilterConn{Conn: conn}
		}
		return &CapabilityConn{Conn: conn}, nil
	}
}

// HandshakeWatch is an attempt's socket that remembers the first error
// reading it gave. amqp091-go reports a connection the other end closed
// or reset during the handshake as its own error, with the socket's error
// as text only (501 FRAME_ERROR "EOF", "connection reset by peer"; a close
// after start-ok as 403 "username or password not allowed", a guess):
// the watch keeps the cause, for handshakeCutIn.
type HandshakeWatch struct {
	net.Conn
	mu    sync.Mutex
	first error
}

func (w *HandshakeWatch) Read(p []byte) (int, error) {
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

// Cut is the first error reading the socket gave, when it says the other
// end closed or reset the connection, or went silent (a timeout); nil
// otherwise.
func (w *HandshakeWatch) Cut() error {
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

// HandshakeCutIn is err, amqp091-go's error of a failed handshake, as
// errHandshakeCut when the socket was closed or reset under it (cut): a
// frame error or a closed connection of amqp091-go's own making, not the
// broker's word. On a plain connection the 403 amqp091-go makes up for a
// socket closed after start-ok is one too: the runtime asks for
// authentication_failure_close there (capabilityConn), so a broker that
// refuses the login says so itself (a server 403, kept final). Under TLS
// the capability is not sent and RabbitMQ refuses a login by closing the
// socket: that 403 is kept (core.ErrAuth), as is everything the broker said.
func HandshakeCutIn(err, cut error, plain bool) error {
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

// ClassifyDial says what a failed attempt means: the sentinel it matches,
// and whether trying again may help. Trying again helps when the broker is
// not there yet (refused, reset, DNS, timeout, a broker shutting down, a
// connection closed or reset during the handshake); it cannot fix a
// refused login, an unknown vhost or a TLS mismatch.
func ClassifyDial(err error) (kind error, again bool) {
	var nocert *errNoClientCertificate
	if errors.As(err, &nocert) {
		return nil, false
	}
	var cut *errHandshakeCut
	if errors.As(err, &cut) {
		return core.ErrUnreachable, true
	}
	var ae *amqp.Error
	if errors.As(err, &ae) {
		switch ae.Code {
		case amqp.AccessRefused, amqp.NotAllowed:
			return core.ErrAuth, false
		case amqp.ConnectionForced, amqp.InternalError, amqp.ResourceError:
			return core.ErrUnreachable, true
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
		return core.ErrUnreachable, true
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
type CapabilityConn struct {
	net.Conn
	pending   []byte // bytes of the first frames, until start-ok is seen
	sawHeader bool   // the protocol header went out
	done      bool
}

// authFailureClose is the table entry added to client-properties'
// capabilities: shortstr key, 't' (boolean), true.
var authFailureClose = append(append([]byte{byte(len("authentication_failure_close"))}, "authentication_failure_close"...), 't', 1)

func (c *CapabilityConn) Write(p []byte) (int, error) {
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

// EffectiveHeartbeat is what amqp091-go is asked for: it speaks whole
// seconds, and a value below one second would switch heartbeats off.
func EffectiveHeartbeat(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return max(time.Second, d.Truncate(time.Second))
}
