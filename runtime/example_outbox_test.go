package runtime_test

import (
	"context"
	"log"
	"sync"

	"github.com/acemq/acemq-go/runtime"
)

// memoryOutbox stands for an outbox's table: pgstore writes the same
// fields into PostgreSQL in the caller's transaction.
type memoryOutbox struct {
	mu   sync.Mutex
	rows []runtime.Outgoing
}

func (ob *memoryOutbox) add(o runtime.Outgoing) {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	ob.rows = append(ob.rows, o)
}

// relay publishes the stored rows in the order they were written and
// drops each once the broker has confirmed it.
func (ob *memoryOutbox) relay(ctx context.Context, c *runtime.Connection) error {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	for len(ob.rows) > 0 {
		p, err := c.PublishOutgoing(ctx, ob.rows[0])
		if err != nil {
			return err // a refused row (ErrInvalidMessage) is the store's to record
		}
		if err := p.Wait(ctx); err != nil {
			return err // sent again on the next pass: the consumer's inbox absorbs the copy
		}
		ob.rows = ob.rows[1:]
	}
	return nil
}

// An outbox store (pgstore is one) writes what NewOutgoing builds beside
// the application's own rows, then a relay sends it with PublishOutgoing:
// the message keeps the x-acemq-id, headers and trace context it was
// built with, however late it is sent.
func ExampleNewOutgoing() {
	ctx := context.Background()
	c, err := runtime.Dial(ctx, "amqp://guest:guest@localhost:5672/")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close(ctx)
	orderPlaced := runtime.NewJSONType[map[string]any]("order.placed", "")

	var ob memoryOutbox
	o, err := runtime.NewOutgoing(ctx, c, orderPlaced, "orders", map[string]any{"id": "o-1"},
		runtime.WithRoutingKey("order.placed"), runtime.WithOrderingKey("customer-7"))
	if err != nil {
		log.Fatal(err) // nothing stored: the value breaks its schema, or AMQP cannot carry it
	}
	ob.add(o) // in the application's transaction
	if err := ob.relay(ctx, c); err != nil {
		log.Print(err)
	}
}
