package runtime_test

import (
	"context"
	"errors"
	"log"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

// A publish during an outage, a restart or a memory alarm fails with an
// error matching ErrUnavailable (ErrBlocked during an alarm): a window, not
// a state. Retry it with backoff, within the caller's own deadline.
func ExampleErrUnavailable() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := runtime.Dial(ctx, "amqp://guest:guest@localhost:5672/")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)
	orders := runtime.NewTextType("orders.placed.v1")

	wait := 50 * time.Millisecond
	for {
		err := runtime.Publish(ctx, conn, orders, "", "order 42", runtime.WithRoutingKey("orders.new"))
		if err == nil {
			break
		}
		if !errors.Is(err, runtime.ErrUnavailable) {
			log.Fatal(err) // not the broker's absence: unroutable, invalid, …
		}
		if errors.Is(err, runtime.ErrBlocked) {
			log.Print("the broker is out of memory or disk; waiting: ", err)
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			log.Fatal(err)
		}
		wait = min(wait*2, 2*time.Second)
	}
}

// A consumer whose handler may crash the process on some message: after 5
// redeliveries the message is parked with a reason instead of coming back
// for ever. A short heartbeat notices a network that stalls silently
// within seconds.
func ExampleWithRedeliveryLimit() {
	ctx := context.Background()
	conn, err := runtime.Dial(ctx, "amqp://guest:guest@localhost:5672/", runtime.WithHeartbeat(5*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)
	orders := runtime.NewTextType("orders.placed.v1")
	cs, err := runtime.Consume(ctx, conn, runtime.ConsumerSpec{Queue: "orders.new", Routes: []runtime.Route{
		runtime.Handle(orders, func(ctx context.Context, m *runtime.Message[string]) runtime.Ack {
			return runtime.Accept()
		}),
	}}, runtime.WithRedeliveryLimit(5))
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close(ctx)
}
