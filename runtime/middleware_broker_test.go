package runtime_test

// Middleware, against the broker: the order (the connection's outside the
// consumer's, each in the order given), what a middleware sees, a value it
// puts in ctx reaching the handler, its own Ack deciding the outcome (the
// shape of a transactional inbox: begin, call next, commit on Accept,
// roll back otherwise), and the runtime's tracing and metrics recording a
// middleware's Retry and panic outside the chain.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// trail records the steps of the middlewares and handlers, in order.
type trail struct {
	mu    sync.Mutex
	steps []string
}

func (t *trail) add(s string) {
	t.mu.Lock()
	t.steps = append(t.steps, s)
	t.mu.Unlock()
}

func (t *trail) all() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.steps)
}

// named is a middleware that records "name>" before next and "name<"
// after, with next's Ack unchanged.
func named(tr *trail, name string) runtime.Middleware {
	return func(next runtime.HandlerFunc) runtime.HandlerFunc {
		return func(ctx context.Context, m *runtime.Incoming) runtime.Ack {
			tr.add(name + ">")
			a := next(ctx, m)
			tr.add(name + "<")
			return a
		}
	}
}

func TestMiddlewareOrderAndWhatItSees(t *testing.T) {
	t.Parallel()
	tr := &trail{}
	c := dial(t, runtime.WithMiddleware(named(tr, "conn1"), named(tr, "conn2")))
	q := brokertest.Queue(t, "mw.order")
	rawQueue(t, q, nil)
	var got struct {
		sync.Mutex
		in runtime.Incoming
		p  any
	}
	see := func(next runtime.HandlerFunc) runtime.HandlerFunc {
		return func(ctx context.Context, m *runtime.Incoming) runtime.Ack {
			got.Lock()
			got.in, got.p = *m, m.Payload()
			got.Unlock()
			return next(ctx, m)
		}
	}
	_, rec := consume(t, c, q, nil, func(seen) runtime.Ack { tr.add("handler"); return runtime.Accept() },
		runtime.WithMiddleware(named(tr, "cons1"), nil), runtime.WithMiddleware(named(tr, "cons2"), see))
	publishText(t, c, q, "order A-1", runtime.WithHeaders(map[string]any{"tenant": "t-7"}), runtime.WithCorrelationID("corr-9"))
	calls := rec.waitN(t, 1, wait)
	waitSteps(t, tr, 9)
	want := []string{"conn1>", "conn2>", "cons1>", "cons2>", "handler", "cons2<", "cons1<", "conn2<", "conn1<"}
	if s := tr.all(); !slices.Equal(s, want) {
		t.Errorf("steps %v, want %v (the connection's outside, then the consumer's, each in the order given)", s, want)
	}
	got.Lock()
	defer got.Unlock()
	if got.in.Queue != q || got.p != "order A-1" || got.in.Headers["tenant"] != "t-7" || got.in.RoutingKey != q ||
		got.in.Envelope.CorrelationID != "corr-9" || got.in.Envelope.Attempt != 1 || got.in.Envelope.ID != calls[0].Envelope.ID {
		t.Errorf("the middleware saw queue %q payload %v tenant %v routing key %q envelope %+v; want %q, \"order A-1\", t-7, %q, corr-9, attempt 1, id %s",
			got.in.Queue, got.p, got.in.Headers["tenant"], got.in.RoutingKey, got.in.Envelope, q, q, calls[0].Envelope.ID)
	}
	waitDepth(t, q, 0, wait)
}

func waitSteps(t *testing.T, tr *trail, n int) {
	t.Helper()
	for deadline := time.Now().Add(wait); len(tr.all()) < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("steps %v, want %d of them", tr.all(), n)
		}
	}
}

type txKey struct{}

// tx is what the inbox-shaped middleware below hands the handler in ctx.
type tx struct {
	id        string
	committed bool
}

// inbox is a middleware of the transactional inbox's shape: it begins a
// transaction, skips a message it has seen (Accept, the handler not
// called), calls next with the transaction in ctx, commits on Accept and
// rolls back otherwise, and a failed commit is its own Retry.
func inbox(tr *trail, seenIDs map[string]bool, failCommit func(body string) bool) runtime.Middleware {
	var mu sync.Mutex
	return func(next runtime.HandlerFunc) runtime.HandlerFunc {
		return func(ctx context.Context, m *runtime.Incoming) runtime.Ack {
			body := m.Payload().(string)
			mu.Lock()
			dup := seenIDs[body]
			mu.Unlock()
			if dup {
				tr.add("duplicate " + body)
				return runtime.Accept()
			}
			t := &tx{id: "tx-" + body}
			a := next(context.WithValue(ctx, txKey{}, t), m)
			if a.Kind() != runtime.AckAccept {
				tr.add("rollback " + body)
				return a
			}
			if failCommit(body) {
				tr.add("commit failed " + body)
				return runtime.Reject(errors.New("inbox: commit: serialization failure"))
			}
			t.committed = true
			mu.Lock()
			seenIDs[body] = true
			mu.Unlock()
			tr.add("commit " + body)
			return a
		}
	}
}

