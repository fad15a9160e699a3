package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// A handler's span continues the publisher's trace: the trace context
// travels in the traceparent header.
func TestTraceContextTravelsFromPublisherToHandler(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx := ctxFor(t, 30*time.Second)
	c := dial(t, runtime.WithTracerProvider(tp))
	q := brokertest.Queue(t, "trace")
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
	mt := runtime.NewTextType("trace.v1")
	got := make(chan trace.SpanContext, 1)
	if _, err := runtime.Consume(ctx, c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
		runtime.Handle(mt, func(ctx context.Context, m *runtime.Message[string]) runtime.Ack {
			got <- trace.SpanContextFromContext(ctx)
			return runtime.Accept()
		}),
	}}); err != nil {
		t.Fatal(err)
	}

	pubCtx, span := tp.Tracer("test").Start(ctx, "place order")
	if err := runtime.Publish(pubCtx, c, mt, "", "traced", runtime.WithRoutingKey(q)); err != nil {
		t.Fatal(err)
	}
	span.End()

	sc := reconnectReceive(t, got)
	if sc.TraceID() != span.SpanContext().TraceID() {
		t.Fatalf("handler trace %s, publisher trace %s", sc.TraceID(), span.SpanContext().TraceID())
	}
	if sc.SpanID() == span.SpanContext().SpanID() {
		t.Fatal("the handler runs in the publisher's span, not a consumer span of its own")
	}
}
