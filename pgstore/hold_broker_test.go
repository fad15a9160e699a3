package pgstore_test

import (
	"context"
	"fmt"
	"github.com/acemq/acemq-go/runtime/wire"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/pgstore"
	"github.com/acemq/acemq-go/pgstore/internal/pgtest"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// deadLetters records when each message reaches q.dlq, and its reason.
type deadLetters struct {
	mu  sync.Mutex
	at  []time.Duration
	why []string
}

// watchDeadLetters consumes q.dlq (auto-ack) from now on, each arrival
// timed from start.
func watchDeadLetters(t *testing.T, q string, start time.Time) *deadLetters {
	t.Helper()
	conn, err := amqp.Dial(acemqtest.Require(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	ds, err := ch.Consume(wire.DeadLetterQueue(q), "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	dl := &deadLetters{}
	go func() {
		for d := range ds {
			why, _ := d.Headers[wire.HeaderError].(string)
			dl.mu.Lock()
			dl.at, dl.why = append(dl.at, time.Since(start)), append(dl.why, why)
			dl.mu.Unlock()
		}
	}()
	return dl
}

// wait returns the arrivals once there are n of them, or what there is
// at the deadline.
func (dl *deadLetters) wait(n int, within time.Duration) ([]time.Duration, []string) {
	deadline := time.Now().Add(within)
	for {
		dl.mu.Lock()
		at, why := append([]time.Duration(nil), dl.at...), append([]string(nil), dl.why...)
		dl.mu.Unlock()
		if len(at) >= n || time.Now().After(deadline) {
			return at, why
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The inbox's hold under a database outage is counted from when the
// consumer received the delivery, not from its turn: a full prefetch (20)
// delivered at once to one worker, the database down, a 1s hold and no
// retry: every delivery is dead-lettered with ErrUnavailable within the
// hold (plus a margin for the tries after it), the last of the prefetch as
// the first, instead of one hold after another (1.8s, 3.6s, 5.3s, … for
// the 20th, 36s; with the defaults, hours past the broker's 30-minute
// consumer timeout).
func TestInboxHoldIsCountedFromReceipt(t *testing.T) {
	const n, hold, margin = 20, time.Second, time.Second
	pool, _ := newInbox(t)
	proxy := pgtest.NewProxy(t)
	schema := pool.Config().ConnConfig.RuntimeParams["search_path"]
	in, err := pgstore.NewInbox(pgtest.PoolAt(t, proxy.URL(), schema), pgstore.WithUnavailableHold(hold), pgstore.WithLogger(quiet()))
	if err != nil {
		t.Fatal(err)
	}
	conn := acemqtest.Dial(t, runtime.WithLogger(quiet()))
	q := acemqtest.Queue(t, "inbox-hold")
	ctx := ctxFor(t, time.Minute)
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
	proxy.Down()
	start := time.Now()
	dl := watchDeadLetters(t, q, start)
	cs, err := runtime.Consume(ctx, conn, runtime.ConsumerSpec{Queue: q, Retry: &policy, Routes: []runtime.Route{
		runtime.Handle(paymentType, func(context.Context, *runtime.Message[payment]) runtime.Ack {
			t.Error("handler called without a database")
			return runtime.Accept()
		})}}, runtime.WithMiddleware(in.Middleware()), runtime.WithPrefetch(n), runtime.WithConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(context.Background()) })
	at, why := dl.wait(n, hold+margin+3*time.Second)
	t.Logf("dead-lettered after %v", at)
	if len(at) != n {
		t.Fatalf("%d of %d dead-lettered %v after the consumer started (at %v); want all %d within %v", len(at), n, hold+margin+3*time.Second, at, n, hold+margin)
	}
	if last := at[n-1]; last > hold+margin || at[0] < hold {
		t.Errorf("the first dead-lettered at %v, the last (the %dth of the prefetch) at %v; want all in [%v, %v]: held from receipt", at[0], n, last, hold, hold+margin)
	}
	for i, w := range why {
		if !strings.Contains(w, pgstore.ErrUnavailable.Error()) || !strings.Contains(w, ": held ") {
			t.Errorf("dead letter %d: reason %q; want ErrUnavailable's, held …", i, w)
			break
		}
	}
}
