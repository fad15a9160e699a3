package runtime_test

// BenchmarkRetryAcks counts what the ack slack changes on the broker's
// side of R1 (bench/NOTES.md): the basic.acks a consumer sends, and
// how many of them are single acks, each a walk of the channel's unacked
// list on the broker. A count is not a timing, so it reads the same on a
// loaded machine:
//
//	go test -run '^$' -bench RetryAcks -benchtime 3x ./runtime/

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
)

// BenchmarkRetryAcks: 2000 messages, one in ten retried once after
// 500 ms (Fixed(2, 500ms): held in memory or spilled to q.retry.1s),
// consumed at prefetch 256 with the ack slack off (WithAckSlack(0), the
// behaviour before the slack was the default), at the default (64) and at
// 256. It reports acks/msg and single-acks/msg (acks sent
// over the 2200 deliveries' settlements, counted by the test hook) and
// ns/msg.
func BenchmarkRetryAcks(b *testing.B) {
	const n, prefetch = 2000, 256
	policy := runtime.Fixed(2, 500*time.Millisecond)
	for _, tc := range []struct {
		name string
		opts []runtime.ConsumeOption
	}{
		{"slack=0", []runtime.ConsumeOption{runtime.WithAckSlack(0)}},
		{"slack=default", nil},
		{"slack=256", []runtime.ConsumeOption{runtime.WithAckSlack(256)}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := dial(b)
			q := brokertest.Queue(b, "bench.retryacks")
			declare(b, c, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: policy}))
			bodies := make([]string, n)
			failing := 0
			for i := range bodies {
				bodies[i] = fmt.Sprintf("ok-%04d", i)
				if i%10 == 0 {
					bodies[i], failing = fmt.Sprintf("fail-%04d", i), failing+1
				}
			}
			var acks, singles atomic.Int64
			sent := func(_ uint64, multiple bool) {
				acks.Add(1)
				if !multiple {
					singles.Add(1)
				}
			}
			var elapsed time.Duration
			for b.Loop() {
				b.StopTimer()
				for i := 0; i < n; i += 500 {
					if err := runtime.PublishBatch(ctxFor(b, 30*time.Second), c, textType, "", bodies[i:i+500], runtime.WithRoutingKey(q)); err != nil {
						b.Fatalf("PublishBatch: %v", err)
					}
				}
				var handled atomic.Int64
				done := make(chan struct{})
				h := func(_ context.Context, m *runtime.Message[string]) runtime.Ack {
					if strings.HasPrefix(m.Payload, "fail-") && m.Envelope.Attempt == 1 {
						return runtime.Retry(errors.New("bench: fails once"))
					}
					if handled.Add(1) == int64(n) {
						close(done)
					}
					return runtime.Accept()
				}
				opts := append([]runtime.ConsumeOption{runtime.WithPrefetch(prefetch), runtime.WithAckSlackWaitForTest(0, sent)}, tc.opts...)
				b.StartTimer()
				start := time.Now()
				cs, err := runtime.Consume(ctxFor(b, 10*time.Second), c, runtime.ConsumerSpec{Queue: q, Retry: &policy,
					Routes: []runtime.Route{runtime.Handle(textType, h)}}, opts...)
				if err != nil {
					b.Fatalf("Consume: %v", err)
				}
				select {
				case <-done:
				case <-time.After(2 * time.Minute):
					b.Fatalf("%d of %d accepted after 2 minutes", handled.Load(), n)
				}
				elapsed += time.Since(start)
				b.StopTimer()
				if err := cs.Close(ctxFor(b, 30*time.Second)); err != nil {
					b.Fatalf("Close: %v", err)
				}
				b.StartTimer()
			}
			settled := float64(b.N * (n + failing))
			b.ReportMetric(float64(acks.Load())/settled, "acks/msg")
			b.ReportMetric(float64(singles.Load())/settled, "single-acks/msg")
			b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N*n), "ns/msg")
		})
	}
}
