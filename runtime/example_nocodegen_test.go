package runtime_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

type Payment struct {
	ID     string `json:"id"`
	Amount int64  `json:"amount_cents"`
}

var paymentReceived = runtime.NewJSONType[Payment]("payment.received.v1", `{
	"type": "object",
	"required": ["id", "amount_cents"],
	"properties": {"id": {"type": "string"}, "amount_cents": {"type": "integer", "minimum": 1}}
}`)

// Running without code generation: a message type, a topology, a
// consumer with a retry policy and a publish, with the runtime alone. This
// is what acemq-gen's output does, written by hand; the README's
// "Running without code generation" shows the same.
func Example_withoutCodeGeneration() {
	ctx := context.Background()
	conn, err := runtime.Dial(ctx, "amqp://guest:guest@localhost:5672/")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(context.Background())

	policy := runtime.Exponential(5, time.Second, time.Minute)
	top := runtime.NewTopology().Queue(runtime.Queue{Name: "payments", Retry: policy})
	if err := conn.Declare(ctx, top); err != nil {
		log.Fatal(err)
	}
	consumer, err := runtime.Consume(ctx, conn, runtime.ConsumerSpec{
		Queue: "payments",
		Retry: &policy,
		Routes: []runtime.Route{runtime.Handle(paymentReceived,
			func(ctx context.Context, m *runtime.Message[Payment]) runtime.Ack {
				fmt.Println("payment", m.Payload.ID, "attempt", m.Envelope.Attempt)
				return runtime.Accept()
			})},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer consumer.Close(context.Background())
	// Through the default exchange, straight to the queue.
	err = runtime.Publish(ctx, conn, paymentReceived, "", Payment{ID: "P-1", Amount: 1250},
		runtime.WithRoutingKey("payments"))
	if err != nil {
		log.Fatal(err)
	}
}

// Graceful shutdown on SIGINT or SIGTERM: Consumer.Close stops taking
// deliveries, lets the handlers in flight finish (up to its ctx) and
// republishes the retries held in memory with their attempt advanced; then
// Connection.Close closes the connection.
func ExampleConsumer_Close() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Dial waits for a broker that is not up yet, until ctx is done.
	conn, err := runtime.Dial(ctx, "amqp://guest:guest@localhost:5672/")
	if err != nil {
		log.Fatal(err)
	}
	consumer, err := runtime.Consume(ctx, conn, runtime.ConsumerSpec{
		Queue: "payments",
		Routes: []runtime.Route{runtime.Handle(paymentReceived,
			func(ctx context.Context, m *runtime.Message[Payment]) runtime.Ack { return runtime.Accept() })},
	})
	if err != nil {
		log.Fatal(err)
	}
	<-ctx.Done() // a signal

	// Give the handlers in flight 20s, then the connection 5s.
	drain, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := consumer.Close(drain); err != nil {
		slog.Warn("handlers still running at shutdown", "err", err)
	}
	closing, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	if err := conn.Close(closing); err != nil {
		log.Print(err)
	}
}
