package pgstore_test

// The relay with PostgreSQL down (issue 37, item 6): it backed off not at
// all, one warning and one try every second (WithRelayBackoff's min) for
// as long as the database was away. Now the wait doubles from the min up
// to a bound, one warning a try, and is back to the min once the relay
// got through.

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/pgstore"
	"github.com/acemq/acemq-go/pgstore/internal/pgtest"
	"github.com/acemq/acemq-go/runtime"
)

// pgProxy forwards TCP connections to PostgreSQL while up; while down it
// closes each connection it accepts at once, and going down closes the
// ones it forwards: the database as a relay sees it during an outage.
type pgProxy struct {
	ln     net.Listener
	target string
	up     atomic.Bool
	mu     sync.Mutex
	conns  []net.Conn
}

func newPGProxy(t *testing.T, target string) *pgProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pgProxy{ln: ln, target: target}
	p.up.Store(true)
	t.Cleanup(func() { ln.Close(); p.setUp(false) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !p.up.Load() {
				c.Close()
				continue
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			go func() { _, _ = io.Copy(c, s); c.Close() }()
		}
	}()
	return p
}

// setUp brings the database back (true) or takes it away (false).
func (p *pgProxy) setUp(up bool) {
	p.up.Store(up)
	if up {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// warnings records the relay's "database unavailable" lines.
type warnings struct {
	slog.Handler
	mu    sync.Mutex
	waits []time.Duration
}

func (w *warnings) Enabled(context.Context, slog.Level) bool { return true }
func (w *warnings) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "acemq: outbox relay: database unavailable, retrying" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "retry_in" {
			w.mu.Lock()
			w.waits = append(w.waits, a.Value.Duration())
			w.mu.Unlock()
		}
		return true
	})
	return nil
}
func (w *warnings) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *warnings) WithGroup(string) slog.Handler      { return w }

func (w *warnings) all() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.waits...)
}

// TestRelayBacksOffWhileTheDatabaseIsDown: with PostgreSQL away the
// relay's waits double from WithRelayBackoff's min up to its max, one
// warning a try (a handful in 3.5 s, not one every 100 ms); once back it
// relays; away again, the first wait is the min again.
func TestRelayBacksOffWhileTheDatabaseIsDown(t *testing.T) {
	e := newOutboxEnv(t, "outbox_pgdown")
	ctx := ctxFor(t, 90*time.Second)
	u, err := url.Parse(pgtest.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := newPGProxy(t, u.Host)
	u.Host = proxy.ln.Addr().String()
	pool := pgtest.PoolAt(t, u.String(), e.schema)
	proxy.setUp(false)

	w := &warnings{}
	const minWait, maxWait = 100 * time.Millisecond, 800 * time.Millisecond
	r := pgstore.NewRelay(e.ob, pool, pgstore.WithRelayLogger(slog.New(w)),
		pgstore.WithRelayBackoff(minWait, maxWait), pgstore.WithRelayPoll(200*time.Millisecond))
	e.run(r)
	time.Sleep(3500 * time.Millisecond)
	waits := w.all()
	for i, d := range waits {
		if want := min(minWait<<i, maxWait); d != want {
			t.Errorf("try %d: retry_in %s, want %s (doubling from %s to %s); all: %v", i+1, d, want, minWait, maxWait, waits)
			break
		}
	}
	// 100+200+400+800+800+800 ms: six or seven tries in 3.5 s.
	if len(waits) < 3 || len(waits) > 8 {
		t.Errorf("%d warnings in 3.5 s with the database down, want 3 to 8 (one a try, backing off): %v", len(waits), waits)
	}

	proxy.setUp(true)
	e.write(ctx, event{Key: "k", Seq: 0})
	if ev := decodeEvent(t, e.receive(1, 20*time.Second)[0]); ev.Key != "k" {
		t.Fatalf("got %+v", ev)
	}
	seen := len(w.all())
	proxy.setUp(false)
	deadline := time.Now().Add(20 * time.Second)
	for len(w.all()) == seen && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if after := w.all(); len(after) == seen || after[seen] != minWait {
		t.Errorf("after the relay got through, the next outage's first wait: %v, want %s (reset)", after[seen:], minWait)
	}
}

// cutAtConfirmed is a log handler that takes the database away once, on
// the relay's "confirmed" line (its batch's confirms are in, the delete
// is next), and brings it back a moment later.
type cutAtConfirmed struct {
	warnings
	proxy *pgProxy
	once  sync.Once
}

func (c *cutAtConfirmed) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "acemq: outbox confirmed" {
		c.once.Do(func() {
			c.proxy.setUp(false)
			time.AfterFunc(300*time.Millisecond, func() { c.proxy.setUp(true) })
		})
	}
	return c.warnings.Handle(ctx, r)
}

// TestRelayRewindsAKeyAfterLosingTheDatabase: a relay whose database
// connection is cut after a batch's confirms and before its delete
// publishes the key's rows again from the oldest one left: a consumer
// without an inbox sees 0, 1, 2, 3, 0, 1, 2, 3. What survives is the
// order of first copies: no row is published before every earlier row of
// its key was confirmed, so each row's first copy comes after the first
// copies of the rows before it, and each rewind repeats rows in order
// from the oldest not yet deleted (docs/exactly-once.md).
func TestRelayRewindsAKeyAfterLosingTheDatabase(t *testing.T) {
	e := newOutboxEnv(t, "outbox_rewind")
	ctx := ctxFor(t, 60*time.Second)
	u, err := url.Parse(pgtest.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := newPGProxy(t, u.Host)
	u.Host = proxy.ln.Addr().String()
	pool := pgtest.PoolAt(t, u.String(), e.schema)
	const n = 4
	for seq := range n {
		e.write(ctx, event{Key: "k", Seq: seq}, runtime.WithOrderingKey("k"))
	}
	h := &cutAtConfirmed{proxy: proxy}
	e.run(pgstore.NewRelay(e.ob, pool, pgstore.WithRelayLogger(slog.New(h)),
		pgstore.WithRelayBackoff(100*time.Millisecond, 100*time.Millisecond)))
	var got []int
	for _, d := range e.receive(2*n, 20*time.Second) {
		got = append(got, decodeEvent(t, d).Seq)
	}
	e.waitRows(ctx, 0, 20*time.Second)
	want := []int{0, 1, 2, 3, 0, 1, 2, 3}
	if !slices.Equal(got, want) {
		t.Errorf("the key's rows arrived as %v, want %v (the batch again after the lost delete)", got, want)
	}
	select {
	case d := <-e.got:
		t.Errorf("an extra copy: %s", d.Body)
	case <-time.After(500 * time.Millisecond):
	}
}
