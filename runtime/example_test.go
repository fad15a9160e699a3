package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Five attempts, one second doubling, capped at a minute: four waits, the
// last attempt has nothing after it. Schedule needs no broker.
func ExampleExponential() {
	policy := runtime.Exponential(5, time.Second, time.Minute)
	fmt.Println(policy.Schedule())
	fmt.Println(policy.Delay(2), policy.Jitter())
	// Output:
	// [1s 2s 4s 8s]
	// 2s 0.2
}

// A fixed delay is an exact request: no jitter.
func ExampleFixed() {
	policy := runtime.Fixed(3, time.Second).WithGiveUpAfter(10 * time.Minute)
	fmt.Println(policy)
	fmt.Println(policy.Jitter())
	// Output:
	// 3 attempts, waits [1s 1s], spill rungs [1s] (past the hold budget), give up after 10m0s
	// 0
}

// Fatal turns a retry into a reject, however deep it is wrapped.
func ExampleFatal() {
	err := fmt.Errorf("reserve: %w", runtime.Fatal(errors.New("no such item")))
	fmt.Println(runtime.Retry(err).Kind())
	fmt.Println(runtime.Retry(errors.New("timeout")).Kind())
	// Output:
	// reject
	// retry
}

func ExampleDial() {
	ctx := context.Background()
	conn, err := runtime.Dial(ctx, "amqp://guest:guest@localhost:5672/",
		runtime.WithOrigin("warehouse@laptop"),
		runtime.WithRetry(runtime.Exponential(5, time.Second, time.Minute)))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)
}

func ExampleConnection_Declare() {
	ctx := context.Background()
	conn, err := runtime.Dial(ctx, "amqp://guest:guest@localhost:5672/")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)
	top := runtime.NewTopology().
		Exchange("orders", "topic").
		Queue(runtime.Queue{
			Name:       "orders.new",
			DeadLetter: true,
			Retry:      runtime.Exponential(6, 10*time.Second, 300*time.Second),
		}).
		Bind("orders.new", "orders", "order.created")
	// Declares orders.new, orders.new.dlq, orders.new.parked and the rungs
	// orders.new.retry.40s, .80s and .160s.
	if err := conn.Declare(ctx, top); err != nil {
		log.Fatal(err)
	}
}

// Declarations lists, without a broker, what Declare would declare: the
// data acemq-gen export turns into a RabbitMQ definitions file.
func ExampleTopology_Declarations() {
	top := runtime.NewTopology().
		Exchange("orders", "topic").
		Queue(runtime.Queue{
			Name:       "orders.new",
			DeadLetter: true,
			Retry:      runtime.Exponential(4, 10*time.Second, 60*time.Second),
		}).
		Bind("orders.new", "orders", "order.created")
	d, err := top.Declarations()
	if err != nil {
		log.Fatal(err)
	}
	for _, x := range d.Exchanges {
		fmt.Println("exchange", x.Name, x.Kind)
	}
	for _, q := range d.Queues {
		fmt.Println("queue", q.Name, q.Arguments)
	}
	for _, b := range d.Bindings {
		fmt.Printf("binding %s -> %s (%s)\n", b.Exchange, b.Queue, b.RoutingKey)
	}
	// Output:
	// exchange orders topic
	// exchange acemq.dlx direct
	// exchange acemq.retry direct
	// queue orders.new map[x-dead-letter-exchange:acemq.dlx x-dead-letter-routing-key:orders.new.dlq]
	// queue orders.new.dlq map[]
	// queue orders.new.parked map[]
	// queue orders.new.retry.10s map[x-dead-letter-exchange: x-dead-letter-routing-key:orders.new x-message-ttl:10000]
	// queue orders.new.retry.20s map[x-dead-letter-exchange: x-dead-letter-routing-key:orders.new x-message-ttl:20000]
	// queue orders.new.retry.40s map[x-dead-letter-exchange: x-dead-letter-routing-key:orders.new x-message-ttl:40000]
	// binding acemq.dlx -> orders.new.dlq (orders.new.dlq)
	// binding acemq.retry -> orders.new.retry.10s (orders.new.retry.10s)
	// binding acemq.retry -> orders.new.retry.20s (orders.new.retry.20s)
	// binding acemq.retry -> orders.new.retry.40s (orders.new.retry.40s)
	// binding orders -> orders.new (order.created)
}

