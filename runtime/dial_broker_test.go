package runtime_test

// Dial, against the broker and against ports where nothing listens: a
// broker that comes up late, what fails at once, errors that keep their
// cause, several addresses, and the password that must never show.

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// freePort is a local address where nothing listens (it did a moment ago).
func freePort(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// forwarder is a TCP proxy to the test broker: a broker address that can
// appear late and vanish, without touching the shared broker.
type forwarder struct {
	ln       net.Listener
	target   string
	accepted atomic.Int32

	mu    sync.Mutex
	conns []net.Conn
}

// forward listens on addr and proxies every connection to the broker; it
// is closed at cleanup.
func forward(tb testing.TB, addr string) *forwarder {
	tb.Helper()
	u, err := url.Parse(brokertest.Require(tb))
	if err != nil {
		tb.Fatal(err)
	}
	target := u.Host
	if u.Port() == "" {
		target = net.JoinHostPort(u.Hostname(), "5672")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		tb.Fatalf("listen on %s: %v", addr, err)
	}
	return forwardFrom(tb, ln, target)
}

// forwardFrom proxies every connection ln accepts to target; it is closed
// at cleanup.
func forwardFrom(tb testing.TB, ln net.Listener, target string) *forwarder {
	f := &forwarder{ln: ln, target: target}
	go f.serve()
	tb.Cleanup(f.Close)
	return f
}

func (f *forwarder) serve() {
	for {
		in, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.accepted.Add(1)
		out, err := net.Dial("tcp", f.target)
		if err != nil {
			in.Close()
			continue
		}
		f.mu.Lock()
		f.conns = append(f.conns, in, out)
		f.mu.Unlock()
		go func() { _, _ = io.Copy(out, in); out.Close() }()
		go func() { _, _ = io.Copy(in, out); in.Close() }()
	}
}

// Close stops listening and cuts every proxied connection.
func (f *forwarder) Close() {
	f.ln.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		c.Close()
	}
	f.conns = nil
}

// urlAt is the test broker's URL with another host:port (and, when given,
// another password or vhost).
func urlAt(tb testing.TB, hostport string) string {
	tb.Helper()
	u, err := url.Parse(brokertest.Require(tb))
	if err != nil {
		tb.Fatal(err)
	}
	u.Host = hostport
	return u.String()
}

func withPassword(tb testing.TB, raw, password string) string {
	tb.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		tb.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), password)
	return u.String()
}

func closeConn(c *runtime.Connection) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.Close(ctx)
}

// Dial's default backoff (its doc, WithReconnectBackoff's and
// docs/runtime.md): 100ms doubling to 2s, never past.
func TestDialDefaultBackoffIs100msTo2s(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: six seconds of failed attempts")
	}
	t.Parallel()
	capture, logger := newLogCapture()
	ctx := ctxFor(t, 6500*time.Millisecond)
	if c, err := runtime.Dial(ctx, urlAt(t, freePort(t)), runtime.WithLogger(logger)); err == nil {
		closeConn(c)
		t.Fatal("Dial to a closed port succeeded")
	}
	var waits []string
	for _, w := range capture.matching("broker not reachable") {
		waits = append(waits, w.Attrs["retry_in"])
	}
	want := []string{"100ms", "200ms", "400ms", "800ms", "1.6s", "2s"}
	if len(waits) < len(want) {
		t.Fatalf("retry_in %v, want it to begin %v", waits, want)
	}
	for i, w := range waits {
		if i < len(want) && w != want[i] || i >= len(want) && w != "2s" {
			t.Fatalf("retry_in %v, want %v then 2s", waits, want)
		}
	}
}