func TestMiddlewareCtxValueAndItsAckDecide(t *testing.T) {
	t.Parallel()
	tr := &trail{}
	c := dial(t)
	q := brokertest.Queue(t, "mw.inbox")
	rawQueue(t, q, nil)
	policy := runtime.NoRetry()
	seenIDs := map[string]bool{"seen-before": true}
	var handled sync.Map
	h := func(ctx context.Context, m *runtime.Message[string]) runtime.Ack {
		t, _ := ctx.Value(txKey{}).(*tx)
		if t == nil {
			return runtime.Park(errors.New("no transaction in ctx"))
		}
		handled.Store(m.Payload, t.id)
		if m.Payload == "fails" {
			return runtime.Retry(errors.New("stock service down"))
		}
		return runtime.Accept()
	}
	spec := runtime.ConsumerSpec{Queue: q, Retry: &policy, Routes: []runtime.Route{runtime.Handle(textType, h)}}
	cs, err := runtime.Consume(ctxFor(t, 10*time.Second), c, spec,
		runtime.WithMiddleware(inbox(tr, seenIDs, func(b string) bool { return b == "commit-fails" })))
	if err != nil {
		t.Fatalf("Consume: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close(ctxFor(t, 10*time.Second)) })
	for _, b := range []string{"ok", "fails", "commit-fails", "seen-before"} {
		publishText(t, c, q, b)
	}
	d := drain(t, wire.DeadLetterQueue(q), 2, wait)
	reasons := []string{headerString(t, d[0], wire.HeaderError), headerString(t, d[1], wire.HeaderError)}
	slices.Sort(reasons)
	want := []string{"gave up after 1 attempts: stock service down", "rejected by the handler: inbox: commit: serialization failure"}
	if !slices.Equal(reasons, want) {
		t.Errorf("dead letters' reasons %q, want %q (the handler's Retry, the middleware's own Reject)", reasons, want)
	}
	waitSteps(t, tr, 4)
	steps := tr.all()
	slices.Sort(steps)
	if ws := []string{"commit failed commit-fails", "commit ok", "duplicate seen-before", "rollback fails"}; !slices.Equal(steps, ws) {
		t.Errorf("inbox steps %v, want %v", steps, ws)
	}
	for _, b := range []string{"ok", "fails", "commit-fails"} {
		if id, _ := handled.Load(b); id != "tx-"+b {
			t.Errorf("handler of %q saw transaction %v in ctx, want tx-%s", b, id, b)
		}
	}
	if _, ok := handled.Load("seen-before"); ok {
		t.Errorf("the handler was called for a message the middleware skipped")
	}
	waitHandled(t, cs, map[string]int64{"accepted": 2, "gave_up_attempts": 1, "rejected": 1})
}

// waitHandled waits for the consumer's Stats().Handled to reach want.
func waitHandled(t *testing.T, cs *runtime.Consumer, want map[string]int64) {
	t.Helper()
	for deadline := time.Now().Add(wait); ; time.Sleep(20 * time.Millisecond) {
		got := cs.Stats().Handled
		ok := true
		for k, v := range want {
			ok = ok && got[k] == v
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Stats().Handled %v, want %v", got, want)
		}
	}
}

// A middleware's panic and Retry are the runtime's to record: the process
// span has the panic's exception event, the outcome metrics count them,
// the dead letter names the middleware's line.
func TestMiddlewarePanicAndRetryAreRecorded(t *testing.T) {
	t.Parallel()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	faulty := func(next runtime.HandlerFunc) runtime.HandlerFunc {
		return func(ctx context.Context, m *runtime.Incoming) runtime.Ack {
			switch m.Payload() {
			case "boom":
				panic("the handler fell over")
			case "retry":
				return runtime.Retry(fmt.Errorf("tenant %v unknown", m.Headers["tenant"]))
			}
			return next(ctx, m)
		}
	}
	c := dial(t, runtime.WithTracerProvider(tp), runtime.WithMeterProvider(mp), runtime.WithMiddleware(faulty))
	q := brokertest.Queue(t, "mw.panic")
	rawQueue(t, q, nil)
	policy := runtime.NoRetry()
	cs, rec := consume(t, c, q, &policy, func(seen) runtime.Ack { return runtime.Accept() })
	publishText(t, c, q, "boom")
	publishText(t, c, q, "retry", runtime.WithHeaders(map[string]any{"tenant": "t-0"}))
	publishText(t, c, q, "fine")
	d := drain(t, wire.DeadLetterQueue(q), 2, wait)
	var reasons []string
	for _, m := range d {
		reasons = append(reasons, headerString(t, m, wire.HeaderError))
	}
	slices.Sort(reasons)
	if len(reasons) != 2 || reasons[1] != "gave up after 1 attempts: tenant t-0 unknown" ||
		!strings.HasPrefix(reasons[0], "gave up after 1 attempts: handler panicked: the handler fell over (at ") ||
		!strings.Contains(reasons[0], "middleware_broker_test.go:") {
		t.Errorf("dead letters' reasons %q, want the middleware's Retry and its panic at its own line", reasons)
	}
	waitHandled(t, cs, map[string]int64{"accepted": 1, "gave_up_attempts": 2})
	if calls := rec.all(); len(calls) != 1 || calls[0].Body != "fine" {
		t.Errorf("handler calls %s, want only \"fine\"", describe(calls))
	}
	dest := "messaging.destination.name=" + q
	for deadline := time.Now().Add(wait); ; time.Sleep(20 * time.Millisecond) {
		proc, _ := points(t, reader, wire.MetricProcessDuration)
		if sumWhere(proc, dest, "error.type=panic") == 1 && sumWhere(proc, dest, "error.type=retry") == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("process durations by error.type %v, want panic 1 and retry 1", proc)
		}
	}
	var panicked bool
	for deadline := time.Now().Add(wait); !panicked && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		panicked, _ = spanSeen(spans.Ended(), q)
	}
	if !panicked {
		t.Errorf("no process span of %s with the middleware's panic as an exception event", q)
	}
}

