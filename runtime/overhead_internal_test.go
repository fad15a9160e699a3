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
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// With the global providers left as they are (no-ops until a service
// installs one), the observability on the hot path allocates nothing: the
// publish span and its metrics (a delivery's process span, consumed
// count, duration and outcome: internal/consume's
// TestObservabilityAddsNoAllocationsToADelivery). Measured on the hooks
// themselves, so that the figure is what observability adds, not the
// publish.
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