type OrderPlaced struct {
	OrderID    string `json:"order_id"`
	CustomerID string `json:"customer_id,omitempty"`
}

var orderPlaced = runtime.NewJSONType[OrderPlaced]("order.placed.v2", `{
	"type": "object",
	"properties": {"order_id": {"type": "string"}, "customer_id": {"type": "string"}},
	"required": ["order_id"]
}`)

func ExamplePublish() {
	ctx := context.Background()
	conn, err := runtime.Dial(ctx, "amqp://guest:guest@localhost:5672/")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)
	err = runtime.Publish(ctx, conn, orderPlaced, "orders", OrderPlaced{OrderID: "A-1", CustomerID: "C-9"},
		runtime.WithRoutingKey("order.created"), runtime.WithCorrelationID("checkout-17"))
	if errors.Is(err, runtime.ErrUnroutable) {
		log.Print("no queue is bound for order.created")
	} else if err != nil {
		log.Fatal(err)
	}
}

// A window of pending confirms from one goroutine: at most 256 messages
// written and not yet confirmed, the oldest waited for first.
func ExamplePublishAsync() {
	ctx := context.Background()
	conn, err := runtime.Dial(ctx, "amqp://guest:guest@localhost:5672/")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)
	var window []*runtime.Pending
	for i := range 10000 {
		if len(window) == 256 {
			if err := window[0].Wait(ctx); err != nil {
				log.Print(err) // the error Publish would have returned
			}
			window = window[1:]
		}
		order := OrderPlaced{OrderID: fmt.Sprintf("A-%d", i), CustomerID: "C-9"}
		p, err := runtime.PublishAsync(ctx, conn, orderPlaced, "orders", order, runtime.WithRoutingKey("order.created"))
		if err != nil {
			log.Fatal(err) // not written: invalid, blocked, or the broker is away
		}
		window = append(window, p)
	}
	for _, p := range window {
		if err := p.Wait(ctx); err != nil {
			log.Print(err)
		}
	}
}

func ExampleConsume() {
	ctx := context.Background()
	conn, err := runtime.Dial(ctx, "amqp://guest:guest@localhost:5672/")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)
	handle := func(ctx context.Context, m *runtime.Message[OrderPlaced]) runtime.Ack {
		if m.Payload.CustomerID == "" {
			return runtime.Reject(errors.New("no customer id")) // straight to orders.new.dlq
		}
		log.Printf("order %s, attempt %d", m.Payload.OrderID, m.Envelope.Attempt)
		return runtime.Accept()
	}
	consumer, err := runtime.Consume(ctx, conn, runtime.ConsumerSpec{
		Queue:  "orders.new",
		Routes: []runtime.Route{runtime.Handle(orderPlaced, handle)},
	}, runtime.WithRetry(runtime.Fixed(3, time.Second)), runtime.WithPrefetch(20))
	if err != nil {
		log.Fatal(err)
	}
	defer consumer.Close(ctx)
}

func ExampleConnection_Pull() {
	ctx := context.Background()
	conn, err := runtime.Dial(ctx, "amqp://guest:guest@localhost:5672/")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)
	for {
		d, err := conn.Pull(ctx, wire.DeadLetterQueue("orders.new"))
		if err != nil {
			log.Fatal(err)
		}
		if d == nil {
			break // empty; what was pulled goes back when conn closes
		}
		fmt.Println(d.Envelope.ID, d.Headers[wire.HeaderError])
	}
}