// A service that starts before its broker: Dial keeps trying a closed port
// and succeeds once it opens 2s later, each failed attempt logged once at
// Warn with the delay before the next.
func TestDialWaitsForABrokerThatComesUp(t *testing.T) {
	t.Parallel()
	// Here, not only in forward: forward runs on a timer's goroutine, where
	// a skip (no broker, or -short) would come after the test had ended.
	brokertest.Require(t)
	addr := freePort(t)
	capture, logger := newLogCapture()
	opened := make(chan struct{})
	time.AfterFunc(2*time.Second, func() {
		forward(t, addr)
		close(opened)
	})
	ctx := ctxFor(t, 30*time.Second)
	start := time.Now()
	c, err := runtime.Dial(ctx, urlAt(t, addr), runtime.WithLogger(logger),
		runtime.WithReconnectBackoff(50*time.Millisecond, 400*time.Millisecond))
	if err != nil {
		t.Fatalf("Dial while the port opens after 2s: %v", err)
	}
	defer closeConn(c)
	<-opened
	if took := time.Since(start); took < 2*time.Second {
		t.Errorf("Dial returned after %s, before the port opened", took)
	}
	warns := capture.matching("broker not reachable")
	if len(warns) < 3 {
		t.Fatalf("%d warnings for the failed attempts, want one per attempt (at least 3 in 2s):\n%s", len(warns), capture.dump())
	}
	for i, w := range warns {
		if w.Level != slog.LevelWarn {
			t.Errorf("attempt record %d at %s, want Warn", i, w.Level)
		}
		if w.Attrs["retry_in"] == "" || w.Attrs["attempt"] != strconv.Itoa(i+1) || !strings.Contains(w.Attrs["err"], "connection refused") {
			t.Errorf("attempt record %d = %v; want attempt %d, retry_in and the cause", i, w, i+1)
		}
	}
	// The delay doubles and is capped.
	if first, last := warns[0].Attrs["retry_in"], warns[len(warns)-1].Attrs["retry_in"]; first != "50ms" || last != "400ms" {
		t.Errorf("retry_in went %s … %s, want 50ms doubling to the 400ms cap", first, last)
	}
	// And the connection works.
	q := brokertest.Queue(t, "dial-late")
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
	publishText(t, c, q, "late")
	if got := string(getOne(t, q, wait).Body); got != "late" {
		t.Errorf("body %q", got)
	}
}

// Why capabilityConn (dial.go) is still there: amqp091-go (v1.17 too)
// does not advertise authentication_failure_close, so the broker answers
// its wrong password by dropping the socket after a delay, never with 403
// ACCESS_REFUSED; amqp091-go can only guess ErrCredentials. When this
// test fails, amqp091-go advertises the capability itself: drop
// capabilityConn and the paragraph of docs/runtime.md on it.
func TestAMQP091AloneGetsNoRefusedLoginReply(t *testing.T) {
	t.Parallel()
	u := withPassword(t, brokertest.Require(t), "not-the-password")
	start := time.Now()
	conn, err := amqp.DialConfig(u, amqp.Config{})
	if err == nil {
		_ = conn.Close()
		t.Fatal("DialConfig with a wrong password succeeded")
	}
	t.Logf("raw amqp091-go: %v after %s", err, time.Since(start).Round(time.Millisecond))
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Server && ae.Code == amqp.AccessRefused {
		t.Errorf("raw amqp091-go got the broker's 403 (%v): it advertises authentication_failure_close now, capabilityConn is no longer needed", ae)
	}
}

// A wrong password is not retried: Dial fails in under a second with
// ErrAuth, and the broker's own reply is reachable with errors.As.
func TestDialWrongPasswordFailsAtOnce(t *testing.T) {
	t.Parallel()
	u := withPassword(t, brokertest.Require(t), "not-the-password")
	ctx := ctxFor(t, 30*time.Second)
	start := time.Now()
	c, err := runtime.Dial(ctx, u)
	if err == nil {
		closeConn(c)
		t.Fatal("Dial with a wrong password succeeded")
	}
	took := time.Since(start)
	t.Logf("a wrong password failed in %s", took)
	if took > time.Second {
		t.Errorf("Dial with a wrong password took %s, want under a second", took)
	}
	if !errors.Is(err, runtime.ErrAuth) || errors.Is(err, runtime.ErrUnreachable) {
		t.Errorf("err = %v; want ErrAuth, not ErrUnreachable", err)
	}
	var ae *amqp.Error
	if !errors.As(err, &ae) || ae.Code != amqp.AccessRefused {
		t.Errorf("errors.As(err, **amqp.Error) = %v; want code 403", ae)
	}
	var de *runtime.DialError
	if !errors.As(err, &de) || de.Kind != runtime.ErrAuth {
		t.Errorf("errors.As(err, **DialError) = %+v", de)
	}
	if strings.Contains(err.Error(), "not-the-password") {
		t.Errorf("the error shows the password: %v", err)
	}
}

