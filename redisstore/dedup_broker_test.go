package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/acemq/acemq-go/runtime/wire"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/redisstore"
	"github.com/acemq/acemq-go/redisstore/internal/redistest"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/redis/go-redis/v9"
)

type payment struct {
	ID string `json:"id"`
}

var paymentType = runtime.NewJSONType[payment]("payment.v1", `{"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}`)

// rawChannel is a channel of an amqp091-go connection of the test's own,
// closed at cleanup, for publishing as a foreign producer would.
func rawChannel(t *testing.T) *amqp.Channel {
	t.Helper()
	raw, err := amqp.Dial(acemqtest.Require(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = raw.Close() })
	ch, err := raw.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// publishPayment publishes a payment with x-acemq-id id to queue q.
func publishPayment(t *testing.T, ch *amqp.Channel, q, id string) {
	t.Helper()
	err := ch.PublishWithContext(context.Background(), "", q, false, false, amqp.Publishing{Type: "payment.v1", ContentType: "application/json",
		Headers: amqp.Table{wire.HeaderID: id}, Body: []byte(`{"id": "P-1"}`)})
	if err != nil {
		t.Fatal(err)
	}
}

// On the broker, through the middleware: one x-acemq-id published twice
// runs the handler once; the second copy is acked and counted.
func TestDedupMiddlewareOnTheBroker(t *testing.T) {
	_, d := newDedup(t)
	conn := acemqtest.Dial(t)
	q := acemqtest.Queue(t, "dedup")
	ctx := context.Background()
	if err := conn.Declare(ctx, runtime.NewTopology().Queue(runtime.Queue{Name: q})); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	cs, err := runtime.Consume(ctx, conn, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
		runtime.Handle(paymentType, func(ctx context.Context, m *runtime.Message[payment]) runtime.Ack {
			calls.Add(1)
			return runtime.Accept()
		})}}, runtime.WithMiddleware(d.Middleware()))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	ch := rawChannel(t)
	for i := 0; i < 2; i++ {
		publishPayment(t, ch, q, "dup-1")
	}
	waitFor(t, func() bool { s := d.Stats(); return s.Handled+s.Duplicates == 2 })
	if s := d.Stats(); calls.Load() != 1 || s.Handled != 1 || s.Duplicates != 1 {
		t.Errorf("handler calls %d, Stats %+v; want 1, {1 1}", calls.Load(), s)
	}
}

// Redis goes away under a consumer and comes back (a proxy in front of the
// real Redis is cut, never Redis itself): the deliveries that arrive
// meanwhile are held, their handler not called, nothing dead-lettered or
// parked, Ready failing; once Redis answers they are handled, each id's
// effect exactly once (the copies published during the outage and after
// it acked as duplicates), none lost.
func TestDedupHoldsDeliveriesThroughARedisOutage(t *testing.T) {
	proxy := redistest.NewProxy(t)
	_, prefix := redistest.Client(t) // the prefix's keys deleted at cleanup
	// go-redis's own timeouts (3 s a read): a shorter one, under load,
	// loses a handled marker now and then, and its copy rightly runs the
	// handler again (at least once, as documented) where this test
	// counts effects.
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr(), MaxRetries: -1})
	defer rdb.Close()
	d, err := redisstore.NewDedup(rdb, redisstore.WithPrefix(prefix), redisstore.WithUnavailableHold(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	conn := acemqtest.Dial(t)
	q := acemqtest.Queue(t, "dedup-outage")
	ctx := context.Background()
	if err := conn.Declare(ctx, runtime.NewTopology().Queue(runtime.Queue{Name: q})); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	effects := map[string]int{}
	cs, err := runtime.Consume(ctx, conn, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
		runtime.Handle(paymentType, func(ctx context.Context, m *runtime.Message[payment]) runtime.Ack {
			mu.Lock()
			effects[m.Envelope.ID]++
			mu.Unlock()
			return runtime.Accept()
		})}}, runtime.WithMiddleware(d.Middleware()), runtime.WithConcurrency(4))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	ch := rawChannel(t)
	publish := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			publishPayment(t, ch, q, fmt.Sprintf("pay-%03d", i))
		}
	}
	handled := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(effects)
	}
	publish(0, 50)
	waitFor(t, func() bool { return d.Stats().Handled == 50 })

	proxy.Cut()
	publish(50, 100) // new ids, held
	publish(0, 10)   // copies of handled ids, held too: Redis must say so
	time.Sleep(1500 * time.Millisecond)
	if n := handled(); n != 50 {
		t.Fatalf("%d ids handled during the outage; want the 50 from before it (the rest held)", n)
	}
	if err := d.Ready(); !errors.Is(err, redisstore.ErrUnavailable) {
		t.Errorf("Ready() during the outage = %v; want ErrUnavailable", err)
	}
	for _, side := range []string{wire.DeadLetterQueue(q), wire.ParkedQueue(q)} {
		if st, err := ch.QueueDeclarePassive(side, true, false, false, false, nil); err != nil || st.Messages != 0 {
			t.Errorf("%s during the outage: %d messages (%v); want 0", side, st.Messages, err)
		}
	}
	conns := proxy.Conns()

	proxy.Restore()
	waitFor(t, func() bool { s := d.Stats(); return s.Handled == 100 && s.Duplicates == 10 })
	publish(90, 100) // copies after the outage
	waitFor(t, func() bool { return d.Stats().Duplicates == 20 })
	mu.Lock()
	defer mu.Unlock()
	for i := range 100 {
		if id := fmt.Sprintf("pay-%03d", i); effects[id] != 1 {
			t.Errorf("%s: %d effects; want 1", id, effects[id])
		}
	}
	if len(effects) != 100 {
		t.Errorf("%d ids handled; want 100", len(effects))
	}
	if err := d.Ready(); err != nil {
		t.Errorf("Ready() after the outage = %v; want nil", err)
	}
	// Held, not retried: every delivery settled once, by its Accept.
	if st := cs.Stats(); st.Handled["accepted"] != 120 || st.Handled["retried"] != 0 {
		t.Errorf("consumer outcomes %v; want 120 accepted, none retried", st.Handled)
	}
	if proxy.Conns() <= conns {
		t.Errorf("no new connection to Redis after the outage (%d forwarded)", proxy.Conns())
	}
	for _, side := range []string{wire.DeadLetterQueue(q), wire.ParkedQueue(q)} {
		if st, err := ch.QueueDeclarePassive(side, true, false, false, false, nil); err != nil || st.Messages != 0 {
			t.Errorf("%s after the outage: %d messages (%v); want 0", side, st.Messages, err)
		}
	}
}
