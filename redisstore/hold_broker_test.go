package redisstore_test

import (
	"context"
	"fmt"
	"github.com/acemq/acemq-go/runtime/wire"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/redisstore"
	"github.com/acemq/acemq-go/redisstore/internal/redistest"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
	"github.com/redis/go-redis/v9"
)

// The dedup's hold under a Redis outage is counted from when the consumer
// received the delivery, not from its turn: a full prefetch (20)
// delivered at once to one worker, Redis cut (a proxy of the test's own
// in front of it), a 1s hold and no retry: every delivery is
// dead-lettered with ErrUnavailable within the hold (plus a margin for
// the tries after it), the last of the prefetch as the first, instead of
// one hold after another (1.8s, 3.5s, 5.3s, … for the 20th, 36s).
func TestDedupHoldIsCountedFromReceipt(t *testing.T) {
	const n, hold, margin = 20, time.Second, time.Second
	proxy := redistest.NewProxy(t)
	_, prefix := redistest.Client(t)
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr(), MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	d, err := redisstore.NewDedup(rdb, redisstore.WithPrefix(prefix), redisstore.WithUnavailableHold(hold))
	if err != nil {
		t.Fatal(err)
	}
	conn := acemqtest.Dial(t)
	q := acemqtest.Queue(t, "dedup-hold")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	policy := runtime.NoRetry()
	if err := conn.Declare(ctx, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: policy, DeadLetter: true})); err != nil {
		t.Fatal(err)
	}
	batch := make([]payment, n)
	for i := range batch {
		batch[i] = payment{ID: fmt.Sprintf("P-%02d", i)}
	}
	if err := runtime.PublishBatch(ctx, conn, paymentType, "", batch, runtime.WithRoutingKey(q)); err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	ch := rawChannel(t)
	arrivals, err := ch.Consume(wire.DeadLetterQueue(q), "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var mu sync.Mutex
	var at []time.Duration
	var why []string
	go func() {
		for m := range arrivals {
			w, _ := m.Headers[wire.HeaderError].(string)
			mu.Lock()
			at, why = append(at, time.Since(start)), append(why, w)
			mu.Unlock()
		}
	}()
	cs, err := runtime.Consume(ctx, conn, runtime.ConsumerSpec{Queue: q, Retry: &policy, Routes: []runtime.Route{
		runtime.Handle(paymentType, func(context.Context, *runtime.Message[payment]) runtime.Ack {
			t.Error("handler called without Redis")
			return runtime.Accept()
		})}}, runtime.WithMiddleware(d.Middleware()), runtime.WithPrefetch(n), runtime.WithConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(context.Background()) })
	within := hold + margin + 3*time.Second
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		got := len(at)
		mu.Unlock()
		if got >= n {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("dead-lettered after %v", at)
	if len(at) != n {
		t.Fatalf("%d of %d dead-lettered %v after the consumer started (at %v); want all %d within %v", len(at), n, within, at, n, hold+margin)
	}
	if last := at[n-1]; last > hold+margin || at[0] < hold {
		t.Errorf("the first dead-lettered at %v, the last (the %dth of the prefetch) at %v; want all in [%v, %v]: held from receipt", at[0], n, last, hold, hold+margin)
	}
	for i, w := range why {
		if !strings.Contains(w, redisstore.ErrUnavailable.Error()) {
			t.Errorf("dead letter %d: reason %q; want ErrUnavailable's", i, w)
			break
		}
	}
}