// Put the dead letters of orders.new back on orders.new once the
// warehouse is fixed: only those that failed because of it, at most 500,
// for at most a minute. Each goes back on attempt 1 with its error
// cleared; the rest stay on orders.new.dlq.
func ExampleConnection_Replay() {
	ctx := context.Background()
	conn, err := runtime.Dial(ctx, "amqp://guest:guest@localhost:5672/")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)
	pass, cancel := context.WithTimeout(ctx, time.Minute) // the pass's deadline
	defer cancel()
	res, err := conn.Replay(pass, wire.DeadLetterQueue("orders.new"), runtime.ReplayOptions{
		Limit: 500,
		Filter: func(e runtime.Envelope, _ map[string]any, _ []byte) bool {
			return strings.Contains(e.Error, "warehouse")
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res) // moved 1, skipped 1 (drained)
	for _, f := range res.Failures {
		log.Print(f) // left on orders.new.dlq, and why
	}
}

// A result prints as the sibling libraries print theirs.
func ExampleReplayResult() {
	fmt.Println(runtime.ReplayResult{Moved: 12, Stop: runtime.ReplayDrained})
	fmt.Println(runtime.ReplayResult{Moved: 2, Skipped: 1, Failed: 1, Stop: runtime.ReplayLimit})
	// Output:
	// moved 12, skipped 0 (drained)
	// moved 2, skipped 1, failed 1 (limit)
}

// BrokerDeath reads why the broker dead-lettered a message on its own — here
// past a quorum queue's delivery limit, as RabbitMQ writes it — for a tool
// that lists or replays q.dlq. Envelope.Error reads the same for Pull and
// handlers: "dead-lettered by the broker: delivery_limit".
func ExampleBrokerDeath() {
	headers := map[string]any{
		"x-death": []any{amqp.Table{
			"queue": "orders.new", "reason": "delivery_limit", "count": int64(1),
			"exchange": "", "routing-keys": []any{"orders.new"},
		}},
		"x-first-death-queue":  "orders.new",
		"x-first-death-reason": "delivery_limit",
	}
	if d, ok := runtime.BrokerDeath(headers); ok {
		fmt.Printf("%s from %s (%d time)\n", d.Reason, d.Queue, d.Count)
	}
	_, ok := runtime.BrokerDeath(map[string]any{wire.HeaderError: "gave up after 4 attempts: down"})
	fmt.Println(ok)
	// Output:
	// delivery_limit from orders.new (1 time)
	// false
}

// Count the dead letters of orders.new by reason without taking them: every
// message read goes back to its place when Browse returns.
func ExampleConnection_Browse() {
	ctx := context.Background()
	conn, err := runtime.Dial(ctx, "amqp://guest:guest@localhost:5672/")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)
	reasons := map[string]int{}
	n, err := conn.Browse(ctx, wire.DeadLetterQueue("orders.new"), 0, func(d *runtime.Delivery) error {
		reasons[d.Envelope.Error]++
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, reasons)
}

// A consumer whose downstream fails now and then: 256 deliveries for the
// handlers, and up to 512 retries waiting in memory on top of them
// (basic.qos 768). A 2s wait past those 512 goes to orders.new.retry.2s,
// which the topology declares, instead of taking a handler's slot.
func ExampleWithHoldBudget() {
	ctx := context.Background()
	conn, err := runtime.Dial(ctx, "amqp://guest:guest@localhost:5672/")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)
	policy := runtime.Exponential(4, 500*time.Millisecond, 2*time.Second)
	if err := conn.Declare(ctx, runtime.NewTopology().Queue(runtime.Queue{Name: "orders.new", Retry: policy})); err != nil {
		log.Fatal(err)
	}
	orders := runtime.NewTextType("orders.placed.v1")
	cs, err := runtime.Consume(ctx, conn, runtime.ConsumerSpec{Queue: "orders.new", Retry: &policy, Routes: []runtime.Route{
		runtime.Handle(orders, func(ctx context.Context, m *runtime.Message[string]) runtime.Ack {
			return runtime.Accept()
		}),
	}}, runtime.WithPrefetch(256), runtime.WithHoldBudget(512))
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close(ctx)
}
