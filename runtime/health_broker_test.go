package runtime_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
)

// getHealth fetches the health handler's JSON over HTTP.
func getHealth(t *testing.T, url string) (int, runtime.Health) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var h runtime.Health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatalf("decode health: %v", err)
	}
	return resp.StatusCode, h
}

// The health handler over a real connection (through a TCP proxy of the
// test's own, so that the connection can be cut without touching the
// shared broker): 200 and connected while all is well, with the consumer's
// stats; 503, reconnecting with the last error, and the consumer
// resubscribing once the connection is cut; 503 and closed after Close.
func TestHealthHandler(t *testing.T) {
	t.Parallel()
	addr := freePort(t)
	f := forward(t, addr)
	ctx := ctxFor(t, 30*time.Second)
	c, err := runtime.Dial(ctx, urlAt(t, addr), runtime.WithReconnectBackoff(50*time.Millisecond, 200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer closeConn(c)
	q := brokertest.Queue(t, "health")
	declare(t, dial(t), runtime.NewTopology().Queue(runtime.Queue{Name: q}))
	policy := runtime.NoRetry()
	cs, rec := consume(t, c, q, &policy, accept)
	srv := httptest.NewServer(runtime.HealthHandler(c, cs))
	defer srv.Close()

	before := time.Now()
	publishText(t, c, q, "hello")
	rec.waitN(t, 1, wait)
	var h runtime.Health
	var code int
	for deadline := time.Now().Add(wait); ; time.Sleep(20 * time.Millisecond) {
		code, h = getHealth(t, srv.URL)
		if len(h.Consumers) == 1 && h.Consumers[0].Handled["accepted"] == 1 || time.Now().After(deadline) {
			break
		}
	}
	if code != http.StatusOK || h.Status != "ok" || h.Connection.State != runtime.StateConnected || len(h.Consumers) != 1 {
		t.Fatalf("healthy: %d %+v", code, h)
	}
	st := h.Consumers[0]
	if st.Queue != q || st.State != runtime.ConsumerConsuming || st.Handled["accepted"] != 1 || st.Handled["gave_up_attempts"] != 0 ||
		st.InFlight != 0 || st.Held != 0 || st.LastDelivery.Before(before.Add(-time.Second)) {
		t.Errorf("consumer stats %+v", st)
	}
	if err := c.Ready(); err != nil {
		t.Errorf("Ready() = %v, want nil", err)
	}

	// Cut the connection: the proxy closes both sides.
	f.Close()
	for deadline := time.Now().Add(wait); ; time.Sleep(20 * time.Millisecond) {
		code, h = getHealth(t, srv.URL)
		if h.Connection.State == runtime.StateReconnecting && len(h.Consumers) == 1 && h.Consumers[0].State == runtime.ConsumerResubscribing ||
			time.Now().After(deadline) {
			break
		}
	}
	if code != http.StatusServiceUnavailable || h.Status != "unavailable" || h.Connection.State != runtime.StateReconnecting ||
		h.Connection.LastError == "" || h.Connection.Since.IsZero() {
		t.Errorf("cut: %d %+v", code, h)
	}
	if len(h.Consumers) != 1 || h.Consumers[0].State != runtime.ConsumerResubscribing || h.Consumers[0].LastError == "" {
		t.Errorf("cut: consumers %+v", h.Consumers)
	}
	if err := c.Ready(); !errors.Is(err, runtime.ErrUnavailable) {
		t.Errorf("Ready() while cut = %v, want ErrUnavailable", err)
	}

	closeConn(c)
	code, h = getHealth(t, srv.URL)
	if code != http.StatusServiceUnavailable || h.Connection.State != runtime.StateClosed || h.Consumers[0].State != runtime.ConsumerStopped {
		t.Errorf("closed: %d %+v", code, h)
	}
	select {
	case <-cs.Done():
	default:
		t.Error("Done() not closed after Close")
	}
	if err := cs.Err(); err != nil {
		t.Errorf("Err() after Close = %v, want nil", err)
	}
	if err := c.Ready(); !errors.Is(err, runtime.ErrClosed) {
		t.Errorf("Ready() after Close = %v, want ErrClosed", err)
	}
}

// A Check beside the connection: its Ready decides the status with the
// connection's, under its name and with its reason, and is called with a
// context that ends.
func TestHealthHandlerChecks(t *testing.T) {
	t.Parallel()
	c := dial(t)
	var down atomic.Bool
	check := runtime.Check{Name: "ledger db", Ready: func(ctx context.Context) error {
		if _, ok := ctx.Deadline(); !ok {
			return errors.New("no deadline on the check's context")
		}
		if down.Load() {
			return errors.New("ledger db: connection refused")
		}
		return nil
	}}
	srv := httptest.NewServer(runtime.HealthHandler(c, check, runtime.Check{Name: "no func"}))
	defer srv.Close()
	code, h := getHealth(t, srv.URL)
	if code != http.StatusOK || h.Status != "ok" || len(h.Checks) != 2 || h.Checks[0] != (runtime.CheckState{Name: "ledger db", Ready: true}) ||
		h.Checks[1] != (runtime.CheckState{Name: "no func", Ready: true}) {
		t.Fatalf("ready: %d %+v", code, h)
	}
	down.Store(true)
	code, h = getHealth(t, srv.URL)
	if code != http.StatusServiceUnavailable || h.Status != "unavailable" || h.Connection.State != runtime.StateConnected ||
		len(h.Checks) != 2 || h.Checks[0] != (runtime.CheckState{Name: "ledger db", Error: "ledger db: connection refused"}) {
		t.Errorf("down: %d %+v", code, h)
	}
}

// ExampleCheck puts a database the handlers need in the readiness probe,
// beside the broker.
func ExampleCheck() {
	ctx := context.Background()
	conn, err := runtime.Dial(ctx, brokertest.URL())
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	var db *sql.DB // sql.Open's
	http.Handle("/readyz", runtime.HealthHandler(conn, runtime.Check{Name: "orders db", Ready: db.PingContext}))
}

// ExampleHealthHandler mounts the readiness probe of a service.
func ExampleHealthHandler() {
	ctx := context.Background()
	conn, err := runtime.Dial(ctx, brokertest.URL())
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	http.Handle("/readyz", runtime.HealthHandler(conn))
	// GET /readyz: 200 {"status":"ok","connection":{"state":"connected",…}}
	// or 503 with the reason.
}
