package runtime_test

import (
	"context"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/acemq/acemq-go/internal/brokertest"
	"github.com/acemq/acemq-go/runtime"
	amqp "github.com/rabbitmq/amqp091-go"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// BenchmarkConsumeObservability: consume throughput on the broker with
// metrics and tracing on (the SDKs: a meter provider with a reader, a
// tracer provider batching to a no-op exporter) against off (no-op
// providers). Each op fills two queues with the same batch, then times a
// consumer draining each, interleaved (off first, then on first) so that
// both sides see the same machine; the line reports on/off, the throughput with
// observability as a fraction of the throughput without (1 = no cost),
// over all the rounds, and on/off-median, the median of the rounds' ratios:
//
//	go test -run '^$' -bench ConsumeObservability ./runtime/
func BenchmarkConsumeObservability(b *testing.B) {
	const batch = 1000
	_, ch := brokertest.Raw(b)
	if err := ch.Confirm(false); err != nil {
		b.Fatal(err)
	}
	queues := [2]string{brokertest.Queue(b, "bench.obs.off"), brokertest.Queue(b, "bench.obs.on")}
	for _, q := range queues {
		if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
			b.Fatal(err)
		}
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()); _ = tp.Shutdown(context.Background()) })
	conns := [2]*runtime.Connection{
		dial(b, runtime.WithMeterProvider(metricnoop.NewMeterProvider()), runtime.WithTracerProvider(tracenoop.NewTracerProvider())),
		dial(b, runtime.WithMeterProvider(mp), runtime.WithTracerProvider(tp)),
	}
	ctx := context.Background()
	fill := func(q string) {
		var dcs []*amqp.DeferredConfirmation
		for range batch {
			dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", q, true, false, rawMessage())
			if err != nil {
				b.Fatal(err)
			}
			dcs = append(dcs, dc)
		}
		for _, dc := range dcs {
			if !dc.Wait() {
				b.Fatal("nacked")
			}
		}
	}
	drainWith := func(i int) time.Duration {
		done := make(chan struct{}, batch)
		start := time.Now()
		cs, err := runtime.Consume(ctx, conns[i], runtime.ConsumerSpec{Queue: queues[i], Routes: []runtime.Route{
			runtime.Handle(textType, func(context.Context, *runtime.Message[string]) runtime.Ack {
				done <- struct{}{}
				return runtime.Accept()
			}),
		}}, runtime.WithPrefetch(100))
		if err != nil {
			b.Fatal(err)
		}
		for range batch {
			<-done
		}
		took := time.Since(start)
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_ = cs.Close(cctx)
		cancel()
		return took
	}
	// One untimed round each: connections, channels and the SDK warm.
	for i := range 2 {
		fill(queues[i])
		drainWith(i)
	}
	var took, cpu [2]time.Duration
	pairs := make([]float64, 0, b.N)
	b.ResetTimer()
	for n := range b.N {
		var round [2]time.Duration
		for k := range 2 {
			i := (n + k) % 2 // off first, then on first: neither side always goes second
			b.StopTimer()
			fill(queues[i])
			b.StartTimer()
			c0 := cpuTime()
			round[i] = drainWith(i)
			took[i] += round[i]
			cpu[i] += cpuTime() - c0
		}
		pairs = append(pairs, float64(round[0])/float64(round[1]))
	}
	b.ReportMetric(float64(took[0].Nanoseconds())/float64(b.N*batch), "off-ns/msg")
	b.ReportMetric(float64(took[1].Nanoseconds())/float64(b.N*batch), "on-ns/msg")
	b.ReportMetric(float64(took[0])/float64(took[1]), "on/off")
	// The median of the rounds' own ratios (each an off drain and an on
	// drain back to back): a burst of load from another process slows
	// one round, which moves the total above but hardly the median.
	slices.Sort(pairs)
	b.ReportMetric(pairs[len(pairs)/2], "on/off-median")
	// The process's CPU time per message (user + system): the client's own
	// cost, which the broker's latency on a shared machine does not blur.
	b.ReportMetric(float64(cpu[0].Nanoseconds())/float64(b.N*batch), "off-cpu-ns/msg")
	b.ReportMetric(float64(cpu[1].Nanoseconds())/float64(b.N*batch), "on-cpu-ns/msg")
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
