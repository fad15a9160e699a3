package runtime_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	amqp "github.com/rabbitmq/amqp091-go"
)

// TestMiddlewareOutcomesOnARequestAreAnswered (issue 36, item 11): a
// request a middleware rejects, parks, panics on or settles without its
// handler is answered at once with an error reply whose code says which;
// the request still goes where the middleware sent it.
func TestMiddlewareOutcomesOnARequestAreAnswered(t *testing.T) {
	c := dial(t)
	var calls atomic.Int64
	guard := func(next runtime.HandlerFunc) runtime.HandlerFunc {
		return func(ctx context.Context, in *runtime.Incoming) runtime.Ack {
			switch in.Payload() {
			case "reject":
				return runtime.Reject(errors.New("the tenant is suspended"))
			case "park":
				return runtime.Park(errors.New("needs an operator"))
			case "panic":
				panic("the guard's table is nil")
			case "skip":
				return runtime.Accept() // seen before, as an inbox says
			}
			return next(ctx, in)
		}
	}
	q := responder(t, c, func(ctx context.Context, m *runtime.Message[string]) (string, error) {
		calls.Add(1)
		return priced(ctx, m)
	}, runtime.WithMiddleware(guard))
	r := requester(t, c)
	for _, tc := range []struct{ body, code, reason, queue string }{
		{"reject", "rejected", "the tenant is suspended", q + ".dlq"},
		{"park", "parked", "needs an operator", q + ".parked"},
		{"panic", "panic", "the guard's table is nil", ""},
		{"skip", "not_handled", "without calling its handler", ""},
	} {
		start := time.Now()
		_, err := runtime.Request(ctxFor(t, wait), r, quoteReqType, quoteType, "", tc.body, runtime.WithRoutingKey(q))
		var re *runtime.ReplyError
		if !errors.As(err, &re) || re.Code != tc.code || !strings.Contains(re.Reason, tc.reason) {
			t.Fatalf("%s: err = %v; want a *ReplyError with code %q and a reason containing %q", tc.body, err, tc.code, tc.reason)
		}
		if took := time.Since(start); took > wait/2 {
			t.Fatalf("%s: answered after %v, not at once", tc.body, took)
		}
		if tc.queue != "" {
			d := getOne(t, tc.queue, wait)
			if string(d.Body) != tc.body {
				t.Fatalf("%s: %s holds %q", tc.body, tc.queue, d.Body)
			}
		}
	}
	waitDepth(t, q, 0, wait)
	for _, side := range []string{q + ".dlq", q + ".parked"} {
		if n := depth(t, side); n != 0 {
			t.Fatalf("%s holds %d more", side, n)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("the handler ran %d times", n)
	}
	got, err := runtime.Request(ctxFor(t, wait), r, quoteReqType, quoteType, "", "A-1", runtime.WithRoutingKey(q))
	if err != nil || got != "price of A-1" {
		t.Fatalf("a request the guard lets through: %q, %v", got, err)
	}
}

// TestMiddlewareRetryOfAGoneCallerSpendsNoLadder: a middleware's Retry on a
// request whose caller has gone is settled, not retried, as RetryRequest's
// is; with the caller there it is retried and the caller gets the later
// attempt's reply.
func TestMiddlewareRetryOfAGoneCallerSpendsNoLadder(t *testing.T) {
	c := dial(t)
	var mwCalls atomic.Int64
	gone := make(chan struct{})
	flaky := func(next runtime.HandlerFunc) runtime.HandlerFunc {
		return func(ctx context.Context, in *runtime.Incoming) runtime.Ack {
			mwCalls.Add(1)
			switch {
			case in.Payload() == "gone":
				<-gone
				return runtime.Retry(errors.New("the store is down"))
			case in.Envelope.Attempt == 1:
				return runtime.Retry(errors.New("the store is down"))
			}
			return next(ctx, in)
		}
	}
	q := responder(t, c, priced, runtime.WithMiddleware(flaky), runtime.WithRetry(runtime.Fixed(5, 50*time.Millisecond)))
	got, err := runtime.Request(ctxFor(t, wait), requester(t, c), quoteReqType, quoteType, "", "A-1", runtime.WithRoutingKey(q))
	if err != nil || got != "price of A-1" {
		t.Fatalf("with the caller there: %q, %v; want the second attempt's reply", got, err)
	}
	cs := consumerOf(t, q)
	before := cs.Stats().Handled["retried"]
	mwCalls.Store(0)

	ch := openChannel(t)
	if _, err := ch.Consume("amq.rabbitmq.reply-to", "", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	err = ch.PublishWithContext(ctxFor(t, wait), "", q, true, false, amqp.Publishing{
		Type: quoteReqType.Name(), Body: []byte("gone"), CorrelationId: "gone-mw", ReplyTo: "amq.rabbitmq.reply-to"})
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the middleware called", func() bool { return mwCalls.Load() == 1 })
	_ = ch.Close() // the caller goes away
	close(gone)
	waitDepth(t, q, 0, wait)
	time.Sleep(300 * time.Millisecond) // a retry's 50 ms would have come back by now
	if n := mwCalls.Load(); n != 1 {
		t.Fatalf("the middleware ran %d times: a request whose caller had gone was retried", n)
	}
	if st := cs.Stats(); st.Handled["retried"] != before {
		t.Fatalf("stats %+v: retried went from %d", st, before)
	}
	if n := depth(t, q+".dlq"); n != 0 {
		t.Fatalf("%s.dlq holds %d", q, n)
	}
}
