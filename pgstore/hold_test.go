package pgstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/pgstore"
	"github.com/acemq/acemq-go/pgstore/internal/pgtest"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
	"github.com/jackc/pgx/v5"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// A database that does not answer holds the delivery (neither retried nor
// parked): the inbox says so (State, Ready, acemq.inbox.held and
// acemq.inbox.unavailable), and the delivery is handled once it answers.
func TestDatabaseDownHoldsDeliveries(t *testing.T) {
	pool, _ := newInbox(t)
	proxy := pgtest.NewProxy(t)
	schema := pool.Config().ConnConfig.RuntimeParams["search_path"]
	reader := sdkmetric.NewManualReader()
	in, err := pgstore.NewInbox(pgtest.PoolAt(t, proxy.URL(), schema),
		pgstore.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	in.Process(ctx, "payments", "warm-up", func(context.Context, pgx.Tx) runtime.Ack { return runtime.Accept() })
	proxy.Down()
	done := make(chan runtime.Ack, 1)
	calls := 0
	go func() {
		done <- in.Process(ctx, "payments", "id-held", func(ctx context.Context, tx pgx.Tx) runtime.Ack {
			calls++
			if err := pay(ctx, tx, "id-held"); err != nil {
				return runtime.Retry(err)
			}
			return runtime.Accept()
		})
	}()
	waitFor(t, "the delivery to be held", func() bool { s := in.State(); return !s.Available && s.Held == 1 })
	if err := in.Ready(); !errors.Is(err, pgstore.ErrUnavailable) {
		t.Errorf("Ready() = %v; want ErrUnavailable", err)
	}
	if held := sum(t, reader, pgstore.MetricInboxHeld); held != 1 {
		t.Errorf("%s = %d while held; want 1", pgstore.MetricInboxHeld, held)
	}
	select {
	case ack := <-done:
		t.Fatalf("Process returned %v while the database was down; want it held", ack)
	case <-time.After(500 * time.Millisecond):
	}
	proxy.Up()
	ack := <-done
	if ack.Kind() != runtime.AckAccept || calls != 1 {
		t.Fatalf("after the database came back: %v, handler calls %d; want Accept, 1", ack, calls)
	}
	if n := count(t, pool, `SELECT count(*) FROM payments WHERE id = 'id-held'`); n != 1 {
		t.Errorf("payments rows %d; want 1", n)
	}
	if s := in.State(); !s.Available || s.Held != 0 || in.Ready() != nil {
		t.Errorf("State after = %+v, Ready %v; want available, none held", s, in.Ready())
	}
	if held, tries := sum(t, reader, pgstore.MetricInboxHeld), sum(t, reader, pgstore.MetricInboxUnavailable); held != 0 || tries < 1 {
		t.Errorf("after: %s = %d, %s = %d; want 0, ≥ 1", pgstore.MetricInboxHeld, held, pgstore.MetricInboxUnavailable, tries)
	}
}

// Held past WithUnavailableHold, the delivery goes to the retry policy
// with an error wrapping ErrUnavailable.
func TestDatabaseDownPastTheHoldIsRetry(t *testing.T) {
	proxy := pgtest.NewProxy(t)
	pool, _ := newInbox(t)
	schema := pool.Config().ConnConfig.RuntimeParams["search_path"]
	in, err := pgstore.NewInbox(pgtest.PoolAt(t, proxy.URL(), schema), pgstore.WithUnavailableHold(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	proxy.Down()
	ack := in.Process(context.Background(), "payments", "id-late", func(context.Context, pgx.Tx) runtime.Ack {
		t.Error("handler called without a database")
		return runtime.Accept()
	})
	if ack.Kind() != runtime.AckRetry || !errors.Is(ack.Err(), pgstore.ErrUnavailable) {
		t.Fatalf("Process = %v; want Retry wrapping ErrUnavailable", ack)
	}
	if s := in.State(); s.Available || s.Held != 0 {
		t.Errorf("State = %+v; want unavailable, none held", s)
	}
}

// sum reads an int64 sum instrument's total over its attribute sets.
func sum(t *testing.T, r *sdkmetric.ManualReader, name string) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == name {
				for _, dp := range s.DataPoints {
					n += dp.Value
				}
			}
		}
	}
	return n
}

