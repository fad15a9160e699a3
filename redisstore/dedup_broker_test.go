package redisstore_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
	amqp "github.com/rabbitmq/amqp091-go"
)

type payment struct {
	ID string `json:"id"`
}

var paymentType = runtime.NewJSONType[payment]("payment.v1", `{"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}`)

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
	raw, err := amqp.Dial(acemqtest.Require(t))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ch, err := raw.Channel()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		err := ch.PublishWithContext(ctx, "", q, false, false, amqp.Publishing{Type: "payment.v1", ContentType: "application/json",
			Headers: amqp.Table{runtime.HeaderID: "dup-1"}, Body: []byte(`{"id": "P-1"}`)})
		if err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool { s := d.Stats(); return s.Handled+s.Duplicates == 2 })
	if s := d.Stats(); calls.Load() != 1 || s.Handled != 1 || s.Duplicates != 1 {
		t.Errorf("handler calls %d, Stats %+v; want 1, {1 1}", calls.Load(), s)
	}
}
