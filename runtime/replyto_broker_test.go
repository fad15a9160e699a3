package runtime_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// TestReplyToAForeignQueueIsParked (issue 36, item 8): a raw request whose
// reply_to names another service's queue gets no reply there; it is
// parked with the reason, and its handler is never called. The same
// responder still answers a direct reply-to request.
func TestReplyToAForeignQueueIsParked(t *testing.T) {
	c := dial(t)
	var calls atomic.Int64
	q := responder(t, c, func(ctx context.Context, m *runtime.Message[string]) (string, error) {
		calls.Add(1)
		return priced(ctx, m)
	})
	foreign := brokertest.Queue(t, "billing-invoices")
	rawQueue(t, foreign, nil)
	rawPublish(t, q, amqp.Publishing{Type: quoteReqType.Name(), Body: []byte("A-1"), CorrelationId: "steal-1", ReplyTo: foreign})
	cs := consumerOf(t, q)
	waitUntil(t, "the request settled", func() bool { st := cs.Stats(); return st.Handled["accepted"]+st.Handled["parked"] == 1 })
	if n := depth(t, foreign); n != 0 {
		t.Fatalf("%s holds %d messages: the responder replied into another service's queue", foreign, n)
	}
	d := getOne(t, q+".parked", wait)
	why := headerString(t, d, wire.HeaderError)
	if !strings.Contains(why, "reply_to") || !strings.Contains(why, foreign) || !strings.Contains(why, "not a requester's reply address") {
		t.Fatalf("parked with %q; want the reply_to %s named as not a requester's reply address", why, foreign)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("the handler ran %d times for a request it cannot answer", n)
	}
	// The responder still answers its requesters.
	got, err := runtime.Request(ctxFor(t, wait), requester(t, c), quoteReqType, quoteType, "", "B-2", runtime.WithRoutingKey(q))
	if err != nil || got != "price of B-2" {
		t.Fatalf("Request = %q, %v", got, err)
	}
}

// TestReplyQueueShapeAndWithReplyToAllowed: a Requester's reply queue is
// named acemq.reply.<name> and answered by default; a queue outside that
// shape is answered only when the consumer's WithReplyToAllowed names it
// or a prefix of it.
func TestReplyQueueShapeAndWithReplyToAllowed(t *testing.T) {
	c := dial(t)
	name := brokertest.Name("rr-replies")
	r := requester(t, c, runtime.WithReplyQueue(name, time.Minute))
	if want := "acemq.reply." + name; r.ReplyTo() != want {
		t.Fatalf("ReplyTo = %q, want %q", r.ReplyTo(), want)
	}
	q := responder(t, c, priced)
	got, err := runtime.Request(ctxFor(t, wait), r, quoteReqType, quoteType, "", "A-1", runtime.WithRoutingKey(q))
	if err != nil || got != "price of A-1" {
		t.Fatalf("Request through %s = %q, %v", r.ReplyTo(), got, err)
	}
	t.Cleanup(func() { brokertest.DeleteQueues(t, r.ReplyTo()) })

	legacy := brokertest.Queue(t, "legacy-replies")
	rawQueue(t, legacy, nil)
	for _, allow := range []string{legacy, legacy[:strings.LastIndexByte(legacy, '.')+1] + "*"} {
		aq := responder(t, c, priced, runtime.WithReplyToAllowed(allow))
		rawPublish(t, aq, amqp.Publishing{Type: quoteReqType.Name(), Body: []byte("C-3"), CorrelationId: "legacy-1", ReplyTo: legacy})
		d := getOne(t, legacy, wait)
		if string(d.Body) != "price of C-3" || d.CorrelationId != "legacy-1" {
			t.Fatalf("allowed %q: the reply in %s = %q corr %q", allow, legacy, d.Body, d.CorrelationId)
		}
		if n := depth(t, aq+".parked"); n != 0 {
			t.Fatalf("allowed %q: %d parked", allow, n)
		}
	}
}
