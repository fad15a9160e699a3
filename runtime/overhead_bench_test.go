package runtime_test

import (
	"context"
	"runtime/pprof"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// BenchmarkConsumeObservability: consume throughput on the broker with
// metrics and tracing on against off, in the same run (issue 12's
// overhead target, ≥ 0.95):
//
//	go test -run '^$' -bench ConsumeObservability -benchtime 20x ./runtime/
//
// On is what a service running the SDKs has: a meter provider with a
// reader (pulled, as Prometheus does), a tracer provider sampling every
// span (AlwaysSample) and batching them to an exporter that drops them.
// Off is the no-op providers. Both consume the same messages, published
// by the runtime with tracing on: each carries its envelope headers, a
// correlation id and the sampled traceparent of its own publish span (a
// trace of its own), so that the process span on the on side is a child
// of it and linked to it, as in production.
//
// Each op is one pair: a queue filled with the batch (untimed), drained by
// an off consumer, and another drained by an on consumer, the order
// alternating from pair to pair (off-on, on-off, ...) so that neither side
// always goes second. A drain is timed from its consumer's first delivery
// to its last (the subscription's setup is not in it). The line reports
// on/off-median, the median of the pairs' throughput ratios (on's
// throughput over off's: 1 = no cost), their spread (on/off-min,
// on/off-max), on/off over all the pairs, and the process's CPU time per
// message on each side (user + system, every goroutine: the client's own
// cost, which the broker's latency on a shared machine does not blur) and
// on/off-cpu, their ratio: the throughput ratio of a consumer bound by its
// own CPU.
//
// handler=empty is the worst case, a handler that does nothing: all that
// is timed is the runtime and observability. handler=json is a service's
// consumer: a JSON order decoded and validated against its schema, its
// total checked.
func BenchmarkConsumeObservability(b *testing.B) {
	texts := make([]string, obsBatch)
	for i := range texts {
		texts[i] = benchBody
	}
	fillText := func(ctx context.Context, c *runtime.Connection, q string) error {
		return runtime.PublishBatch(ctx, c, textType, "", texts, runtime.WithRoutingKey(q), runtime.WithCorrelationID("conv-1"))
	}
	empty := func(done func()) runtime.Route {
		return runtime.Handle(textType, func(context.Context, *runtime.Message[string]) runtime.Ack {
			done()
			return runtime.Accept()
		})
	}
	b.Run("handler=empty", func(b *testing.B) { benchObservability(b, sdktrace.AlwaysSample(), fillText, empty) })
	// Metrics on, tracing off (the no-op tracer provider): what the
	// metrics cost alone.
	b.Run("handler=empty/on=metrics", func(b *testing.B) { benchObservability(b, nil, fillText, empty) })
	// Tracing on, metrics off (the no-op meter provider): what the traces
	// cost alone.
	b.Run("handler=empty/on=traces", func(b *testing.B) {
		benchObservabilityWith(b, sdktrace.AlwaysSample(), false, fillText, empty)
	})
	// Metrics on, one trace in ten kept (TraceIDRatioBased(0.1), which
	// decides by the trace id and ignores the publisher's sampled flag):
	// the SDK still starts a span for each message, but only a tenth
	// record their attributes and are exported.
	b.Run("handler=empty/on=sampled10", func(b *testing.B) {
		benchObservability(b, sdktrace.TraceIDRatioBased(0.1), fillText, empty)
	})
	b.Run("handler=json", func(b *testing.B) {
		orders := make([]benchOrder, obsBatch)
		for i := range orders {
			orders[i] = benchOrderValue()
		}
		benchObservability(b, sdktrace.AlwaysSample(),
			func(ctx context.Context, c *runtime.Connection, q string) error {
				return runtime.PublishBatch(ctx, c, benchOrderType, "", orders, runtime.WithRoutingKey(q), runtime.WithCorrelationID("conv-1"))
			},
			func(done func()) runtime.Route {
				return runtime.Handle(benchOrderType, func(_ context.Context, m *runtime.Message[benchOrder]) runtime.Ack {
					var total float64
					for _, it := range m.Payload.Items {
						total += float64(it.Qty) * it.Price
					}
					done()
					if total != m.Payload.Total {
						return runtime.Reject(nil)
					}
					return runtime.Accept()
				})
			})
	})
}

const obsBatch = 1000

// benchObservability runs the pairs: fill publishes the batch to a queue,
// route makes the consumer's route, whose handler calls done once per
// message; the on side traces with sampler, or has metrics only when
// sampler is nil.
func benchObservability(b *testing.B, sampler sdktrace.Sampler, fill func(context.Context, *runtime.Connection, string) error, route func(done func()) runtime.Route) {
	benchObservabilityWith(b, sampler, true, fill, route)
}

// benchObservabilityWith is benchObservability with the on side's metrics
// on (an SDK meter provider) or off (the no-op one).
func benchObservabilityWith(b *testing.B, sampler sdktrace.Sampler, metrics bool, fill func(context.Context, *runtime.Connection, string) error, route func(done func()) runtime.Route) {
	queues := [2]string{brokertest.Queue(b, "bench.obs.off"), brokertest.Queue(b, "bench.obs.on")}
	_, ch := brokertest.Raw(b)
	for _, q := range queues {
		if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
			b.Fatal(err)
		}
	}
	// Each side's goroutines (its connection's, its consumers', the span
	// batcher's) carry the profiler label side=off or side=on, so that a
	// CPU profile of the benchmark splits by side:
	// go tool pprof -tagfocus side=on -top runtime.test cpu.prof
	var conns [2]*runtime.Connection
	pprof.Do(context.Background(), pprof.Labels("side", "off"), func(context.Context) {
		conns[0] = dial(b, runtime.WithMeterProvider(metricnoop.NewMeterProvider()), runtime.WithTracerProvider(tracenoop.NewTracerProvider()))
	})
	pprof.Do(context.Background(), pprof.Labels("side", "on"), func(context.Context) {
		var mp metric.MeterProvider = metricnoop.NewMeterProvider()
		if metrics {
			sdk := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			b.Cleanup(func() { _ = sdk.Shutdown(context.Background()) })
			mp = sdk
		}
		var tp trace.TracerProvider = tracenoop.NewTracerProvider()
		if sampler != nil {
			sdk := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithBatcher(tracetest.NewNoopExporter()))
			b.Cleanup(func() { _ = sdk.Shutdown(context.Background()) })
			tp = sdk
		}
		conns[1] = dial(b, runtime.WithMeterProvider(mp), runtime.WithTracerProvider(tp))
	})
	// The publisher: a tracer provider sampling every span and exporting
	// none, called from a context without a span, so that each message is
	// the root of a trace of its own, as in a service where every order
	// comes from its own request: each carries a sampled traceparent with
	// its own trace id. (One caller's trace for the whole batch would give
	// every message the same trace id, and TraceIDRatioBased, which
	// decides by the trace id, would then keep all of them or none: with
	// the id this benchmark used before, none.)
	pubTracer := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	b.Cleanup(func() { _ = pubTracer.Shutdown(context.Background()) })
	publisher := dial(b, runtime.WithMeterProvider(metricnoop.NewMeterProvider()), runtime.WithTracerProvider(pubTracer))
	ctx := context.Background()
	caller := ctx
	drain := func(i int) (took, cpu time.Duration) {
		var n atomic.Int64
		var start time.Time
		var cpu0 time.Duration
		done := make(chan struct{})
		var cs *runtime.Consumer
		var err error
		pprof.Do(ctx, pprof.Labels("side", [2]string{"off", "on"}[i]), func(ctx context.Context) {
			cs, err = runtime.Consume(ctx, conns[i], runtime.ConsumerSpec{Queue: queues[i], Routes: []runtime.Route{
				route(func() {
					switch n.Add(1) {
					case 1:
						start, cpu0 = time.Now(), cpuTime()
					case obsBatch:
						took, cpu = time.Since(start), cpuTime()-cpu0
						close(done)
					}
				}),
			}}, runtime.WithPrefetch(100))
		})
		if err != nil {
			b.Fatal(err)
		}
		<-done
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_ = cs.Close(cctx)
		cancel()
		return took, cpu
	}
	round := func(i int) (took, cpu time.Duration) {
		b.StopTimer()
		if err := fill(caller, publisher, queues[i]); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		return drain(i)
	}
	// One untimed pair: connections, channels and the SDK warm.
	round(0)
	round(1)

	var took, cpu [2]time.Duration
	ratios := make([]float64, 0, b.N)
	b.ResetTimer()
	for n := range b.N {
		var pair [2]time.Duration
		for k := range 2 {
			i := (n + k) % 2 // off-on, then on-off
			t, c := round(i)
			pair[i] = t
			took[i] += t
			cpu[i] += c
		}
		ratios = append(ratios, float64(pair[0])/float64(pair[1]))
	}
	msgs := float64(b.N * (obsBatch - 1)) // timed from the first delivery to the last
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "on/off-median")
	b.ReportMetric(ratios[0], "on/off-min")
	b.ReportMetric(ratios[len(ratios)-1], "on/off-max")
	b.ReportMetric(float64(took[0])/float64(took[1]), "on/off")
	b.ReportMetric(float64(took[0].Nanoseconds())/msgs, "off-ns/msg")
	b.ReportMetric(float64(took[1].Nanoseconds())/msgs, "on-ns/msg")
	b.ReportMetric(float64(cpu[0].Nanoseconds())/msgs, "off-cpu-ns/msg")
	b.ReportMetric(float64(cpu[1].Nanoseconds())/msgs, "on-cpu-ns/msg")
	// The throughput ratio of a consumer bound by its own CPU (a busy
	// queue, the broker on another machine): off's CPU per message over on's.
	b.ReportMetric(float64(cpu[0])/float64(cpu[1]), "on/off-cpu")
}