// A vhost that does not exist fails at once too (ErrAuth, 530).
func TestDialUnknownVhostFailsAtOnce(t *testing.T) {
	t.Parallel()
	u, _ := url.Parse(brokertest.Require(t))
	u.Path = "/" + brokertest.Name("no-such-vhost")
	ctx := ctxFor(t, 30*time.Second)
	start := time.Now()
	c, err := runtime.Dial(ctx, u.String())
	if err == nil {
		closeConn(c)
		t.Fatal("Dial to a vhost that does not exist succeeded")
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("took %s, want under a second", took)
	}
	var ae *amqp.Error
	if !errors.Is(err, runtime.ErrAuth) || !errors.As(err, &ae) || ae.Code != amqp.NotAllowed {
		t.Errorf("err = %v (amqp error %v); want ErrAuth with a 530", err, ae)
	}
}

// Refused, DNS failure, bad scheme: each keeps its cause.
func TestDialErrorsKeepTheirCause(t *testing.T) {
	t.Parallel()
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
		defer cancel()
		_, err := runtime.Dial(ctx, "amqp://guest:guest@"+freePort(t)+"/")
		if !errors.Is(err, syscall.ECONNREFUSED) || !errors.Is(err, runtime.ErrUnreachable) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v; want ECONNREFUSED, ErrUnreachable and DeadlineExceeded", err)
		}
		var op *net.OpError
		if !errors.As(err, &op) {
			t.Errorf("errors.As(err, **net.OpError) failed: %v", err)
		}
	})
	t.Run("dns", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := runtime.Dial(ctx, "amqp://guest:guest@no-such-host.invalid/")
		var dns *net.DNSError
		if !errors.As(err, &dns) || !errors.Is(err, runtime.ErrUnreachable) {
			t.Errorf("err = %v; want a *net.DNSError and ErrUnreachable", err)
		}
	})
	t.Run("scheme", func(t *testing.T) {
		t.Parallel()
		start := time.Now()
		_, err := runtime.Dial(context.Background(), "http://guest:guest@127.0.0.1:5672/")
		if !errors.Is(err, runtime.ErrInvalidURL) {
			t.Errorf("err = %v; want ErrInvalidURL", err)
		}
		if took := time.Since(start); took > 100*time.Millisecond {
			t.Errorf("a bad scheme took %s to fail", took)
		}
	})
}

