package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// TestRequestsExpiredInThePrefetchAreSkipped (issue 36, also-look-at):
// requests the broker delivered into a responder's prefetch before their
// callers gave up are not run once their deadline (their expiration,
// counted from when the consumer received them) has passed: settled
// without a reply, counted by acemq.request.expired, with
// WithRequesterCheck and without. The slow request ahead of them is
// answered.
func TestRequestsExpiredInThePrefetchAreSkipped(t *testing.T) {
	for _, check := range []bool{false, true} {
		t.Run(fmt.Sprintf("requester-check=%v", check), func(t *testing.T) {
			reader := sdkmetric.NewManualReader()
			c := dial(t, runtime.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
			var calls sync.Map
			opts := []runtime.ConsumeOption{runtime.WithConcurrency(1), runtime.WithPrefetch(10)}
			if check {
				opts = append(opts, runtime.WithRequesterCheck())
			}
			q := responder(t, c, func(ctx context.Context, m *runtime.Message[string]) (string, error) {
				calls.Store(m.Payload, true)
				if m.Payload == "slow" {
					time.Sleep(2 * time.Second)
				}
				return priced(ctx, m)
			}, opts...)
			r := requester(t, c)
			slow := make(chan error, 1)
			go func() {
				_, err := runtime.Request(ctxFor(t, wait), r, quoteReqType, quoteType, "", "slow", runtime.WithRoutingKey(q))
				slow <- err
			}()
			waitUntil(t, "the slow request running", func() bool { _, ok := calls.Load("slow"); return ok })
			const n = 4
			var timedOut atomic.Int64
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
					defer cancel()
					_, err := runtime.Request(ctx, r, quoteReqType, quoteType, "", fmt.Sprint("quick-", i), runtime.WithRoutingKey(q))
					if errors.Is(err, context.DeadlineExceeded) {
						timedOut.Add(1)
					}
				})
			}
			wg.Wait()
			if err := <-slow; err != nil {
				t.Fatalf("the slow request: %v", err)
			}
			if timedOut.Load() != n {
				t.Fatalf("%d of %d quick requests timed out behind the slow one; the test needs them all to", timedOut.Load(), n)
			}
			cs := consumerOf(t, q)
			waitUntil(t, "every request settled", func() bool { return cs.Stats().Handled["accepted"] == n+1 })
			for i := range n {
				if _, ran := calls.Load(fmt.Sprint("quick-", i)); ran {
					t.Errorf("quick-%d ran after its caller's deadline had passed", i)
				}
			}
			expired, _ := points(t, reader, wire.MetricRequestsExpired)
			if k := queueKey(q); expired[k] != n {
				t.Errorf("%s = %v, want {%s: %d}", wire.MetricRequestsExpired, expired, k, n)
			}
			time.Sleep(200 * time.Millisecond)
			if late := r.LateReplies(); late != 0 {
				t.Errorf("LateReplies = %d: expired requests were answered", late)
			}
			waitDepth(t, q, 0, wait)
		})
	}
}
