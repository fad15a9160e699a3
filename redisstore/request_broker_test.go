package redisstore_test

import (
	"context"
	"errors"
	"github.com/acemq/acemq-go/runtime/wire"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
	amqp "github.com/rabbitmq/amqp091-go"
)

type receipt struct {
	ID string `json:"id"`
}

var receiptType = runtime.NewJSONType[receipt]("receipt.v1", `{"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}`)

// The dedup's middleware installed on Dial wraps request routes too: it
// marks a request's id handled only once the request is answered, its
// reply confirmed. A request whose first attempt ended without a reply
// (the reply refused by the broker, or RetryRequest) is retried and
// answered; marked on the handler's return (as it was), the retry was
// acked as a duplicate and its caller never answered.
func TestDedupOnARequestRouteMarksTheIDOnceTheReplyIsConfirmed(t *testing.T) {
	for _, refused := range []bool{true, false} {
		name := map[bool]string{true: "reply-refused", false: "retry-request"}[refused]
		t.Run(name, func(t *testing.T) {
			_, d := newDedup(t)
			conn := acemqtest.Dial(t, runtime.WithMiddleware(d.Middleware()))
			q := acemqtest.Queue(t, "dedup-request")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			policy := runtime.Fixed(3, 200*time.Millisecond)
			if err := conn.Declare(ctx, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: policy, DeadLetter: true})); err != nil {
				t.Fatal(err)
			}
			ch := rawChannel(t)
			replyQ := wire.ReplyQueuePrefix + acemqtest.Name("dedup")
			args := amqp.Table{}
			if refused {
				args = amqp.Table{"x-max-length": int32(0), "x-overflow": "reject-publish"}
			}
			if _, err := ch.QueueDeclare(replyQ, false, false, false, false, args); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _, _ = ch.QueueDelete(replyQ, false, false, false) })
			var calls atomic.Int32
			h := func(ctx context.Context, m *runtime.Message[payment]) (receipt, error) {
				calls.Add(1)
				if m.Envelope.Attempt == 1 && !refused {
					return receipt{}, runtime.RetryRequest(errors.New("not yet"))
				}
				if m.Envelope.Attempt > 1 && refused { // the reply queue takes replies from now on
					if _, err := ch.QueueDelete(replyQ, false, false, false); err != nil {
						return receipt{}, err
					}
					if _, err := ch.QueueDeclare(replyQ, false, false, false, false, nil); err != nil {
						return receipt{}, err
					}
				}
				return receipt{ID: m.Payload.ID}, nil
			}
			cs, err := runtime.Consume(ctx, conn, runtime.ConsumerSpec{Queue: q, Retry: &policy,
				Routes: []runtime.Route{runtime.HandleRequest(paymentType, receiptType, h)}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cs.Close(context.Background()) })
			err = ch.PublishWithContext(ctx, "", q, false, false, amqp.Publishing{Type: "payment.v1", ContentType: "application/json",
				Headers: amqp.Table{wire.HeaderID: "req-1"}, CorrelationId: "c-1", ReplyTo: replyQ, Body: []byte(`{"id": "P-1"}`)})
			if err != nil {
				t.Fatal(err)
			}
			// Polled on a channel of its own: a get that meets the reply
			// queue between the handler's delete and declare is a 404,
			// which closes its channel (then another is opened).
			poll := rawChannel(t)
			var reply amqp.Delivery
			got := false
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !got; time.Sleep(50 * time.Millisecond) {
				var err error
				if reply, got, err = poll.Get(replyQ, true); err != nil {
					poll = rawChannel(t)
				}
			}
			if !got {
				t.Fatalf("no reply in %s after 10s (handler calls %d, dedup %+v): the retried request was taken for a duplicate", replyQ, calls.Load(), d.Stats())
			}
			if reply.CorrelationId != "c-1" || reply.Headers[wire.HeaderReplyError] != nil {
				t.Errorf("reply: correlation %q, error %v; want c-1, none", reply.CorrelationId, reply.Headers[wire.HeaderReplyError])
			}
			if s := d.Stats(); calls.Load() != 2 || s.Handled != 1 || s.Duplicates != 0 {
				t.Errorf("handler calls %d, dedup %+v; want 2, 1 handled, no duplicate", calls.Load(), s)
			}
		})
	}
}
