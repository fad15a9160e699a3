package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/redisstore"
	"github.com/acemq/acemq-go/redisstore/internal/redistest"
	"github.com/acemq/acemq-go/runtime"
	"github.com/redis/go-redis/v9"
)

func newDedup(t *testing.T, opts ...redisstore.Option) (*redis.Client, *redisstore.Dedup) {
	t.Helper()
	rdb, prefix := redistest.Client(t)
	d, err := redisstore.NewDedup(rdb, append([]redisstore.Option{redisstore.WithPrefix(prefix)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return rdb, d
}

func accept(n *atomic.Int32) func(context.Context) runtime.Ack {
	return func(context.Context) runtime.Ack { n.Add(1); return runtime.Accept() }
}

func TestDedupHandlesAnIDOnceAndKeepsItForTheTTL(t *testing.T) {
	rdb, d := newDedup(t, redisstore.WithTTL(time.Hour))
	ctx := context.Background()
	var calls atomic.Int32
	for i := 0; i < 3; i++ {
		if ack := d.Process(ctx, "payments", "id-1", accept(&calls)); ack.Kind() != runtime.AckAccept {
			t.Fatalf("delivery %d: %v", i+1, ack)
		}
	}
	if calls.Load() != 1 || d.Stats() != (redisstore.Stats{Handled: 1, Duplicates: 2}) {
		t.Errorf("calls %d, Stats %+v; want 1, {1 2}", calls.Load(), d.Stats())
	}
	key := d.Key("payments", "id-1")
	if ttl := rdb.TTL(ctx, key).Val(); ttl < 59*time.Minute || ttl > time.Hour {
		t.Errorf("TTL of %s = %v; want about 1h", key, ttl)
	}
	if v := rdb.Get(ctx, key).Val(); v != "done" {
		t.Errorf("%s = %q; want done", key, v)
	}
}

// Anything but Accept, or a panic, frees the id: the retry runs, and its
// effect (not atomic with the marker) happens again.
func TestDedupFreesTheIDOnFailure(t *testing.T) {
	_, d := newDedup(t)
	ctx := context.Background()
	var effects atomic.Int32
	func() {
		defer func() { _ = recover() }()
		d.Process(ctx, "payments", "id-p", func(context.Context) runtime.Ack {
			effects.Add(1) // the effect happened, then the process failed
			panic("after the effect")
		})
	}()
	if ack := d.Process(ctx, "payments", "id-r", func(context.Context) runtime.Ack { return runtime.Retry(errors.New("no")) }); ack.Kind() != runtime.AckRetry {
		t.Fatalf("Retry became %v", ack)
	}
	d.Process(ctx, "payments", "id-p", accept(&effects))
	var again atomic.Int32
	d.Process(ctx, "payments", "id-r", accept(&again))
	if effects.Load() != 2 || again.Load() != 1 {
		t.Errorf("effects %d (want 2: the store is not atomic with them), retried handler calls %d (want 1)", effects.Load(), again.Load())
	}
}

// Two deliveries of one id at once: the second waits for the first's
// lease; a duplicate once the first is marked, run once the first failed.
func TestDedupConcurrentDeliveriesDoNotBothRun(t *testing.T) {
	for _, first := range []runtime.Ack{runtime.Accept(), runtime.Retry(errors.New("first failed"))} {
		t.Run(first.Kind().String(), func(t *testing.T) {
			_, d := newDedup(t)
			ctx := context.Background()
			var calls, running atomic.Int32
			release := make(chan struct{})
			handle := func(context.Context) runtime.Ack {
				if running.Add(1) != 1 {
					t.Error("two handlers of one id ran at once")
				}
				defer running.Add(-1)
				if calls.Add(1) == 1 {
					<-release
					return first
				}
				return runtime.Accept()
			}
			done1, done2 := make(chan runtime.Ack, 1), make(chan runtime.Ack, 1)
			go func() { done1 <- d.Process(ctx, "payments", "id-x", handle) }()
			waitFor(t, func() bool { return calls.Load() == 1 })
			go func() { done2 <- d.Process(ctx, "payments", "id-x", handle) }()
			time.Sleep(200 * time.Millisecond) // the second is polling the lease
			if calls.Load() != 1 {
				t.Fatal("the second delivery ran while the first held the lease")
			}
			close(release)
			a1, a2 := <-done1, <-done2
			want := map[runtime.AckKind]int32{runtime.AckAccept: 1, runtime.AckRetry: 2}[first.Kind()]
			if a1.Kind() != first.Kind() || a2.Kind() != runtime.AckAccept || calls.Load() != want {
				t.Errorf("acks %v %v, calls %d; want %v Accept, %d", a1, a2, calls.Load(), first, want)
			}
		})
	}
}

// A process that died holding a lease (its key left with its token) loses
// nothing: once the lease expires the redelivery runs.
func TestDedupALeaseOfADeadProcessExpires(t *testing.T) {
	rdb, d := newDedup(t, redisstore.WithLease(300*time.Millisecond))
	ctx := context.Background()
	key := d.Key("payments", "id-dead")
	if err := rdb.Set(ctx, key, "token-of-a-dead-process", 300*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	if ack := d.Process(ctx, "payments", "id-dead", accept(&calls)); ack.Kind() != runtime.AckAccept || calls.Load() != 1 {
		t.Fatalf("after the dead lease: %v, calls %d; want Accept, 1", ack, calls.Load())
	}
}

func TestDedupParksAMessageWithoutID(t *testing.T) {
	_, d := newDedup(t)
	ack := d.Process(context.Background(), "payments", "", func(context.Context) runtime.Ack {
		t.Error("handler called")
		return runtime.Accept()
	})
	if ack.Kind() != runtime.AckPark || !errors.Is(ack.Err(), redisstore.ErrNoMessageID) {
		t.Fatalf("%v; want Park(ErrNoMessageID)", ack)
	}
}

// Redis that does not answer holds the delivery (Ready says so), then
// retries it past WithUnavailableHold.
func TestDedupRedisDownHoldsThenRetries(t *testing.T) {
	redistest.Require(t)
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer rdb.Close()
	d, err := redisstore.NewDedup(rdb, redisstore.WithUnavailableHold(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan runtime.Ack, 1)
	go func() {
		done <- d.Process(context.Background(), "payments", "id", func(context.Context) runtime.Ack {
			t.Error("handler called without Redis")
			return runtime.Accept()
		})
	}()
	waitFor(t, func() bool { return d.Ready() != nil })
	ack := <-done
	if ack.Kind() != runtime.AckRetry || !errors.Is(ack.Err(), redisstore.ErrUnavailable) {
		t.Fatalf("%v; want Retry wrapping ErrUnavailable", ack)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 30s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Queue names may hold ':' (AMQP allows any), and the key joins the
// consumer and the id with one: (a:b, c) and (a, b:c) are two ids of two
// consumers, each handled once, under two keys; a consumer without ':'
// or '%' keeps the key it had (<prefix><consumer>:<id>).
func TestDedupKeysOfConsumersWithAColonDoNotCollide(t *testing.T) {
	_, d := newDedup(t)
	ctx := context.Background()
	pairs := [][2]string{{"orders:eu", "42"}, {"orders", "eu:42"}, {"orders:eu:42", ""}, {"orders%3Aeu", "42"}, {"orders%", "3Aeu:42"}}
	keys := map[string][2]string{}
	for _, p := range pairs {
		k := d.Key(p[0], p[1])
		if other, ok := keys[k]; ok {
			t.Errorf("Key(%q, %q) = Key(%q, %q) = %q", p[0], p[1], other[0], other[1], k)
		}
		keys[k] = p
	}
	for _, p := range pairs[:2] {
		var calls atomic.Int32
		if ack := d.Process(ctx, p[0], p[1], accept(&calls)); ack.Kind() != runtime.AckAccept || calls.Load() != 1 {
			t.Errorf("Process(%q, %q): %v, handler calls %d; want Accept, 1 (another consumer's id)", p[0], p[1], ack, calls.Load())
		}
	}
	if s := d.Stats(); s.Handled != 2 || s.Duplicates != 0 {
		t.Errorf("Stats %+v; want 2 handled, no duplicate", s)
	}
	if got, want := d.Key("payments", "id-1"), strings.TrimSuffix(d.Key("x", "y"), "x:y")+"payments:id-1"; got != want {
		t.Errorf("Key(payments, id-1) = %q; want %q, as before", got, want)
	}
}

// A handler that outlives its lease keeps it: the lease is renewed while
// the handler runs, so a second delivery of the id (a redelivery after a
// lost channel, a copy) that comes after the lease's first term waits for
// it, and is a duplicate once it is marked, instead of running beside it.
// The lease still expires once its process is gone
// (TestDedupALeaseOfADeadProcessExpires).
func TestDedupLeaseIsRenewedWhileTheHandlerRuns(t *testing.T) {
	const lease = 300 * time.Millisecond
	rdb, d := newDedup(t, redisstore.WithLease(lease))
	ctx := context.Background()
	var calls, running atomic.Int32
	handle := func(context.Context) runtime.Ack {
		if running.Add(1) != 1 {
			t.Error("two handlers of one id ran at once")
		}
		defer running.Add(-1)
		if calls.Add(1) == 1 {
			time.Sleep(4 * lease)
		}
		return runtime.Accept()
	}
	done1, done2 := make(chan runtime.Ack, 1), make(chan runtime.Ack, 1)
	go func() { done1 <- d.Process(ctx, "payments", "id-long", handle) }()
	waitFor(t, func() bool { return calls.Load() == 1 })
	time.Sleep(2 * lease)
	if ttl := rdb.PTTL(ctx, d.Key("payments", "id-long")).Val(); ttl <= 0 {
		t.Errorf("the lease's TTL two leases into the handler: %v; want it renewed", ttl)
	}
	go func() { done2 <- d.Process(ctx, "payments", "id-long", handle) }()
	a1, a2 := <-done1, <-done2
	if a1.Kind() != runtime.AckAccept || a2.Kind() != runtime.AckAccept || calls.Load() != 1 {
		t.Errorf("acks %v %v, handler calls %d; want Accept, Accept (a duplicate), 1", a1, a2, calls.Load())
	}
	if s := d.Stats(); s.Handled != 1 || s.Duplicates != 1 {
		t.Errorf("Stats %+v; want 1 handled, 1 duplicate", s)
	}
}
