package runtime_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/internal/brokertest"
	"github.com/acemq/acemq-go/runtime"
)

// downRegistry answers Schema with ErrRegistryUnavailable its first times.
type downRegistry struct {
	*runtime.MemoryRegistry
	failures atomic.Int32
}

func (r *downRegistry) Schema(ctx context.Context, id int) (string, error) {
	if r.failures.Add(-1) >= 0 {
		return "", fmt.Errorf("registry.example: connection refused: %w", runtime.ErrRegistryUnavailable)
	}
	return r.MemoryRegistry.Schema(ctx, id)
}

type outageOrder struct {
	ID string `avro:"id"`
}

// A registry outage is not the body's fault: the message goes back to its
// queue and is handled once the registry answers, never parked.
func TestRegistryOutageReturnsTheMessageInsteadOfParking(t *testing.T) {
	t.Parallel()
	ctx := ctxFor(t, 30*time.Second)
	shared := runtime.NewMemoryRegistry()
	down := &downRegistry{MemoryRegistry: shared}
	down.failures.Store(2)
	pub := dial(t, runtime.WithSchemaRegistry(shared))
	sub := dial(t, runtime.WithSchemaRegistry(down))

	q := brokertest.Queue(t, "regdown")
	declare(t, pub, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
	mt := runtime.AvroType[outageOrder]("outage.order.v1", "outage-orders",
		`{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}`)
	got := make(chan string, 1)
	if _, err := runtime.Consume(ctx, sub, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
		runtime.Handle(mt, func(ctx context.Context, m *runtime.Message[outageOrder]) runtime.Ack {
			got <- m.Payload.ID
			return runtime.Accept()
		}),
	}}); err != nil {
		t.Fatal(err)
	}
	if err := runtime.Publish(ctx, pub, mt, "", outageOrder{ID: "A-1"}, runtime.WithRoutingKey(q)); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-got:
		if id != "A-1" {
			t.Fatalf("handled %q, want A-1", id)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the message was not handled once the registry answered")
	}
	if left := down.failures.Load(); left > 0 {
		t.Fatalf("the registry still had %d failures to give: the outage was never met", left)
	}
	if n, err := sub.MessageCount(ctx, runtime.ParkedQueue(q)); err != nil || n != 0 {
		t.Fatalf("%s holds %d (%v), want 0: an outage parks nothing", runtime.ParkedQueue(q), n, err)
	}
}
