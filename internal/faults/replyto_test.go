//go:build faults

package faults

import (
	"context"
	"fmt"
	"github.com/acemq/acemq-go/runtime/wire"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Hostile reply_to addresses (issue 36, item 8), one fault line each:
//
//	fault=<shape> requests=N answered=N parked=N settled_without_reply=N lost=N duplicated=N connection_losses=N target_depth=N late_elsewhere=N
//
// Each shape is one raw request (amqp091-go, persistent, confirmed) whose
// reply_to is the shape's, published while a Requester on another
// connection sends 20 good requests to the same responder. requests and
// answered count the good ones and their right replies; parked and
// settled_without_reply say what became of the hostile one; lost counts
// good requests without their reply and a hostile one the responder did
// not settle; duplicated good requests that got another's reply;
// target_depth what the queue the hostile request named holds after;
// late_elsewhere the late replies another Requester counted.

type replyToShape struct {
	name string
	// target returns the reply_to (and the queue to read back, "" for
	// none), and the Requester it belongs to (nil for none).
	target func(t *testing.T, q string) (replyTo, queue string, owner *runtime.Requester)
	parked bool // the responder must park it (else settle it)
	// limit, when set, is the responder's WithRedeliveryLimit: the shape
	// takes its connection down on every delivery (a broker defect the
	// client cannot see coming), and the limit is what ends it.
	limit int
}

func TestHostileReplyTo(t *testing.T) {
	Require(t)
	for _, sh := range []replyToShape{
		{name: "reply-to-foreign-queue", parked: true, target: func(t *testing.T, _ string) (string, string, *runtime.Requester) {
			q := queue(t, "billing-invoices", nil) // another service's queue
			return q, q, nil
		}},
		{name: "reply-to-own-request-queue", parked: true, target: func(t *testing.T, q string) (string, string, *runtime.Requester) {
			return q, "", nil // a reply into the request queue: a loop
		}},
		{name: "reply-to-forged-direct-address", parked: true, target: func(t *testing.T, _ string) (string, string, *runtime.Requester) {
			return "amq.rabbitmq.reply-to.g1h2AAAAAAAAAAAA.forged", "", nil
		}},
		{name: "reply-to-forged-direct-address-unknown-node", parked: true, limit: 2, target: func(t *testing.T, _ string) (string, string, *runtime.Requester) {
			// Well formed: the pid of a node "reply@12345", a hash no node
			// of the cluster has. RabbitMQ 3.10 closes the publishing
			// connection (541 INTERNAL_ERROR) on a reply to it.
			return "amq.rabbitmq.reply-to.g1h2AAtyZXBseUAxMjM0NQAAAAEAAAAAAAAAAQ==.EDMgIKky/F1ZANQZfZswjw==", "", nil
		}},
		{name: "reply-to-gone-direct-address", target: func(t *testing.T, _ string) (string, string, *runtime.Requester) {
			_, ch := raw(t)
			replies, err := ch.Consume("amq.rabbitmq.reply-to", "", true, false, false, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			_ = replies
			// The broker's own rewriting of amq.rabbitmq.reply-to: read
			// back from a request this channel sends to itself.
			self := queue(t, "rr-self", nil)
			if err := ch.Publish("", self, false, false, amqp.Publishing{ReplyTo: "amq.rabbitmq.reply-to", Body: []byte("x")}); err != nil {
				t.Fatal(err)
			}
			d := getFrom(t, self)
			_ = ch.Close() // its channel is gone
			return d.ReplyTo, "", nil
		}},
		{name: "reply-to-missing-reply-queue", target: func(t *testing.T, _ string) (string, string, *runtime.Requester) {
			return wire.ReplyQueuePrefix + Name("nobody"), "", nil
		}},
		{name: "reply-to-another-requesters-queue", target: func(t *testing.T, _ string) (string, string, *runtime.Requester) {
			other := runtime.NewRequester(dial(t), runtime.WithReplyQueue(Name("other"), time.Minute))
			t.Cleanup(func() { closeRequester(t, other) })
			// Its queue exists once it has sent a request (to nowhere).
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			_, _ = runtime.Request(ctx, other, quoteReq, text, "", "x", runtime.WithRoutingKey(Name("nowhere")))
			t.Cleanup(func() { deleteQueues(other.ReplyTo()) })
			return other.ReplyTo(), "", other
		}},
	} {
		t.Run(sh.name, func(t *testing.T) { runReplyToShape(t, sh) })
	}
}

func getFrom(t *testing.T, q string) amqp.Delivery {
	t.Helper()
	_, ch := raw(t)
	deadline := time.Now().Add(10 * time.Second)
	for {
		d, ok, err := ch.Get(q, true)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing on %s", q)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func runReplyToShape(t *testing.T, sh replyToShape) {
	q := queue(t, "rr-hostile", nil)
	cc := dialCounted(t, URL(), nil)
	var calls sync.Map // body -> *atomic.Int64
	opts := []runtime.ConsumeOption{runtime.WithConcurrency(4)}
	if sh.limit > 0 {
		// WithPrefetch(1) isolates it: a crash redelivers what the
		// broker sent ahead too, and each counts it (WithRedeliveryLimit).
		opts = append(opts, runtime.WithRedeliveryLimit(sh.limit), runtime.WithPrefetch(1), runtime.WithConcurrency(1))
	}
	cs, err := runtime.Consume(ctxFor(t, 20*time.Second), cc.c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
		runtime.HandleRequest(quoteReq, text, func(_ context.Context, m *runtime.Message[string]) (string, error) {
			n, _ := calls.LoadOrStore(m.Payload, &atomic.Int64{})
			n.(*atomic.Int64).Add(1)
			return "quote for " + m.Payload, nil
		}),
	}}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctxFor(t, 10*time.Second))
	replyTo, target, owner := sh.target(t, q)
	_, ch := raw(t)
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	dc, err := ch.PublishWithDeferredConfirm("", q, true, false, amqp.Publishing{Type: quoteReq.Name(), ContentType: "text/plain",
		DeliveryMode: amqp.Persistent, CorrelationId: "hostile-1", ReplyTo: replyTo, Body: []byte("hostile")})
	if err != nil || !dc.Wait() {
		t.Fatalf("the hostile request was not confirmed: %v", err)
	}
	r := runtime.NewRequester(dial(t))
	defer closeRequester(t, r)
	const good = 20
	var answered, failed, wrong atomic.Int64
	var wg sync.WaitGroup
	for i := range good {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprint("good-", i)
			got, err := runtime.Request(ctxFor(t, 30*time.Second), r, quoteReq, text, "", body, runtime.WithRoutingKey(q))
			switch {
			case err != nil:
				failed.Add(1)
			case got != "quote for "+body:
				wrong.Add(1)
			default:
				answered.Add(1)
			}
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(20 * time.Second)
	var st runtime.ConsumerStats
	for {
		st = cs.Stats()
		done := st.Handled["accepted"]+st.Handled["parked"] >= good+1
		if sh.parked {
			done = st.Handled["parked"] >= 1
		}
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	parked := readParked(t, wire.ParkedQueue(q))
	hostileParked := 0
	for _, m := range parked {
		if m.body == "hostile" {
			hostileParked++
		}
	}
	hostileCalls := int64(0)
	if n, ok := calls.Load("hostile"); ok {
		hostileCalls = n.(*atomic.Int64).Load()
	}
	settled := 0
	if hostileParked == 0 && hostileCalls > 0 {
		settled = 1 // handled, its reply sent nowhere it could harm
	}
	lost := int(failed.Load())
	if hostileParked+settled != 1 {
		lost++
	}
	depth := 0
	if target != "" {
		depth, _ = QueueDepth(target)
	}
	late := int64(0)
	if owner != nil {
		for end := time.Now().Add(5 * time.Second); owner.LateReplies() == 0 && time.Now().Before(end); {
			time.Sleep(50 * time.Millisecond)
		}
		late = owner.LateReplies()
	}
	dup := int(wrong.Load())
	calls.Range(func(_, n any) bool {
		dup += int(max(n.(*atomic.Int64).Load()-1, 0))
		return true
	})
	fmt.Printf("fault=%s requests=%d answered=%d parked=%d settled_without_reply=%d lost=%d duplicated=%d connection_losses=%d target_depth=%d late_elsewhere=%d\n",
		sh.name, good, answered.Load(), hostileParked, settled, lost, dup, cc.losses.Load(), depth, late)
	switch {
	case sh.limit > 0:
		// The connection goes down on each delivery of the hostile
		// request until the limit parks it; a good request in flight
		// then may run twice (its second reply is a late one).
		if lost > 0 || cc.losses.Load() > int64(sh.limit)+1 {
			t.Errorf("%s: lost %d, connection losses %d (limit %d)", sh.name, lost, cc.losses.Load(), sh.limit)
		}
	case lost > 0 || dup > 0 || cc.losses.Load() > 0:
		t.Errorf("%s: lost %d, duplicated %d, connection losses %d", sh.name, lost, dup, cc.losses.Load())
	}
	if sh.parked && hostileParked != 1 {
		t.Errorf("%s: the hostile request was not parked (stats %+v)", sh.name, st)
	}
	if !sh.parked && hostileParked != 0 {
		t.Errorf("%s: a request to a requester's address was parked", sh.name)
	}
	if depth != 0 {
		t.Errorf("%s: %s holds %d messages after a request named it", sh.name, target, depth)
	}
	if owner != nil && late != 1 {
		t.Errorf("%s: the other requester counted %d late replies, want the one reply dropped", sh.name, late)
	}
}
