//go:build faults

package faults

// The six faults the probe of issue 9 found, each reproduced on the fault
// node.

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

// blockConnection raises the alarm and makes c's connection blocked: the
// broker blocks a connection when it publishes during an alarm. It returns
// once a publish has failed (or timed out) on the blocked connection.
func blockConnection(t *testing.T, c *runtime.Connection, q string) {
	t.Helper()
	SetAlarm(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := runtime.Publish(ctx, c, text, "", "during the alarm", runtime.WithRoutingKey(q)); err == nil {
		t.Fatal("a publish during a memory alarm was confirmed")
	}
}

// Fix 1: Consumer.Close and Connection.Close return by their ctx's
// deadline while an alarm blocks the connection, and say why.
func TestCloseUnderMemoryAlarmReturnsByItsDeadline(t *testing.T) {
	leakCheck(t)
	q := queue(t, "close-alarm", nil)
	c := dial(t)
	cs, err := runtime.Consume(ctxFor(t, 10*time.Second), c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
		runtime.Handle(text, func(context.Context, *runtime.Message[string]) runtime.Ack { return runtime.Accept() }),
	}})
	if err != nil {
		t.Fatal(err)
	}
	blockConnection(t, c, q)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	err = cs.Close(ctx)
	took := time.Since(start)
	if took > 3*time.Second {
		t.Errorf("Consumer.Close with a 2s ctx took %s under a memory alarm", took)
	}
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Consumer.Close under an alarm = %v, want an error matching context.DeadlineExceeded", err)
	}
	if strings.Contains(err.Error(), "handlers still running") || !strings.Contains(err.Error(), "blocked") {
		t.Errorf("Consumer.Close error %q should say the connection is blocked, not that handlers are running", err)
	}

	ctx2, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel2()
	start = time.Now()
	_ = c.Close(ctx2)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Connection.Close with a 2s ctx took %s under a memory alarm", took)
	}
}

// Fix 1, the connection itself: Connection.Close with consumers still
// running returns by its deadline under an alarm.
func TestConnectionCloseUnderMemoryAlarm(t *testing.T) {
	leakCheck(t)
	q := queue(t, "connclose-alarm", nil)
	c := dial(t)
	for range 2 {
		if _, err := runtime.Consume(ctxFor(t, 10*time.Second), c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
			runtime.Handle(text, func(context.Context, *runtime.Message[string]) runtime.Ack { return runtime.Accept() }),
		}}); err != nil {
			t.Fatal(err)
		}
	}
	blockConnection(t, c, q)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	err := c.Close(ctx)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Connection.Close with a 2s ctx took %s under a memory alarm", took)
	}
	if err == nil || !strings.Contains(err.Error(), "blocked") {
		t.Errorf("Connection.Close under an alarm = %v, want an error saying the connection is blocked", err)
	}
}

