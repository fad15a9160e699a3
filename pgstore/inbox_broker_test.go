package pgstore_test

import (
	"context"
	"errors"
	"github.com/acemq/acemq-go/runtime/wire"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/pgstore"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
	amqp "github.com/rabbitmq/amqp091-go"
)

type payment struct {
	ID string `json:"id"`
}

var paymentType = runtime.NewJSONType[payment]("payment.v1", `{"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}`)

// inboxConsumer counts its handler's calls.
type inboxConsumer struct {
	calls atomic.Int32
}

// consumeWithInbox consumes q with the inbox's middleware; the handler
// pays m.Payload.ID in the transaction pgstore.Tx gives it, then answers
// fail's Ack when fail gives one.
func consumeWithInbox(t *testing.T, conn *runtime.Connection, q string, in *pgstore.Inbox, fail func(*runtime.Message[payment]) *runtime.Ack) *inboxConsumer {
	t.Helper()
	ctx := context.Background()
	policy := runtime.Fixed(3, 10*time.Millisecond)
	if err := conn.Declare(ctx, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: policy})); err != nil {
		t.Fatal(err)
	}
	ic := &inboxConsumer{}
	cs, err := runtime.Consume(ctx, conn, runtime.ConsumerSpec{Queue: q, Retry: &policy, Routes: []runtime.Route{
		runtime.Handle(paymentType, func(ctx context.Context, m *runtime.Message[payment]) runtime.Ack {
			ic.calls.Add(1)
			tx, ok := pgstore.Tx(ctx)
			if !ok {
				t.Error("no inbox transaction in the handler's ctx")
				return runtime.Park(errors.New("no tx"))
			}
			if err := pay(ctx, tx, m.Payload.ID); err != nil {
				return runtime.Retry(err)
			}
			if fail != nil {
				if a := fail(m); a != nil {
					return *a
				}
			}
			return runtime.Accept()
		})}}, runtime.WithMiddleware(in.Middleware()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(context.Background()) })
	return ic
}

