package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// Pull and Browse on the real broker, as the messaging conventions' receive
// operations. Two messages published in one trace; a Browse reads both
// (its callback acks the second) and puts the first back; a Pull takes the
// first, a second Pull finds the queue empty, a third names a queue that
// is not there. Metrics: consumed{operation receive} 2 (the Pull's message
// and the one the Browse acked, none as process), acemq.browsed 2, receive
// durations 3 (with the type, empty without one, error.type
// queue_not_found). Spans: one "<q> browse" (kind consumer, the child of
// its ctx, linked to both publishes, message_count 2) and "<q> receive"
// spans, the one with a message the child of its ctx and linked to that
// message's publish, the failed one Error.
func TestPullAndBrowseObserved(t *testing.T) {
	t.Parallel()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	c := dial(t, runtime.WithMeterProvider(mp), runtime.WithTracerProvider(tp))
	q := brokertest.Queue(t, "obs.pull")
	rawQueue(t, q, nil)
	missing := q + ".missing"
	tr := tp.Tracer("test")

	ctx, root := tr.Start(ctxFor(t, 30*time.Second), "place orders")
	for _, body := range []string{"first", "second"} {
		if err := runtime.Publish(ctx, c, textType, "", body, runtime.WithRoutingKey(q)); err != nil {
			t.Fatal(err)
		}
	}
	root.End()
	bctx, look := tr.Start(ctxFor(t, 30*time.Second), "look")
	n, err := c.Browse(bctx, q, 0, func(d *runtime.Delivery) error {
		if string(d.Body) == "second" {
			return d.Ack(bctx)
		}
		return nil
	})
	look.End()
	if err != nil || n != 2 {
		t.Fatalf("Browse = %d, %v; want 2, nil", n, err)
	}
	pctx, op := tr.Start(ctxFor(t, 10*time.Second), "operator")
	d, err := c.Pull(pctx, q)
	if err != nil || d == nil || string(d.Body) != "first" {
		t.Fatalf("Pull = %v, %v; want the first message", d, err)
	}
	if err := d.Ack(pctx); err != nil {
		t.Fatal(err)
	}
	if d2, err := c.Pull(pctx, q); d2 != nil || err != nil {
		t.Fatalf("Pull of the empty queue = %v, %v; want nil, nil", d2, err)
	}
	if _, err := c.Pull(pctx, missing); !errors.Is(err, runtime.ErrQueueNotFound) {
		t.Fatalf("Pull of %s: %v, want ErrQueueNotFound", missing, err)
	}
	op.End()

	// Metrics, each instrument's every point about q (and missing).
	recv := func(dest string, kv ...string) string {
		return attrKey(append([]string{"messaging.system", "rabbitmq", "messaging.destination.name", dest,
			"messaging.operation.name", "receive", "messaging.operation.type", "receive"}, kv...)...)
	}
	typed := []string{"acemq.message.type", textType.Name()}
	only := func(name string, want map[string]float64) {
		t.Helper()
		pts, _ := points(t, reader, name)
		got := map[string]float64{}
		for k, v := range pts {
			if sumWhere(map[string]float64{k: v}, "messaging.destination.name="+q)+sumWhere(map[string]float64{k: v}, "messaging.destination.name="+missing) > 0 {
				got[k] = v
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s = %v, want exactly %v", name, got, want)
			return
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s{%s} = %v, want %v (all: %v)", name, k, got[k], v, got)
			}
		}
	}
	only(wire.MetricConsumed, map[string]float64{recv(q, typed...): 2})
	only(wire.MetricBrowsed, map[string]float64{
		attrKey("messaging.system", "rabbitmq", "messaging.destination.name", q, "acemq.message.type", textType.Name()): 2})
	only(wire.MetricOperationDuration, map[string]float64{
		recv(q, typed...): 1, recv(q): 1, recv(missing, "error.type", "queue_not_found"): 1})

	// Spans.
	var publishes []trace.SpanContext
	var browse, full, empty, failed sdktrace.ReadOnlySpan
	for _, s := range spans.Ended() {
		switch {
		case s.SpanKind() == trace.SpanKindProducer && s.Parent().SpanID() == root.SpanContext().SpanID():
			publishes = append(publishes, s.SpanContext())
		case s.Name() == q+" browse":
			browse = s
		case s.Name() == q+" receive" && len(s.Links()) == 1:
			full = s
		case s.Name() == q+" receive":
			empty = s
		case s.Name() == missing+" receive":
			failed = s
		}
	}
	if len(publishes) != 2 || browse == nil || full == nil || empty == nil || failed == nil {
		t.Fatalf("spans: %d publishes, browse %v, receive %v, empty receive %v, failed receive %v; want all", len(publishes), browse != nil, full != nil, empty != nil, failed != nil)
	}
	attr := func(s sdktrace.ReadOnlySpan, k string) string {
		for _, a := range s.Attributes() {
			if string(a.Key) == k {
				return a.Value.Emit()
			}
		}
		return "(absent)"
	}
	for _, s := range []sdktrace.ReadOnlySpan{browse, full, empty, failed} {
		if s.SpanKind() != trace.SpanKindConsumer || attr(s, "messaging.system") != "rabbitmq" || attr(s, "messaging.operation.type") != "receive" {
			t.Errorf("%s: kind %s, system %s, operation.type %s; want consumer, rabbitmq, receive", s.Name(), s.SpanKind(), attr(s, "messaging.system"), attr(s, "messaging.operation.type"))
		}
	}
	if browse.Parent().SpanID() != look.SpanContext().SpanID() || attr(browse, "messaging.operation.name") != "browse" ||
		attr(browse, "messaging.batch.message_count") != "2" || attr(browse, "messaging.destination.name") != q {
		t.Errorf("browse span: parent %s (want %s), operation %s, message_count %s, destination %s",
			browse.Parent().SpanID(), look.SpanContext().SpanID(), attr(browse, "messaging.operation.name"), attr(browse, "messaging.batch.message_count"), attr(browse, "messaging.destination.name"))
	}
	if l := browse.Links(); len(l) != 2 || l[0].SpanContext.SpanID() != publishes[0].SpanID() || l[1].SpanContext.SpanID() != publishes[1].SpanID() {
		t.Errorf("browse span links %v, want the two publishes %v in order", l, publishes)
	}
	if full.Parent().SpanID() != op.SpanContext().SpanID() || full.Links()[0].SpanContext.SpanID() != publishes[0].SpanID() ||
		full.Links()[0].SpanContext.TraceID() != root.SpanContext().TraceID() {
		t.Errorf("receive span: parent %s (want the operator's %s), link %v (want the first publish %s)",
			full.Parent().SpanID(), op.SpanContext().SpanID(), full.Links()[0].SpanContext, publishes[0].SpanID())
	}
	for k, want := range map[string]string{
		"messaging.operation.name": "receive", "messaging.destination.name": q, "messaging.message.id": d.Envelope.ID,
		"acemq.message.type": textType.Name(), "messaging.message.body.size": "5", "messaging.rabbitmq.destination.routing_key": q,
		"acemq.attempt": "1",
	} {
		if got := attr(full, k); got != want {
			t.Errorf("receive span %s = %s, want %s", k, got, want)
		}
	}
	if full.Status().Code != codes.Unset || empty.Status().Code != codes.Unset {
		t.Errorf("receive span status %v, empty receive %v; want unset", full.Status(), empty.Status())
	}
	if got := attr(empty, "messaging.message.id"); got != "(absent)" || len(empty.Links()) != 0 {
		t.Errorf("empty receive: message id %s, %d links; want none", got, len(empty.Links()))
	}
	if failed.Status().Code != codes.Error || attr(failed, "error.type") != "queue_not_found" {
		t.Errorf("failed receive: status %v, error.type %s; want Error, queue_not_found", failed.Status(), attr(failed, "error.type"))
	}
}