// No error and no log line shows the password, whatever went wrong.
func TestPasswordNeverShown(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-Pa55w0rd"
	good := brokertest.Require(t)
	wrongVhost, _ := url.Parse(withPassword(t, good, secret))
	wrongVhost.Path = "/" + brokertest.Name("no-vhost")
	cases := []struct {
		name, url string
		timeout   time.Duration
		where     string // the error says where it tried
	}{
		{"refused", "amqp://guest:" + secret + "@127.0.0.1:1/", 2 * time.Second, "127.0.0.1:1"},
		{"dns", "amqp://guest:" + secret + "@no-such-host.invalid/", 2 * time.Second, "no-such-host.invalid"},
		{"wrong password", withPassword(t, good, secret), 5 * time.Second, "guest:xxxxx@"},
		{"unknown vhost", wrongVhost.String(), 5 * time.Second, "xxxxx@"},
		{"bad scheme", "http://guest:" + secret + "@127.0.0.1/", time.Second, "127.0.0.1"},
		{"unparsable", "amqp://guest:" + secret + "@127.0.0.1:port/", time.Second, "xxxxx"},
		{"second address", "amqp://guest:guest@127.0.0.1:1/,amqp://guest:" + secret + "@127.0.0.1:2/", 2 * time.Second, "127.0.0.1:2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			capture, logger := newLogCapture()
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			start := time.Now()
			c, err := runtime.Dial(ctx, tc.url, runtime.WithLogger(logger))
			if err == nil {
				closeConn(c)
				t.Fatalf("Dial %s succeeded", tc.name)
			}
			if took := time.Since(start); took > tc.timeout+2*time.Second {
				t.Errorf("Dial took %s with a %s context", took, tc.timeout)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error shows the password: %v", err)
			}
			if !strings.Contains(err.Error(), tc.where) {
				t.Errorf("the error %q should say where it tried (%s)", err, tc.where)
			}
			if strings.Contains(capture.text(), secret) {
				t.Errorf("the logs show the password:\n%s", capture.text())
			}
		})
	}
}

// Several addresses: the first dial skips one that does not answer, and a
// reconnect after the node in use went away goes to the next.
func TestDialSeveralAddresses(t *testing.T) {
	t.Parallel()
	t.Run("first dial", func(t *testing.T) {
		t.Parallel()
		down := urlAt(t, freePort(t))
		capture, logger := newLogCapture()
		ctx := ctxFor(t, 20*time.Second)
		c, err := runtime.Dial(ctx, down+","+brokertest.Require(t), runtime.WithLogger(logger))
		if err != nil {
			t.Fatalf("Dial with a second address that answers: %v", err)
		}
		closeConn(c)
		warns := capture.matching("trying the next address")
		if len(warns) != 1 || warns[0].Attrs["address"] != redacted(down) {
			t.Errorf("want one warning naming the address that did not answer; got:\n%s", capture.dump())
		}
	})
	t.Run("option", func(t *testing.T) {
		t.Parallel()
		ctx := ctxFor(t, 20*time.Second)
		c, err := runtime.Dial(ctx, "", runtime.WithAddresses(urlAt(t, freePort(t)), brokertest.Require(t)))
		if err != nil {
			t.Fatalf("Dial with WithAddresses: %v", err)
		}
		closeConn(c)
	})
	t.Run("reconnect", func(t *testing.T) {
		t.Parallel()
		a, b := forward(t, "127.0.0.1:0"), forward(t, "127.0.0.1:0")
		ctx := ctxFor(t, 30*time.Second)
		c, err := runtime.Dial(ctx, urlAt(t, a.ln.Addr().String())+", "+urlAt(t, b.ln.Addr().String()))
		if err != nil {
			t.Fatal(err)
		}
		defer closeConn(c)
		q := brokertest.Queue(t, "dial-several")
		declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
		if a.accepted.Load() != 1 || b.accepted.Load() != 0 {
			t.Fatalf("connections through a, b = %d, %d; want the first address", a.accepted.Load(), b.accepted.Load())
		}
		if got, want := c.Address(), redacted(urlAt(t, a.ln.Addr().String())); got != want {
			t.Errorf("Address() = %s, want %s", got, want)
		}
		a.Close() // the node in use goes away
		deadline := time.Now().Add(wait)
		for {
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := runtime.Publish(pctx, c, textType, "", "via b", runtime.WithRoutingKey(q))
			cancel()
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("publish after the first node went away: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if b.accepted.Load() != 1 {
			t.Errorf("%d connections through the second address, want 1", b.accepted.Load())
		}
		if got, want := c.Address(), redacted(urlAt(t, b.ln.Addr().String())); got != want {
			t.Errorf("Address() after the reconnect = %s, want %s", got, want)
		}
		if got := string(getOne(t, q, wait).Body); got != "via b" {
			t.Errorf("body %q", got)
		}
	})
}

func redacted(raw string) string {
	u, _ := url.Parse(raw)
	return u.Redacted()
}
