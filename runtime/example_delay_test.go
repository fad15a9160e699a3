package runtime_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/wire"
)

// "Remind me in 3 days": the topology declares the delay levels (once per
// broker, whoever declares them), and the publish goes into level 17
// (259200 s is 2^17 + …) with the bits of its delay in the routing key; the
// broker delivers it to "orders" with the routing key order.remind 3 days
// later. Publish returns once level 17 holds it.
func ExampleWithDelay() {
	ctx := context.Background()
	conn, err := runtime.Dial(ctx, "amqp://guest:guest@localhost:5672/")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)
	top := runtime.NewTopology().Exchange("orders", "topic")
	top.Delay = runtime.Classic // or runtime.Quorum: at-least-once levels
	if err := conn.Declare(ctx, top); err != nil {
		log.Fatal(err)
	}
	err = runtime.Publish(ctx, conn, orderPlaced, "orders", OrderPlaced{OrderID: "A-1"},
		runtime.WithRoutingKey("order.remind"), runtime.WithDelay(72*time.Hour))
	if err != nil {
		log.Fatal(err)
	}
}

// The delay topology as data: 28 levels and the delivery exchange, and
// the binding of the delivery exchange to each of the topology's exchanges.
func ExampleTopology_Declarations_delay() {
	top := runtime.NewTopology().Exchange("orders", "topic")
	top.Delay = runtime.Classic
	d, err := top.Declarations()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(d.Exchanges), "exchanges,", len(d.Queues), "queues")
	for _, q := range d.Queues[len(d.Queues)-2:] {
		fmt.Println("queue", q.Name, q.Arguments)
	}
	last := d.ExchangeBindings[len(d.ExchangeBindings)-1]
	fmt.Printf("binding %s -> exchange %s (%s)\n", last.Exchange, last.ToExchange, last.RoutingKey)
	s, _ := wire.DelaySeconds(72 * time.Hour)
	fmt.Println(wire.DelayLevel(wire.DelayPrefix, wire.DelayTopLevel(s)), wire.DelayRoutingKey(s, "orders"))
	// Output:
	// 30 exchanges, 28 queues
	// queue acemq.delay.01 map[x-dead-letter-exchange:acemq.delay.00 x-message-ttl:2000]
	// queue acemq.delay.00 map[x-dead-letter-exchange:acemq.delay.delivery x-message-ttl:1000]
	// binding acemq.delay.delivery -> exchange orders (*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.orders)
	// acemq.delay.17 0.0.0.0.0.0.0.0.0.0.1.1.1.1.1.1.0.1.0.0.1.0.0.0.0.0.0.0.orders
}
