package runtime_test

import (
	"context"
	goruntime "runtime"
	"runtime/pprof"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// BenchmarkConsumeDelivery: what the consume path costs per delivery,
// the runtime's consumer against raw amqp091-go on the same messages in
// the same process (issue 23: the consume path's glue):
//
//	go test -run '^$' -bench ConsumeDelivery -benchtime 10x ./runtime/
//
// Each op is one pair of drains of consumeBatch text messages published
// by the runtime (its envelope headers and a correlation id on each, as
// in production; the fill is untimed): one by raw amqp091-go (prefetch
// 256, a multiple ack every 64, as acemqbench's raw consume side), one
// by runtime.Consume (prefetch 256, an empty handler), in alternating
// order. A drain is measured from its first delivery to its last. The
// line reports, per delivery, the process's heap allocations
// (runtime.MemStats.Mallocs: every goroutine, the client's reader
// included, so the raw side's count is what amqp091-go itself costs) and
// CPU time (user + system) of each side, and their differences: what the
// runtime adds. Allocations are the deterministic measure (they move by
// a fraction of one between runs); the CPU follows the load.
func BenchmarkConsumeDelivery(b *testing.B) {
	queues := [2]string{brokertest.Queue(b, "bench.cd.raw"), brokertest.Queue(b, "bench.cd.rt")}
	_, ch := brokertest.Raw(b)
	for _, q := range queues {
		if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
			b.Fatal(err)
		}
	}
	u := brokertest.Require(b)
	raw, err := amqp.Dial(u)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = raw.Close() })
	conn := dial(b)
	publisher := dial(b)
	texts := make([]string, consumeBatch)
	for i := range texts {
		texts[i] = benchBody
	}
	ctx := context.Background()
	fill := func(q string) {
		if err := runtime.PublishBatch(ctx, publisher, textType, "", texts, runtime.WithRoutingKey(q), runtime.WithCorrelationID("conv-1")); err != nil {
			b.Fatal(err)
		}
	}
	// mark is called by each side at its first and last delivery.
	type mark struct {
		cpu     time.Duration
		mallocs uint64
	}
	now := func() mark {
		var ms goruntime.MemStats
		goruntime.ReadMemStats(&ms)
		return mark{cpu: cpuTime(), mallocs: ms.Mallocs}
	}
	drainRaw := func() (m0, m1 mark) {
		rch, err := raw.Channel()
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = rch.Close() }()
		if err := rch.Qos(256, 0, false); err != nil {
			b.Fatal(err)
		}
		ds, err := rch.Consume(queues[0], "", false, false, false, false, nil)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for d := range ds {
			n++
			if n == 1 {
				m0 = now()
			}
			if n%64 == 0 || n == consumeBatch {
				if err := d.Ack(true); err != nil {
					b.Fatal(err)
				}
			}
			if n == consumeBatch {
				m1 = now()
				break
			}
		}
		return m0, m1
	}
	drainRuntime := func() (m0, m1 mark) {
		var n atomic.Int64
		done := make(chan struct{})
		var cs *runtime.Consumer
		var err error
		// The consumer's goroutines carry side=runtime: go tool pprof
		// -tagfocus side=runtime splits them out of a -cpuprofile.
		pprof.Do(ctx, pprof.Labels("side", "runtime"), func(ctx context.Context) {
			cs, err = runtime.Consume(ctx, conn, runtime.ConsumerSpec{Queue: queues[1], Routes: []runtime.Route{
				runtime.Handle(textType, func(context.Context, *runtime.Message[string]) runtime.Ack {
					switch n.Add(1) {
					case 1:
						m0 = now()
					case consumeBatch:
						m1 = now()
						close(done)
					}
					return runtime.Accept()
				}),
			}}, runtime.WithPrefetch(256))
		})
		if err != nil {
			b.Fatal(err)
		}
		<-done
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := cs.Close(cctx); err != nil {
			b.Fatal(err)
		}
		return m0, m1
	}
	round := func(i int) (cpu time.Duration, mallocs uint64) {
		b.StopTimer()
		fill(queues[i])
		b.StartTimer()
		var m0, m1 mark
		if i == 0 {
			m0, m1 = drainRaw()
		} else {
			m0, m1 = drainRuntime()
		}
		return m1.cpu - m0.cpu, m1.mallocs - m0.mallocs
	}
	round(0) // warm: connections, channels
	round(1)
	var cpu [2]time.Duration
	var mallocs [2]uint64
	b.ResetTimer()
	for n := range b.N {
		for k := range 2 {
			i := (n + k) % 2
			c, m := round(i)
			cpu[i] += c
			mallocs[i] += m
		}
	}
	msgs := float64(b.N * (consumeBatch - 1))
	per := func(v float64) float64 { return v / msgs }
	b.ReportMetric(per(float64(mallocs[0])), "raw-allocs/msg")
	b.ReportMetric(per(float64(mallocs[1])), "rt-allocs/msg")
	b.ReportMetric(per(float64(mallocs[1])-float64(mallocs[0])), "added-allocs/msg")
	b.ReportMetric(per(float64(cpu[0].Nanoseconds())), "raw-cpu-ns/msg")
	b.ReportMetric(per(float64(cpu[1].Nanoseconds())), "rt-cpu-ns/msg")
	b.ReportMetric(per(float64(cpu[1].Nanoseconds()-cpu[0].Nanoseconds())), "added-cpu-ns/msg")
}

const consumeBatch = 2000