// publishRaw publishes body to q as payment.v1 with the given x-acemq-id
// (none when id is ""), as a duplicate publish or a replay would.
func publishRaw(t *testing.T, q, id, body string) {
	t.Helper()
	conn, err := amqp.Dial(acemqtest.Require(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	h := amqp.Table{}
	if id != "" {
		h[wire.HeaderID] = id
	}
	err = ch.PublishWithContext(context.Background(), "", q, false, false, amqp.Publishing{
		Headers: h, Type: "payment.v1", ContentType: "application/json", Body: []byte(body), DeliveryMode: amqp.Persistent})
	if err != nil {
		t.Fatal(err)
	}
}

// A duplicate publish (one x-acemq-id twice) on the broker: the handler
// runs once, the second copy is acked and counted as a duplicate.
func TestInboxOnTheBrokerAcksADuplicateWithoutTheHandler(t *testing.T) {
	pool, in := newInbox(t)
	conn := acemqtest.Dial(t)
	q := acemqtest.Queue(t, "inbox-dup")
	ic := consumeWithInbox(t, conn, q, in, nil)
	publishRaw(t, q, "dup-1", `{"id": "P-1"}`)
	publishRaw(t, q, "dup-1", `{"id": "P-1"}`)
	if err := runtime.Publish(context.Background(), conn, paymentType, "", payment{ID: "P-2"}, runtime.WithRoutingKey(q)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "three deliveries settled", func() bool { s := in.Stats(); return s.Handled+s.Duplicates == 3 })
	if s := in.Stats(); s.Handled != 2 || s.Duplicates != 1 || ic.calls.Load() != 2 {
		t.Errorf("Stats %+v, handler calls %d; want Handled 2, Duplicates 1, 2 calls", s, ic.calls.Load())
	}
	if n := count(t, pool, `SELECT count(*) FROM payments`); n != 2 {
		t.Errorf("payments rows %d; want 2 (P-1 once, P-2)", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM acemq_inbox WHERE consumer = $1`, q); n != 2 {
		t.Errorf("inbox rows of %s: %d; want 2", q, n)
	}
}

// A Retry rolls back: the retried copy (same id) runs the handler again
// and its effect is there once.
func TestInboxOnTheBrokerRetryRollsBack(t *testing.T) {
	pool, in := newInbox(t)
	conn := acemqtest.Dial(t)
	q := acemqtest.Queue(t, "inbox-retry")
	retry := runtime.Retry(errFirstAttempt)
	ic := consumeWithInbox(t, conn, q, in, func(m *runtime.Message[payment]) *runtime.Ack {
		if m.Envelope.Attempt == 1 {
			return &retry
		}
		return nil
	})
	if err := runtime.Publish(context.Background(), conn, paymentType, "", payment{ID: "P-r"}, runtime.WithRoutingKey(q)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the retried copy handled", func() bool { return in.Stats().Handled == 1 })
	if n := count(t, pool, `SELECT count(*) FROM payments WHERE id = 'P-r'`); n != 1 || ic.calls.Load() != 2 {
		t.Errorf("payments rows %d, handler calls %d; want 1, 2", n, ic.calls.Load())
	}
}

var errFirstAttempt = errorString("first attempt fails")

type errorString string

func (e errorString) Error() string { return string(e) }

// A message with no identity (no x-acemq-id, no message-id) on an inbox
// queue is parked with the reason, never handled.
func TestInboxOnTheBrokerParksAMessageWithoutID(t *testing.T) {
	_, in := newInbox(t)
	conn := acemqtest.Dial(t)
	q := acemqtest.Queue(t, "inbox-noid")
	ic := consumeWithInbox(t, conn, q, in, nil)
	publishRaw(t, q, "", `{"id": "P-anon"}`)
	raw, err := amqp.Dial(acemqtest.Require(t))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ch, err := raw.Channel()
	if err != nil {
		t.Fatal(err)
	}
	var got amqp.Delivery
	waitFor(t, "the message in "+q+".parked", func() bool {
		d, ok, err := ch.Get(q+".parked", true)
		got = d
		return err == nil && ok
	})
	reason, _ := got.Headers[wire.HeaderError].(string)
	if !strings.Contains(reason, "no x-acemq-id") || string(got.Body) != `{"id": "P-anon"}` {
		t.Errorf("parked: %s %q; want the body and a reason naming x-acemq-id", got.Body, reason)
	}
	if ic.calls.Load() != 0 {
		t.Errorf("handler called %d times; want 0", ic.calls.Load())
	}
}

// A handler's panic rolls its transaction back on the way to the runtime,
// which records it and retries the message as it does without the inbox.
func TestInboxOnTheBrokerPanicRollsBack(t *testing.T) {
	pool, in := newInbox(t)
	conn := acemqtest.Dial(t)
	q := acemqtest.Queue(t, "inbox-panic")
	ic := consumeWithInbox(t, conn, q, in, func(m *runtime.Message[payment]) *runtime.Ack {
		if m.Envelope.Attempt == 1 {
			panic("the first attempt panics after its effect")
		}
		return nil
	})
	if err := runtime.Publish(context.Background(), conn, paymentType, "", payment{ID: "P-p"}, runtime.WithRoutingKey(q)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the retried copy handled", func() bool { return in.Stats().Handled == 1 })
	if n := count(t, pool, `SELECT count(*) FROM payments WHERE id = 'P-p'`); n != 1 || ic.calls.Load() != 2 {
		t.Errorf("payments rows %d, handler calls %d; want 1 (the panicked attempt's rolled back), 2", n, ic.calls.Load())
	}
}

// A producer that re-publishes after an ambiguous failure (no confirm
// heard) gives the copy the first publish's id with runtime.WithMessageID:
// the inbox handles the id once, and acks the copy as a duplicate. So does
// a copy written through the outbox with the same id.
func TestInboxOnTheBrokerHandlesARepublishWithTheSameIDOnce(t *testing.T) {
	pool, in := newInbox(t)
	conn := acemqtest.Dial(t)
	q := acemqtest.Queue(t, "inbox-republish")
	ic := consumeWithInbox(t, conn, q, in, nil)
	ctx := context.Background()
	const id = "payment-P-7"
	for range 2 { // the publish, then the producer's re-publish
		if err := runtime.Publish(ctx, conn, paymentType, "", payment{ID: "P-7"}, runtime.WithRoutingKey(q), runtime.WithMessageID(id)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "two deliveries settled", func() bool { s := in.Stats(); return s.Handled+s.Duplicates == 2 })
	if s := in.Stats(); s.Handled != 1 || s.Duplicates != 1 || ic.calls.Load() != 1 {
		t.Errorf("Stats %+v, handler calls %d; want Handled 1, Duplicates 1, 1 call", s, ic.calls.Load())
	}
	if n := count(t, pool, `SELECT count(*) FROM payments WHERE id = 'P-7'`); n != 1 {
		t.Errorf("payments rows of P-7: %d; want 1", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM acemq_inbox WHERE consumer = $1 AND message_id = $2`, q, id); n != 1 {
		t.Errorf("inbox rows of %s for %s: %d; want 1", q, id, n)
	}
}