// The inbox's Check in runtime.HealthHandler: an idle consumer's database
// that stops answering makes the probe 503 with the check's reason, as a
// held delivery does; once it answers again, 200.
func TestHealthHandlerShowsTheInboxDatabase(t *testing.T) {
	pool, _ := newInbox(t)
	proxy := pgtest.NewProxy(t)
	schema := pool.Config().ConnConfig.RuntimeParams["search_path"]
	in, err := pgstore.NewInbox(pgtest.PoolAt(t, proxy.URL(), schema))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(runtime.HealthHandler(acemqtest.Dial(t), in.Check()))
	defer srv.Close()
	probe := func(wantCode int, wantReady bool, wantErr string) {
		t.Helper()
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var h runtime.Health
		if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != wantCode || len(h.Checks) != 1 {
			t.Fatalf("probe: %d %+v; want %d and one check", resp.StatusCode, h, wantCode)
		}
		c := h.Checks[0]
		if c.Name != "pgstore inbox acemq_inbox" || c.Ready != wantReady || !strings.Contains(c.Error, wantErr) {
			t.Errorf("check: %+v; want pgstore inbox acemq_inbox, ready %v, error with %q", c, wantReady, wantErr)
		}
	}
	probe(http.StatusOK, true, "")
	proxy.Down()
	probe(http.StatusServiceUnavailable, false, "pgstore: the database is unavailable")
	done := make(chan runtime.Ack, 1)
	go func() {
		done <- in.Process(context.Background(), "payments", "id-probe", func(context.Context, pgx.Tx) runtime.Ack { return runtime.Accept() })
	}()
	waitFor(t, "the delivery to be held", func() bool { return in.State().Held == 1 })
	probe(http.StatusServiceUnavailable, false, "(1 deliveries held)")
	proxy.Up()
	if ack := <-done; ack.Kind() != runtime.AckAccept {
		t.Fatalf("the held delivery: %v; want Accept", ack)
	}
	probe(http.StatusOK, true, "")
}

// A database whose address takes the connection and never answers (a
// firewall that drops, a host gone mid-route) does not stretch the hold:
// each try is bounded by what is left of it, and Process gives the
// delivery back to the retry policy at the hold, not after the
// operating system's connect timeout (minutes).
func TestDatabaseThatNeverAnswersIsHeldOnlyTheHold(t *testing.T) {
	pgtest.Require(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	held := make(chan net.Conn, 64) // taken, never answered
	defer func() {
		ln.Close()
		for len(held) > 0 {
			(<-held).Close()
		}
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			select {
			case held <- c:
			default:
				c.Close()
			}
		}
	}()
	u, err := url.Parse(pgtest.URL())
	if err != nil {
		t.Fatal(err)
	}
	u.Host = ln.Addr().String()
	in, err := pgstore.NewInbox(pgtest.PoolAt(t, u.String(), "public"), pgstore.WithUnavailableHold(time.Second), pgstore.WithLogger(quiet()))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan runtime.Ack, 1)
	start := time.Now()
	go func() {
		done <- in.Process(context.Background(), "payments", "id-silent", func(context.Context, pgx.Tx) runtime.Ack {
			t.Error("handler called without a database")
			return runtime.Accept()
		})
	}()
	select {
	case ack := <-done:
		if took := time.Since(start); ack.Kind() != runtime.AckRetry || !errors.Is(ack.Err(), pgstore.ErrUnavailable) || took > 1500*time.Millisecond {
			t.Fatalf("Process = %v after %v; want Retry wrapping ErrUnavailable at the 1s hold", ack, took)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Process still waiting for a database that never answers 10s into a 1s hold")
	}
}
