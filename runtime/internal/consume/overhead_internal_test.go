package consume

import (
	"context"
	"syscall"
	"testing"
	"time"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/obs"
	"github.com/acemq/acemq-go/runtime/wire"
	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// With the global providers left as they are (no-ops until a service
// installs one), a delivery's process span, consumed count, duration and
// outcome allocate nothing (package runtime's
// TestObservabilityAddsNoAllocationsWithTheNoopProviders: the publish's).
func TestObservabilityAddsNoAllocationsToADelivery(t *testing.T) {
	obs.DeclareType("acemq.alloc.test")
	ctx := context.Background()
	start := time.Now()
	cfg := testConfig(Config{}, nil)
	cs := &Consumer{conn: cfg.Conn, metrics: cfg.Metrics, cfg: cfg, queue: "orders.new", handlerCtx: ctx}
	dv := &delivery{cs: cs, d: amqp.Delivery{Headers: amqp.Table{wire.HeaderID: "id-1", wire.HeaderAttempt: int64(1)}, MessageId: "id-1", Type: "acemq.alloc.test", Body: []byte("body")},
		env: core.Envelope{Attempt: 1}, began: start}
	if n := testing.AllocsPerRun(1000, func() {
		dv.opts = cs.typeOpts(dv.d.Type)
		dv.consumed()
		dv.startSpan()
		dv.answered(core.Accept())
		dv.accepted()
		dv.span.Fail("")
		dv.span.End()
	}); n != 0 {
		t.Errorf("process span and metrics: %v allocations per delivery, want 0", n)
	}

	// A delivery from a traced publisher carries a traceparent: passing it
	// on in the handler's context (so that what the handler publishes
	// continues the trace) takes the two allocations of a context holding
	// a span context, providers or not; nothing more.
	const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	dv.d.Headers = amqp.Table{wire.HeaderID: "id-1", wire.HeaderAttempt: int64(1), "traceparent": traceparent}
	var got context.Context
	if n := testing.AllocsPerRun(1000, func() {
		dv.opts = cs.typeOpts(dv.d.Type)
		dv.consumed()
		dv.startSpan()
		got = dv.ctx
		dv.answered(core.Accept())
		dv.accepted()
		dv.span.End()
	}); n != 2 {
		t.Errorf("a delivery with a traceparent: %v allocations, want 2 (its context)", n)
	}
	if sc := trace.SpanContextFromContext(got); sc.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || !sc.IsRemote() {
		t.Errorf("the handler's context carries %v, want the delivery's trace 4bf92f3577b34da6a3ce929d0e0e4736", sc)
	}
}

// BenchmarkObservabilityDeliveryHooksSDK: the delivery hooks (consumed
// count, process span with its attributes, duration, outcome) with the
// SDKs (a meter provider with a reader, a tracer provider sampling every
// span and batching to a no-op exporter): the CPU and allocations
// observability adds per delivery when it is on, without the broker's
// noise. Sub-benchmarks split it: providers=noop (the extraction of the
// delivery's trace context, which every side does), metrics (SDK meter,
// no-op tracer), traces, both, and both/sampled10 (one trace in ten).
//
//	go test -run '^$' -bench DeliveryHooksSDK -benchmem ./runtime/internal/consume/
func BenchmarkObservabilityDeliveryHooksSDK(b *testing.B) {
	meter := func(b *testing.B) metric.MeterProvider {
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
		return mp
	}
	tracer := func(b *testing.B, s sdktrace.Sampler) trace.TracerProvider {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(s), sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		return tp
	}
	noMeter, noTracer := metricnoop.NewMeterProvider(), tracenoop.NewTracerProvider()
	all := sdktrace.AlwaysSample()
	b.Run("providers=noop", func(b *testing.B) { benchDeliveryHooks(b, noMeter, noTracer) })
	b.Run("providers=metrics", func(b *testing.B) { benchDeliveryHooks(b, meter(b), noTracer) })
	b.Run("providers=traces", func(b *testing.B) { benchDeliveryHooks(b, noMeter, tracer(b, all)) })
	b.Run("providers=both", func(b *testing.B) { benchDeliveryHooks(b, meter(b), tracer(b, all)) })
	b.Run("providers=both/sampled10", func(b *testing.B) {
		benchDeliveryHooks(b, meter(b), tracer(b, sdktrace.TraceIDRatioBased(0.1)))
	})
}

func benchDeliveryHooks(b *testing.B, mp metric.MeterProvider, tp trace.TracerProvider) {
	otel.SetTracerProvider(tp)
	b.Cleanup(func() { otel.SetTracerProvider(tracenoop.NewTracerProvider()) })
	obs.DeclareType("acemq.alloc.test")
	ctx := context.Background()
	cfg := testConfig(Config{}, nil)
	cfg.Metrics = obs.NewMetrics(mp)
	cs := &Consumer{conn: cfg.Conn, metrics: cfg.Metrics, cfg: cfg, queue: "orders.new", handlerCtx: ctx}
	// Deliveries as traced publishes of the runtime leave them: a sampled
	// traceparent in their headers, each of a trace of its own (with one
	// trace id for all, TraceIDRatioBased would keep every span or none).
	publisher := sdktrace.NewTracerProvider().Tracer("publisher")
	headers := make([]amqp.Table, 1024)
	for i := range headers {
		h := amqp.Table{wire.HeaderID: "id-1", wire.HeaderAttempt: int64(1)}
		pctx, span := publisher.Start(ctx, "orders.new publish", trace.WithSpanKind(trace.SpanKindProducer))
		obs.InjectTrace(pctx, h)
		span.End()
		headers[i] = h
	}
	dv := &delivery{cs: cs, d: amqp.Delivery{MessageId: "id-1", CorrelationId: "conv-1", Type: "acemq.alloc.test", RoutingKey: "orders.new", Body: []byte("body")},
		env: core.Envelope{Attempt: 1}, began: time.Now()}
	b.ReportAllocs()
	defer reportCPU(b)()
	i := 0
	for b.Loop() {
		dv.d.Headers = headers[i%len(headers)]
		i++
		dv.opts = cs.typeOpts(dv.d.Type)
		dv.consumed()
		dv.startSpan()
		dv.answered(core.Accept())
		dv.accepted()
		dv.span.End()
	}
}

// reportCPU reports the process's CPU time (user + system, every thread:
// the SDK's batcher and the GC included) per op, from now to the call of
// what it returns: on a loaded machine it moves less than ns/op, which
// counts the time the benchmark waited for a core.
func reportCPU(b *testing.B) func() {
	c0 := processCPU()
	return func() { b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpu-ns/op") }
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
