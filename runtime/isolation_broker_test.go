package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
)

// A publish to a missing exchange is an error matching ErrExchangeNotFound
// and does not fail the publishes in flight beside it.
func TestMissingExchangeFailsOnlyItsOwnPublish(t *testing.T) {
	t.Parallel()
	ctx := ctxFor(t, 20*time.Second)
	c := dial(t)
	q := brokertest.Queue(t, "isolation")
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
	mt := runtime.NewTextType("isolation.v1")
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 7 {
				errs[i] = runtime.Publish(ctx, c, mt, "test.no.such.exchange", "lost")
				return
			}
			errs[i] = runtime.Publish(ctx, c, mt, "", fmt.Sprint("good ", i), runtime.WithRoutingKey(q))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if i == 7 {
			if !errors.Is(err, runtime.ErrExchangeNotFound) {
				t.Errorf("publish to a missing exchange: %v, want ErrExchangeNotFound", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("publish %d beside it: %v", i, err)
		}
	}
	if n, err := c.MessageCount(ctx, q); err != nil || n != 19 {
		t.Errorf("queue holds %d (%v), want 19", n, err)
	}
}

// An error pulling from one queue leaves the deliveries held from another
// queue unsettled and ackable.
func TestPullErrorLeavesOtherQueuesDeliveries(t *testing.T) {
	t.Parallel()
	ctx := ctxFor(t, 20*time.Second)
	c := dial(t)
	q := brokertest.Queue(t, "pulliso")
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
	if err := runtime.Publish(ctx, c, runtime.NewTextType("x"), "", "held", runtime.WithRoutingKey(q)); err != nil {
		t.Fatal(err)
	}
	held, err := c.Pull(ctx, q)
	if err != nil || held == nil {
		t.Fatalf("pull: %v, %v", held, err)
	}
	if _, err := c.Pull(ctx, q+".missing"); !errors.Is(err, runtime.ErrQueueNotFound) {
		t.Fatalf("pull from a missing queue: %v, want ErrQueueNotFound", err)
	}
	if err := held.Ack(ctx); err != nil {
		t.Fatalf("ack of the held delivery after another queue's error: %v", err)
	}
	if n, err := c.MessageCount(ctx, q); err != nil || n != 0 {
		t.Errorf("queue holds %d (%v), want 0: the ack settled it", n, err)
	}
}

// The broker cancels a subscription when its queue is deleted. The consumer
// resubscribes once the queue is back, and closes the dead channel rather
// than leaking it.
func TestConsumerSurvivesItsQueueBeingDeleted(t *testing.T) {
	t.Parallel()
	ctx := ctxFor(t, 60*time.Second)
	origin := brokertest.Name("cancelled")
	c := dial(t, runtime.WithOrigin(origin), runtime.WithReconnectBackoff(50*time.Millisecond, 200*time.Millisecond))
	q := brokertest.Queue(t, "cancelled")
	top := runtime.NewTopology().Queue(runtime.Queue{Name: q})
	declare(t, c, top)
	mt := runtime.NewTextType("cancelled.v1")
	got := make(chan string, 10)
	if _, err := runtime.Consume(ctx, c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
		runtime.Handle(mt, func(ctx context.Context, m *runtime.Message[string]) runtime.Ack {
			got <- m.Payload
			return runtime.Accept()
		}),
	}}); err != nil {
		t.Fatal(err)
	}
	_, raw := brokertest.Raw(t)
	for round := range 3 {
		if _, err := raw.QueueDelete(q, false, false, false); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		declare(t, c, top)
		body := fmt.Sprint("round ", round)
		if err := runtime.Publish(ctx, c, mt, "", body, runtime.WithRoutingKey(q)); err != nil {
			t.Fatal(err)
		}
		select {
		case b := <-got:
			if b != body {
				t.Fatalf("got %q, want %q", b, body)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: nothing consumed after the queue came back", round)
		}
	}
	// The publisher, the consumers' side channel and the live subscription.
	// The management API lists channels up to one stats interval (5s) late
	// in both directions: wait for it to see every channel opened above,
	// then for it to drop the closed ones.
	time.Sleep(6 * time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := brokertest.ChannelCount(t, origin)
		if n <= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the connection has %d channels after three cancelled subscriptions; want at most 3", n)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
