package runtime_test

// Dial against endpoints that accept the TCP connection and then break
// the AMQP handshake (issue 36, item 10): a load balancer with no broker
// behind it, a broker starting up. Each is a listener of the test's own on
// loopback; none needs a broker.

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// handshakeBreaker accepts connections on loopback and breaks each one's
// handshake with shape; it counts the connections it accepted.
type handshakeBreaker struct {
	ln       net.Listener
	accepted atomic.Int32
}

func breakHandshakes(tb testing.TB, shape func(net.Conn)) *handshakeBreaker {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	b := &handshakeBreaker{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b.accepted.Add(1)
			go shape(c)
		}
	}()
	tb.Cleanup(func() { ln.Close() })
	return b
}

// resetAtOnce accepts and resets (RST: SO_LINGER 0, then close).
func resetAtOnce(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.Close()
}

// closeAfterHeader reads the client's protocol header and closes (FIN).
func closeAfterHeader(c net.Conn) {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = io.ReadFull(c, make([]byte, 8))
	c.Close()
}

// connectionStart is a connection.start frame: version 0-9, no server
// properties, PLAIN, en_US.
func connectionStart() []byte {
	var p []byte
	p = binary.BigEndian.AppendUint16(p, 10) // class connection
	p = binary.BigEndian.AppendUint16(p, 10) // method start
	p = append(p, 0, 9)
	p = binary.BigEndian.AppendUint32(p, 0) // server-properties: empty table
	p = binary.BigEndian.AppendUint32(p, uint32(len("PLAIN")))
	p = append(p, "PLAIN"...)
	p = binary.BigEndian.AppendUint32(p, uint32(len("en_US")))
	p = append(p, "en_US"...)
	f := []byte{1, 0, 0}
	f = binary.BigEndian.AppendUint32(f, uint32(len(p)))
	f = append(f, p...)
	return append(f, 0xCE)
}

// halfHandshake reads the protocol header, sends connection.start, reads
// what the client answers (start-ok) and resets: the broker went away
// between start-ok and tune.
func halfHandshake(c net.Conn) {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(c, make([]byte, 8)); err != nil {
		c.Close()
		return
	}
	_, _ = c.Write(connectionStart())
	_, _ = c.Read(make([]byte, 4096))
	resetAtOnce(c)
}

// halfFrame reads the protocol header, sends the first bytes of
// connection.start and closes: an EOF in the middle of a frame.
func halfFrame(c net.Conn) {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(c, make([]byte, 8)); err != nil {
		c.Close()
		return
	}
	_, _ = c.Write(connectionStart()[:12])
	c.Close()
}

// Each shape is retried like a refused port until ctx ends: Dial returns
// at ctx's deadline, with an error matching ErrUnreachable,
// ErrUnavailable and ctx's error, after several attempts.
func TestDialRetriesABrokenHandshake(t *testing.T) {
	t.Parallel()
	for name, shape := range map[string]func(net.Conn){
		"reset":          resetAtOnce,
		"close":          closeAfterHeader,
		"half-handshake": halfHandshake,
		"half-frame":     halfFrame,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := breakHandshakes(t, shape)
			ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
			defer cancel()
			start := time.Now()
			c, err := runtime.Dial(ctx, "amqp://guest:guest@"+b.ln.Addr().String()+"/",
				runtime.WithLogger(slog.New(slog.DiscardHandler)), runtime.WithReconnectBackoff(50*time.Millisecond, 200*time.Millisecond))
			took := time.Since(start)
			if err == nil {
				closeConn(c)
				t.Fatal("Dial succeeded against an endpoint that breaks every handshake")
			}
			if !errors.Is(err, runtime.ErrUnreachable) || !errors.Is(err, runtime.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err = %v; want ErrUnreachable, ErrUnavailable and context.DeadlineExceeded", err)
			}
			if errors.Is(err, runtime.ErrAuth) {
				t.Errorf("err = %v matches ErrAuth: the broker refused no login", err)
			}
			if took < time.Second {
				t.Errorf("Dial returned after %s, before its ctx (1.5s) ended: not retried", took)
			}
			if n := b.accepted.Load(); n < 3 {
				t.Errorf("%d connections accepted, want one per attempt (at least 3)", n)
			}
			// The socket's own error is the cause (not amqp091-go's 501 or
			// made-up 403).
			if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.EOF) {
				t.Errorf("err = %v; want the socket's error (a reset, EOF) as its cause", err)
			}
			var ae *amqp.Error
			if errors.As(err, &ae) {
				t.Errorf("err = %v reaches amqp091-go's %v", err, ae)
			}
		})
	}
}

// A broker starting up: the endpoint resets the first connections, then
// forwards to the broker; Dial connects once it does.
func TestDialThroughResetsThenABroker(t *testing.T) {
	t.Parallel()
	brokertest.Require(t)
	addr := freePort(t)
	resets := breakHandshakesAt(t, addr, 3)
	ctx := ctxFor(t, 30*time.Second)
	c, err := runtime.Dial(ctx, urlAt(t, addr), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithReconnectBackoff(50*time.Millisecond, 200*time.Millisecond))
	if err != nil {
		t.Fatalf("Dial through 3 resets: %v", err)
	}
	defer closeConn(c)
	if n := resets.Load(); n != 3 {
		t.Errorf("%d connections reset, want 3", n)
	}
	q := brokertest.Queue(t, "dial-resets")
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
	publishText(t, c, q, "after resets")
	if got := string(getOne(t, q, wait).Body); got != "after resets" {
		t.Errorf("body %q", got)
	}
}

// breakHandshakesAt listens on addr, resets the first n connections and
// forwards the others to the test broker.
func breakHandshakesAt(tb testing.TB, addr string, n int32) *atomic.Int32 {
	tb.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	var resets atomic.Int32
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	inner.Close()
	fw := forward(tb, inner.Addr().String())
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if resets.Load() < n {
				resets.Add(1)
				resetAtOnce(c)
				continue
			}
			go func() {
				s, err := net.Dial("tcp", fw.ln.Addr().String())
				if err != nil {
					c.Close()
					return
				}
				go func() { _, _ = io.Copy(s, c); s.Close() }()
				_, _ = io.Copy(c, s)
				c.Close()
			}()
		}
	}()
	tb.Cleanup(func() { ln.Close() })
	return &resets
}