// ReceivedAt is when the consumer took the delivery from the broker, not
// when its turn came: a full prefetch (20, beyond the 16 a consumer of
// one worker decodes ahead) delivered together to one worker whose first
// handler call takes 1s is received at once, the twentieth run 1s later;
// the middleware and the handler see the same time. Outside a handler
// there is none.
func TestReceivedAtIsWhenTheConsumerTookTheDelivery(t *testing.T) {
	t.Parallel()
	const n = 20
	if at, ok := runtime.ReceivedAt(context.Background()); ok || !at.IsZero() {
		t.Errorf("ReceivedAt outside a handler = %v, %v; want zero, false", at, ok)
	}
	c := dial(t)
	q := brokertest.Queue(t, "received-at")
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
	bodies := make([]string, n)
	for i := range bodies {
		bodies[i] = fmt.Sprintf("m%02d", i+1)
	}
	if err := runtime.PublishBatch(ctxFor(t, 10*time.Second), c, textType, "", bodies, runtime.WithRoutingKey(q)); err != nil {
		t.Fatal(err)
	}
	type run struct{ received, mwReceived, began time.Time }
	var mu sync.Mutex
	runs := map[string]run{}
	mw := func(next runtime.HandlerFunc) runtime.HandlerFunc {
		return func(ctx context.Context, m *runtime.Incoming) runtime.Ack {
			at, ok := runtime.ReceivedAt(ctx)
			if !ok {
				t.Error("ReceivedAt in a middleware: none")
			}
			mu.Lock()
			runs[m.Payload().(string)] = run{mwReceived: at}
			mu.Unlock()
			return next(ctx, m)
		}
	}
	start := time.Now()
	h := func(ctx context.Context, m *runtime.Message[string]) runtime.Ack {
		at, _ := runtime.ReceivedAt(ctx)
		mu.Lock()
		r := runs[m.Payload]
		r.received, r.began = at, time.Now()
		runs[m.Payload] = r
		mu.Unlock()
		if m.Payload == "m01" {
			time.Sleep(time.Second)
		}
		return runtime.Accept()
	}
	cs, err := runtime.Consume(ctxFor(t, 10*time.Second), c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{runtime.Handle(textType, h)}},
		runtime.WithPrefetch(n), runtime.WithConcurrency(1), runtime.WithMiddleware(mw))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(context.Background()) })
	deadline := time.Now().Add(10 * time.Second)
	for cs.Stats().Handled["accepted"] < n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, name := range bodies {
		r := runs[name]
		if r.received.IsZero() || !r.received.Equal(r.mwReceived) || r.received.Before(start) || r.received.After(r.began) {
			t.Errorf("%s: received %v (the middleware saw %v), began %v; want one time between Consume and the run", name, r.received, r.mwReceived, r.began)
		}
	}
	first, last := runs[bodies[0]], runs[bodies[n-1]]
	if spread := last.received.Sub(first.received); spread > 250*time.Millisecond {
		t.Errorf("%s received %v after %s; want the %d received together (within 250ms)", bodies[n-1], spread, bodies[0], n)
	}
	if waited := last.began.Sub(last.received); waited < 900*time.Millisecond {
		t.Errorf("%s ran %v after it was received; want ≥ 900ms (a 1s handler ahead of it)", bodies[n-1], waited)
	}
}
