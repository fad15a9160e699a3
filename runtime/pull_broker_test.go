package runtime_test

// Pull and MessageCount, against the broker: an unsettled delivery that an
// operator can read and that goes back to its queue if nobody settles it.

import (
	"errors"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

func TestPullReturnsToQueueOnClose(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "pull")
	rawQueue(t, q, nil)
	rawPublish(t, q, textMessage("dead letter", amqp.Table{
		wire.HeaderError: "gave up after 4 attempts: down", wire.HeaderID: "id-9",
		wire.HeaderAttempt: int64(4), wire.HeaderQueue: "orders.new",
	}))
	puller := dial(t)
	observer := dial(t)
	ctx := ctxFor(t, 20*time.Second)

	d, err := puller.Pull(ctx, q)
	if err != nil || d == nil {
		t.Fatalf("Pull = %v, %v; want a delivery", d, err)
	}
	if got, _ := d.Headers[wire.HeaderError].(string); got != "gave up after 4 attempts: down" {
		t.Errorf("Delivery.Headers[x-acemq-error] = %q: Pull keeps every header", got)
	}
	if d.Envelope.Error != "gave up after 4 attempts: down" || d.Envelope.ID != "id-9" || d.Envelope.Attempt != 4 || d.Envelope.Queue != "orders.new" {
		t.Errorf("Delivery.Envelope = %+v", d.Envelope)
	}
	if string(d.Body) != "dead letter" || d.RoutingKey != q {
		t.Errorf("Delivery body %q routing key %q", d.Body, d.RoutingKey)
	}

	// Unsettled: not ready any more, and the queue reads as empty.
	if n, err := observer.MessageCount(ctx, q); err != nil || n != 0 {
		t.Errorf("MessageCount while pulled = %d, %v; want 0", n, err)
	}
	if again, err := puller.Pull(ctx, q); err != nil || again != nil {
		t.Errorf("second Pull = %v, %v; want nil, nil on an empty queue", again, err)
	}

	if err := puller.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	n, err := observer.MessageCount(ctx, q)
	for (err != nil || n != 1) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		n, err = observer.MessageCount(ctx, q)
	}
	if err != nil || n != 1 {
		t.Errorf("after the puller closed MessageCount = %d, %v; want the delivery back (1)", n, err)
	}
}

func TestPullAckNack(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "pull.settle")
	rawQueue(t, q, nil)
	c := dial(t)
	ctx := ctxFor(t, 20*time.Second)
	if d, err := c.Pull(ctx, q); err != nil || d != nil {
		t.Fatalf("Pull on an empty queue = %v, %v; want nil, nil", d, err)
	}
	publishText(t, c, q, "one")
	publishText(t, c, q, "two")
	waitDepth(t, q, 2, 5*time.Second)

	d, err := c.Pull(ctx, q)
	if err != nil || d == nil {
		t.Fatalf("Pull: %v %v", d, err)
	}
	if err := d.Nack(ctx, true); err != nil {
		t.Fatalf("Nack(requeue): %v", err)
	}
	waitDepth(t, q, 2, 5*time.Second)

	for range 2 {
		d, err := c.Pull(ctx, q)
		if err != nil || d == nil {
			t.Fatalf("Pull: %v %v", d, err)
		}
		if err := d.Ack(ctx); err != nil {
			t.Fatalf("Ack: %v", err)
		}
	}
	if n, err := c.MessageCount(ctx, q); err != nil || n != 0 {
		t.Errorf("after acking both MessageCount = %d, %v", n, err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	if n := depth(t, q); n != 0 {
		t.Errorf("acked deliveries came back after Close: %d", n)
	}
}

func TestMessageCountMissingQueue(t *testing.T) {
	t.Parallel()
	c := dial(t)
	ctx := ctxFor(t, 10*time.Second)
	missing := brokertest.Name("missing")
	if _, err := c.MessageCount(ctx, missing); !errors.Is(err, runtime.ErrQueueNotFound) {
		t.Errorf("MessageCount of a missing queue = %v, want ErrQueueNotFound", err)
	}
	if _, err := c.Pull(ctx, missing); !errors.Is(err, runtime.ErrQueueNotFound) {
		t.Errorf("Pull of a missing queue = %v, want ErrQueueNotFound", err)
	}
	// The connection still works afterwards.
	q := brokertest.Queue(t, "count")
	rawQueue(t, q, nil)
	publishText(t, c, q, "x")
	if n, err := c.MessageCount(ctx, q); err != nil || n != 1 {
		t.Errorf("MessageCount = %d, %v; want 1", n, err)
	}
}