// Fix 2: a publish whose write is blocked by an alarm, and one queued
// behind it, honour their ctx; while the broker says the connection is
// blocked, a publish fails at once with ErrBlocked and the broker's reason.
func TestPublishUnderMemoryAlarmHonoursCtx(t *testing.T) {
	leakCheck(t)
	q := queue(t, "publish-alarm", nil)
	c := dial(t)
	SetAlarm(t)

	// A body large enough to fill the socket buffers: its write blocks.
	big := strings.Repeat("x", 64<<20)
	bigDone := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		bigDone <- runtime.Publish(ctx, c, text, "", big, runtime.WithRoutingKey(q))
	}()
	time.Sleep(500 * time.Millisecond)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	err := runtime.Publish(ctx, c, text, "", "small", runtime.WithRoutingKey(q))
	took := time.Since(start)
	if err == nil {
		t.Fatal("a publish during a memory alarm was confirmed")
	}
	if took > 2500*time.Millisecond {
		t.Errorf("a publish with a 2s ctx behind a blocked write took %s", took)
	}
	if !errors.Is(err, runtime.ErrBlocked) && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("publish under an alarm = %v, want ErrBlocked or the ctx's deadline", err)
	}
	select {
	case err := <-bigDone:
		if err == nil {
			t.Error("the large publish was confirmed during the alarm")
		}
	case <-time.After(3 * time.Second):
		t.Error("the blocked large publish did not return by its 3s ctx")
	}

	// Now the broker has told the client: fail fast, with its reason.
	deadline := time.Now().Add(5 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		start := time.Now()
		err := runtime.Publish(ctx, c, text, "", "small", runtime.WithRoutingKey(q))
		cancel()
		if errors.Is(err, runtime.ErrBlocked) {
			if took := time.Since(start); took > 200*time.Millisecond {
				t.Errorf("a publish on a blocked connection took %s to fail", took)
			}
			if !strings.Contains(err.Error(), "memory") {
				t.Errorf("ErrBlocked %q does not carry the broker's reason", err)
			}
			if !errors.Is(err, runtime.ErrUnavailable) {
				t.Errorf("ErrBlocked %q does not match ErrUnavailable (it is retryable)", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no publish failed with ErrBlocked while the connection was blocked; last: %v", err)
		}
	}

	ClearAlarm(t)
	// After the alarm, publishing works again on the same Connection.
	waitPublish(t, c, q, 20*time.Second)
}

// waitPublish publishes until one is confirmed.
func waitPublish(t *testing.T, c *runtime.Connection, q string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := runtime.Publish(ctx, c, text, "", "after", runtime.WithRoutingKey(q))
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no publish confirmed within %s: %v", d, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Fix 3: one slow handler of a dead session does not hold up the new
// session: the consumer resubscribes at once and the other workers go on.
func TestSlowHandlerDoesNotStallResubscription(t *testing.T) {
	leakCheck(t)
	q := queue(t, "slow-handler", nil)
	origin := Name("slow-origin")
	c := dial(t, runtime.WithOrigin(origin))
	evs := newEvents()
	var slowOnce atomic.Bool
	cs, err := runtime.Consume(ctxFor(t, 10*time.Second), c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
		runtime.Handle(text, func(ctx context.Context, m *runtime.Message[string]) runtime.Ack {
			evs.add(m)
			if m.Payload == "slow" && slowOnce.CompareAndSwap(false, true) {
				time.Sleep(8 * time.Second) // ignores ctx on purpose
			}
			return runtime.Accept()
		}),
	}}, runtime.WithConcurrency(4))
	if err != nil {
		t.Fatal(err)
	}
	pub := dial(t)
	WaitListed(t, origin, 15*time.Second)
	publish(t, pub, q, "slow")
	evs.waitFor(t, 10*time.Second, "the slow handler starts", func(e []event) bool { return count(e, "slow") == 1 })

	if KillConnections(t, origin, 10*time.Second) == 0 {
		t.Fatal("no connection to kill")
	}
	killed := time.Now()
	publish(t, pub, q, "fast")
	evs.waitFor(t, 15*time.Second, "the fast message is handled", func(e []event) bool { return count(e, "fast") == 1 })
	if took := time.Since(killed); took > 3*time.Second {
		t.Errorf("a message published after the kill was handled %s later: the slow handler stalled the resubscription", took)
	}
	// The slow message was never acked on a live channel: redelivered.
	all := evs.waitFor(t, 20*time.Second, "the slow message is redelivered", func(e []event) bool { return count(e, "slow") == 2 })
	for _, e := range all {
		if e.body == "slow" && e.redelivered && e.attempt != 1 {
			t.Errorf("redelivered slow message on attempt %d, want 1", e.attempt)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := cs.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func publish(t *testing.T, c *runtime.Connection, q, body string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := runtime.Publish(ctx, c, text, "", body, runtime.WithRoutingKey(q)); err != nil {
		t.Fatalf("publish %q: %v", body, err)
	}
}

// Fix 4: a retry held in memory by a session that died is dropped at
// once, even while another handler of that session is still running, so
// the broker's redelivery is the only copy (never handled twice).
func TestHeldRetryOfADeadSessionIsDroppedAtOnce(t *testing.T) {
	leakCheck(t)
	q := queue(t, "held-dead", nil)
	origin := Name("held-origin")
	c := dial(t, runtime.WithOrigin(origin))
	evs := newEvents()
	accepted := map[string]*atomic.Int32{"x": {}}
	var slowOnce, retryOnce atomic.Bool
	cs, err := runtime.Consume(ctxFor(t, 10*time.Second), c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
		runtime.Handle(text, func(ctx context.Context, m *runtime.Message[string]) runtime.Ack {
			evs.add(m)
			switch {
			case m.Payload == "slow" && slowOnce.CompareAndSwap(false, true):
				time.Sleep(6 * time.Second)
			case m.Payload == "x" && retryOnce.CompareAndSwap(false, true):
				return runtime.Retry(errors.New("not yet"))
			case m.Payload == "x":
				accepted["x"].Add(1)
			}
			return runtime.Accept()
		}),
	}}, runtime.WithConcurrency(2), runtime.WithRetry(runtime.Fixed(3, 3*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	pub := dial(t)
	WaitListed(t, origin, 15*time.Second)
	publish(t, pub, q, "slow")
	publish(t, pub, q, "x")
	evs.waitFor(t, 10*time.Second, "x is held for a retry", func(e []event) bool { return count(e, "x") == 1 && count(e, "slow") == 1 })
	if KillConnections(t, origin, 10*time.Second) == 0 {
		t.Fatal("no connection to kill")
	}
	// The held retry's timer (3s) fires while the slow handler (6s) of
	// the dead session still runs. Wait past both.
	time.Sleep(10 * time.Second)
	if n := accepted["x"].Load(); n != 1 {
		t.Errorf("x was accepted %d times, want 1 (the dead session's held retry was published as well as redelivered): %+v", n, evs.all())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := cs.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// Fix 5 and 6: during an outage (stop_app) a publish fails at once with an
// error matching ErrUnavailable; after start_app the consumer is back
// within ~2s, not after a 10s backoff.
func TestOutageRecoveryAndUnavailable(t *testing.T) {
	leakCheck(t)
	q := queue(t, "outage", nil)
	c := dial(t)
	evs := newEvents()
	cs, err := runtime.Consume(ctxFor(t, 10*time.Second), c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
		runtime.Handle(text, func(ctx context.Context, m *runtime.Message[string]) runtime.Ack { evs.add(m); return runtime.Accept() }),
	}})
	if err != nil {
		t.Fatal(err)
	}
	pub := dial(t)
	t.Cleanup(func() { _, _ = Ctl("start_app") })
	MustCtl(t, "stop_app")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	start := time.Now()
	err = runtime.Publish(ctx, pub, text, "", "during", runtime.WithRoutingKey(q))
	cancel()
	if err == nil {
		t.Fatal("a publish during the outage was confirmed")
	}
	if !isUnavailable(err) {
		t.Errorf("a publish during the outage = %v, want an error matching ErrUnavailable", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("a publish during the outage took %s to fail", took)
	}
	time.Sleep(9 * time.Second)
	MustCtl(t, "start_app")
	up := time.Now()
	waitPublish(t, pub, q, 30*time.Second)
	evs.waitFor(t, 30*time.Second, "a message after the outage is handled", func(e []event) bool { return count(e, "after") >= 1 })
	if took := time.Since(up); took > 3*time.Second {
		t.Errorf("the consumer handled a message %s after start_app, want within ~2s", took)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cs.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
}