// benchOrder is handler=json's message: an order with its lines.
type benchOrder struct {
	ID         string           `json:"id"`
	CustomerID string           `json:"customer_id"`
	Email      string           `json:"email,omitempty"`
	PlacedAt   string           `json:"placed_at"`
	Status     string           `json:"status"`
	Total      float64          `json:"total"`
	Items      []benchOrderItem `json:"items"`
}

type benchOrderItem struct {
	SKU   string  `json:"sku"`
	Qty   int     `json:"qty"`
	Price float64 `json:"price"`
}

// benchOrderSchema is the codec benchmarks' order schema (internal/codec's
// codecBenchSchema), for the observability benchmark's JSON handler.
const benchOrderSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["id", "customer_id", "placed_at", "status", "items", "total"],
  "properties": {
    "id": {"type": "string", "format": "uuid"},
    "customer_id": {"type": "string", "minLength": 1},
    "email": {"type": "string", "format": "email"},
    "placed_at": {"type": "string", "format": "date-time"},
    "status": {"enum": ["placed", "paid", "shipped"]},
    "total": {"type": "number", "minimum": 0},
    "items": {"type": "array", "minItems": 1, "items": {
      "type": "object", "required": ["sku", "qty", "price"],
      "properties": {
        "sku": {"type": "string", "pattern": "^[A-Z]+-[0-9]+$"},
        "qty": {"type": "integer", "minimum": 1},
        "price": {"type": "number", "minimum": 0}
      }
    }}
  }
}`

// benchOrderType is the order under benchOrderSchema.
var benchOrderType = runtime.NewJSONType[benchOrder]("acemq.bench.order.placed", benchOrderSchema)

func benchOrderValue() benchOrder {
	return benchOrder{
		ID: "6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f", CustomerID: "C-42", Email: "ada@example.com",
		PlacedAt: "2026-11-30T06:00:00.123Z", Status: "placed", Total: 61.5,
		Items: []benchOrderItem{{SKU: "BOOK-1", Qty: 2, Price: 12.5}, {SKU: "PEN-22", Qty: 3, Price: 4.5}, {SKU: "BAG-7", Qty: 1, Price: 23}},
	}
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
