package pgstore_test

import (
	"context"
	"errors"
	"github.com/acemq/acemq-go/runtime/wire"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/pgstore"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
	amqp "github.com/rabbitmq/amqp091-go"
)

type receipt struct {
	ID string `json:"id"`
}

var receiptType = runtime.NewJSONType[receipt]("receipt.v1", `{"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}`)

// The inbox's middleware installed on Dial wraps request routes too: it
// must mark a request's id handled only once the request is answered, its
// reply confirmed. A request whose first attempt did not end in a reply —
// the reply refused by the broker, or RetryRequest — is retried, its
// transaction rolled back, and the retry (the same x-acemq-id) runs the
// handler again and replies, its payment there once. Marked on the
// handler's return (as it was), the retry was a duplicate: acked without
// the handler, no reply ever, and for RetryRequest the failed attempt's
// payment committed.
func TestInboxOnARequestRouteMarksTheIDOnceTheReplyIsConfirmed(t *testing.T) {
	for _, tc := range []struct {
		name string
		// refused: the reply queue refuses the first attempt's reply; else
		// the handler asks for RetryRequest on its first attempt.
		refused bool
	}{{"reply-refused", true}, {"retry-request", false}} {
		t.Run(tc.name, func(t *testing.T) {
			pool, in := newInbox(t)
			conn := acemqtest.Dial(t, runtime.WithMiddleware(in.Middleware()), runtime.WithLogger(quiet()))
			q := acemqtest.Queue(t, "inbox-request")
			ctx := ctxFor(t, time.Minute)
			policy := runtime.Fixed(3, 200*time.Millisecond)
			if err := conn.Declare(ctx, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: policy, DeadLetter: true})); err != nil {
				t.Fatal(err)
			}
			ch := rawAMQP(t)
			replyQ := wire.ReplyQueuePrefix + acemqtest.Name("inbox")
			args := amqp.Table{}
			if tc.refused {
				args = amqp.Table{"x-max-length": int32(0), "x-overflow": "reject-publish"}
			}
			if _, err := ch.QueueDeclare(replyQ, false, false, false, false, args); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _, _ = ch.QueueDelete(replyQ, false, false, false) })
			var calls atomic.Int32
			h := func(ctx context.Context, m *runtime.Message[payment]) (receipt, error) {
				calls.Add(1)
				tx, ok := pgstore.Tx(ctx)
				if !ok {
					return receipt{}, errors.New("no inbox transaction")
				}
				if err := pay(ctx, tx, m.Payload.ID); err != nil {
					return receipt{}, runtime.RetryRequest(err)
				}
				if m.Envelope.Attempt == 1 && !tc.refused {
					return receipt{}, runtime.RetryRequest(errors.New("not yet"))
				}
				if m.Envelope.Attempt > 1 && tc.refused { // the reply queue takes replies from now on
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
			poll := rawAMQP(t)
			var reply amqp.Delivery
			got := false
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !got; time.Sleep(50 * time.Millisecond) {
				var err error
				if reply, got, err = poll.Get(replyQ, true); err != nil {
					poll = rawAMQP(t)
				}
			}
			if !got {
				t.Fatalf("no reply in %s after 10s (handler calls %d, inbox %+v): the retried request was taken for a duplicate", replyQ, calls.Load(), in.Stats())
			}
			if reply.CorrelationId != "c-1" || reply.Headers[wire.HeaderReplyError] != nil || string(reply.Body) != `{"id":"P-1"}` {
				t.Errorf("reply: correlation %q, error %v, body %s; want c-1, none, the receipt", reply.CorrelationId, reply.Headers[wire.HeaderReplyError], reply.Body)
			}
			if n := count(t, pool, `SELECT count(*) FROM payments WHERE id = 'P-1'`); n != 1 || calls.Load() != 2 {
				t.Errorf("payments of P-1: %d, handler calls %d; want 1 (the first attempt rolled back), 2", n, calls.Load())
			}
			if s := in.Stats(); s.Handled != 1 || s.Duplicates != 0 {
				t.Errorf("inbox Stats %+v; want 1 handled, no duplicate", s)
			}
		})
	}
}

// rawAMQP is a channel of an amqp091-go connection of the test's own.
func rawAMQP(t *testing.T) *amqp.Channel {
	t.Helper()
	conn, err := amqp.Dial(acemqtest.Require(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}
