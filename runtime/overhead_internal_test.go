package runtime

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/obs"
	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// With the global providers left as they are (no-ops until a service
// installs one), the observability on the hot path allocates nothing: the
// publish span and its metrics, and a delivery's process span, consumed
// count, duration and outcome. Measured on the hooks themselves, so that
// the figure is what observability adds, not the publish or the delivery.
func TestObservabilityAddsNoAllocationsWithTheNoopProviders(t *testing.T) {
	c := &Connection{metrics: obs.NewMetrics(otel.GetMeterProvider())}
	obs.DeclareType("acemq.alloc.test")
	o := amqpx.Outgoing{Exchange: "orders", Key: "order.placed", Mandatory: true, Msg: amqp.Publishing{
		Headers: amqp.Table{wire.HeaderID: "id-1", wire.HeaderAttempt: int64(1)}, MessageId: "id-1", Type: "acemq.alloc.test", Body: []byte("body"),
	}}
	ctx := context.Background()
	start := time.Now()
	if n := testing.AllocsPerRun(1000, func() {
		span := c.startPublish(ctx, &o)
		c.endPublish(span, &o, start, nil)
	}); n != 0 {
		t.Errorf("publish span and metrics: %v allocations per message, want 0", n)
	}

	cs := &Consumer{c: c, queue: "orders.new", handlerCtx: ctx}
	dv := &delivery{cs: cs, d: amqp.Delivery{Headers: amqp.Table{wire.HeaderID: "id-1", wire.HeaderAttempt: int64(1)}, MessageId: "id-1", Type: "acemq.alloc.test", Body: []byte("body")},
		env: Envelope{Attempt: 1}, began: start}
	if n := testing.AllocsPerRun(1000, func() {
		cs.consumedOne(dv.d.Type)
		dv.startSpan()
		dv.answered(Accept())
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
		cs.consumedOne(dv.d.Type)
		dv.startSpan()
		got = dv.ctx
		dv.answered(Accept())
		dv.accepted()
		dv.span.End()
	}); n != 2 {
		t.Errorf("a delivery with a traceparent: %v allocations, want 2 (its context)", n)
	}
	if sc := trace.SpanContextFromContext(got); sc.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || !sc.IsRemote() {
		t.Errorf("the handler's context carries %v, want the delivery's trace 4bf92f3577b34da6a3ce929d0e0e4736", sc)
	}
}

// BenchmarkObservabilityHooks reports the allocations and time of the
// hooks per message with the no-op providers (0 allocs/op expected).
func BenchmarkObservabilityHooks(b *testing.B) {
	c := &Connection{metrics: obs.NewMetrics(otel.GetMeterProvider())}
	o := amqpx.Outgoing{Exchange: "orders", Msg: amqp.Publishing{Headers: amqp.Table{}, Type: "acemq.alloc.test"}}
	ctx := context.Background()
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		span := c.startPublish(ctx, &o)
		c.endPublish(span, &o, time.Now(), nil)
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
//	go test -run '^$' -bench DeliveryHooksSDK -benchmem ./runtime/
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
	c := &Connection{metrics: obs.NewMetrics(mp)}
	c.cfg.tracerProvider = tp
	obs.DeclareType("acemq.alloc.test")
	ctx := context.Background()
	cs := &Consumer{c: c, queue: "orders.new", handlerCtx: ctx}
	// Deliveries as traced publishes of the runtime leave them: a sampled
	// traceparent in their headers, each of a trace of its own (with one
	// trace id for all, TraceIDRatioBased would keep every span or none).
	publisher := &Connection{metrics: obs.NewMetrics(metricnoop.NewMeterProvider())}
	publisher.cfg.tracerProvider = sdktrace.NewTracerProvider()
	headers := make([]amqp.Table, 1024)
	for i := range headers {
		o := amqpx.Outgoing{Exchange: "", Key: "orders.new", Msg: amqp.Publishing{
			Headers: amqp.Table{wire.HeaderID: "id-1", wire.HeaderAttempt: int64(1)}, MessageId: "id-1", CorrelationId: "conv-1", Type: "acemq.alloc.test", Body: []byte("body"),
		}}
		span := publisher.startPublish(ctx, &o)
		publisher.endPublish(span, &o, time.Now(), nil)
		headers[i] = o.Msg.Headers
	}
	dv := &delivery{cs: cs, d: amqp.Delivery{MessageId: "id-1", CorrelationId: "conv-1", Type: "acemq.alloc.test", RoutingKey: "orders.new", Body: []byte("body")},
		env: Envelope{Attempt: 1}, began: time.Now()}
	b.ReportAllocs()
	defer reportCPU(b)()
	i := 0
	for b.Loop() {
		dv.d.Headers = headers[i%len(headers)]
		i++
		cs.consumedOne(dv.d.Type)
		dv.startSpan()
		dv.answered(Accept())
		dv.accepted()
		dv.span.End()
	}
}

// BenchmarkObservabilitySDKSpan: the tracing SDK alone, a consumer span
// started and ended with none, 8 or 11 attributes (the process span's
// count) and a link: what dropping attributes would save.
//
//	go test -run '^$' -bench SDKSpan -benchmem ./runtime/
func BenchmarkObservabilitySDKSpan(b *testing.B) {
	attrs := []attribute.KeyValue{
		obs.AttrSystem, obs.AttrOpProcess, obs.AttrOpTypeProcess,
		attribute.String("messaging.destination.name", "orders.new"),
		attribute.String("messaging.message.id", "0194a3b2-7c1d-7e2f-8a9b-0c1d2e3f4a5b"),
		attribute.Int("messaging.message.body.size", 120),
		attribute.String("messaging.rabbitmq.destination.routing_key", "orders.new"),
		attribute.Int("acemq.attempt", 1),
		attribute.String("acemq.message.type", "acemq.alloc.test"),
		attribute.String("messaging.message.conversation_id", "conv-1"),
		attribute.String("acemq.outcome", "accept"),
	}
	for _, n := range []int{0, 8, len(attrs)} {
		b.Run(fmt.Sprintf("attributes=%d", n), func(b *testing.B) {
			tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithBatcher(tracetest.NewNoopExporter()))
			b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
			tr := tp.Tracer(obs.TracerName)
			_, parent := tr.Start(context.Background(), "publish")
			psc := parent.SpanContext()
			pctx := trace.ContextWithRemoteSpanContext(context.Background(), psc)
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				_, span := tr.Start(pctx, "orders.new process", obs.ConsumerStart...)
				span.AddLink(trace.Link{SpanContext: psc})
				if n > 0 {
					span.SetAttributes(attrs[:n]...)
				}
				span.End()
			}
		})
	}
}

// BenchmarkObservabilityPublishHooksSDK: the publish hooks (producer span
// with its attributes and injected context, sent count, duration) with the
// SDKs.
//
//	go test -run '^$' -bench PublishHooksSDK -benchmem ./runtime/
func BenchmarkObservabilityPublishHooksSDK(b *testing.B) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()); _ = tp.Shutdown(context.Background()) })
	c := &Connection{metrics: obs.NewMetrics(mp)}
	c.cfg.tracerProvider = tp
	obs.DeclareType("acemq.alloc.test")
	ctx := context.Background()
	o := amqpx.Outgoing{Exchange: "orders", Key: "order.placed", Msg: amqp.Publishing{
		Headers: amqp.Table{wire.HeaderID: "id-1", wire.HeaderAttempt: int64(1)}, MessageId: "id-1", Type: "acemq.alloc.test", Body: []byte("body"),
	}}
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		span := c.startPublish(ctx, &o)
		c.endPublish(span, &o, time.Now(), nil)
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
