//go:build faults

package faults

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

// The blocked state against a real resource alarm (issue 12), on the fault
// node (never the shared broker): while the node's memory alarm blocks the
// connection, Connection.State says blocked with the broker's reason,
// Ready's error matches ErrBlocked and HealthHandler answers 503 with that
// state in its JSON; once the alarm clears, connected, nil and 200.
func TestHealthBlockedByAMemoryAlarm(t *testing.T) {
	leakCheck(t)
	q := queue(t, "health-alarm", nil)
	c := dial(t)
	cs, err := runtime.Consume(ctxFor(t, 10*time.Second), c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
		runtime.Handle(text, func(context.Context, *runtime.Message[string]) runtime.Ack { return runtime.Accept() }),
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = cs.Close(ctx)
	})
	srv := httptest.NewServer(runtime.HealthHandler(c, cs))
	t.Cleanup(srv.Close)
	get := func() (int, runtime.Health, string) {
		t.Helper()
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		var h runtime.Health
		if err := json.Unmarshal(body, &h); err != nil {
			t.Fatalf("health body %q: %v", body, err)
		}
		return resp.StatusCode, h, string(body)
	}

	if st := c.State(); st.State != runtime.StateConnected {
		t.Fatalf("State before the alarm = %+v, want connected", st)
	}
	if code, h, body := get(); code != http.StatusOK || h.Status != "ok" || h.Connection.State != runtime.StateConnected {
		t.Fatalf("health before the alarm = %d %s, want 200 ok connected", code, body)
	}

	// The broker blocks a connection when it publishes during the alarm.
	blockConnection(t, c, q)
	deadline := time.Now().Add(10 * time.Second)
	st := c.State()
	for st.State != runtime.StateBlocked && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		st = c.State()
	}
	if st.State != runtime.StateBlocked {
		t.Fatalf("State during the memory alarm = %+v, want blocked", st)
	}
	// RabbitMQ's reason for a memory alarm.
	if st.BlockedReason != "low on memory" {
		t.Errorf("BlockedReason = %q, want the broker's %q", st.BlockedReason, "low on memory")
	}
	err = c.Ready()
	if err == nil || !errors.Is(err, runtime.ErrBlocked) || !errors.Is(err, runtime.ErrUnavailable) {
		t.Errorf("Ready during the alarm = %v, want an error matching ErrBlocked and ErrUnavailable", err)
	} else if !strings.Contains(err.Error(), "low on memory") {
		t.Errorf("Ready's error %q does not give the broker's reason", err)
	}
	code, h, body := get()
	if code != http.StatusServiceUnavailable || h.Status != "unavailable" {
		t.Errorf("health during the alarm = %d %q, want 503 unavailable (%s)", code, h.Status, body)
	}
	if h.Connection.State != runtime.StateBlocked || h.Connection.BlockedReason != "low on memory" ||
		!strings.Contains(body, `"state":"blocked"`) || !strings.Contains(body, `"blocked_reason":"low on memory"`) {
		t.Errorf("health JSON during the alarm = %s, want state blocked with blocked_reason \"low on memory\"", body)
	}
	if len(h.Consumers) != 1 || h.Consumers[0].Queue != q {
		t.Errorf("health JSON consumers = %+v, want the one on %s", h.Consumers, q)
	}

	ClearAlarm(t)
	deadline = time.Now().Add(10 * time.Second)
	st = c.State()
	for st.State != runtime.StateConnected && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		st = c.State()
	}
	if st.State != runtime.StateConnected || st.BlockedReason != "" {
		t.Fatalf("State after the alarm cleared = %+v, want connected with no reason", st)
	}
	if err := c.Ready(); err != nil {
		t.Errorf("Ready after the alarm cleared = %v, want nil", err)
	}
	if code, h, body := get(); code != http.StatusOK || h.Status != "ok" || h.Connection.State != runtime.StateConnected ||
		len(h.Consumers) != 1 || h.Consumers[0].State != runtime.ConsumerConsuming {
		t.Errorf("health after the alarm cleared = %d %s, want 200 ok connected, consumer consuming", code, body)
	}
}
