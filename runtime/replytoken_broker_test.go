package runtime_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// TestLateReplyNeverReachesAReusedCorrelationID (issue 36, item 7): request
// 1 with WithCorrelationID("conversation-42") times out; request 2 with
// the same correlation id, sent after request 1 stopped waiting, is
// waiting when request 1's reply arrives. Request 2 gets its own reply,
// request 1's is dropped and counted: replies are matched on the
// requester's own token (x-acemq-reply-token), which the responder
// echoes, not on the caller's correlation id.
func TestLateReplyNeverReachesAReusedCorrelationID(t *testing.T) {
	c := dial(t)
	first, second := make(chan struct{}), make(chan struct{})
	secondIn := make(chan struct{})
	var answered atomic.Int64
	q := responder(t, c, func(_ context.Context, m *runtime.Message[string]) (string, error) {
		defer answered.Add(1)
		switch m.Payload {
		case "first":
			<-first
		case "second":
			close(secondIn)
			<-second
		}
		return "reply to " + m.Payload, nil
	}, runtime.WithConcurrency(2))
	r := requester(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := runtime.Request(ctx, r, quoteReqType, quoteType, "", "first", runtime.WithRoutingKey(q), runtime.WithCorrelationID("conversation-42"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("request 1: err = %v, want context.DeadlineExceeded", err)
	}
	type result struct {
		rep string
		err error
	}
	got := make(chan result, 1)
	go func() {
		rep, err := runtime.Request(ctxFor(t, wait), r, quoteReqType, quoteType, "", "second", runtime.WithRoutingKey(q), runtime.WithCorrelationID("conversation-42"))
		got <- result{rep, err}
	}()
	select {
	case <-secondIn:
	case <-time.After(wait):
		t.Fatal("request 2 never reached the responder")
	}
	close(first) // request 1's reply goes out while request 2 waits
	waitUntil(t, "request 1 answered", func() bool { return answered.Load() == 1 })
	time.Sleep(200 * time.Millisecond) // its reply reaches the requester
	close(second)
	res := <-got
	if res.err != nil || res.rep != "reply to second" {
		t.Fatalf("request 2 = %q, %v; want its own reply, %q", res.rep, res.err, "reply to second")
	}
	waitUntil(t, "LateReplies = 1", func() bool { return r.LateReplies() == 1 })
}

// TestReplyTokenOnTheWire: a request carries x-acemq-reply-token, the
// requester's own (a caller's header of that name is overwritten),
// different for two requests of one correlation id; a responder echoes it
// on its reply and on its error reply.
func TestReplyTokenOnTheWire(t *testing.T) {
	c := dial(t)
	q := brokertest.Queue(t, "rr-token")
	rawQueue(t, q, nil)
	ch := rawChannel(t)
	reqs, err := ch.Consume(q, "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := requester(t, c)
	var tokens []string
	for range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		_, _ = runtime.Request(ctx, r, quoteReqType, quoteType, "", "A-1", runtime.WithRoutingKey(q), runtime.WithCorrelationID("same"),
			runtime.WithHeaders(map[string]any{wire.HeaderReplyToken: "forged"}))
		cancel()
		select {
		case d := <-reqs:
			tokens = append(tokens, headerString(t, d, wire.HeaderReplyToken))
		case <-time.After(wait):
			t.Fatal("the request never came")
		}
	}
	if tokens[0] == "" || tokens[0] == "forged" || tokens[0] == tokens[1] {
		t.Fatalf("the requests' tokens: %q; want two of the requester's own", tokens)
	}

	replies, err := ch.Consume("amq.rabbitmq.reply-to", "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp := responder(t, c, func(_ context.Context, m *runtime.Message[string]) (string, error) {
		if m.Payload == "fail" {
			return "", errors.New("no price")
		}
		return "ok", nil
	})
	for _, body := range []string{"ok", "fail"} {
		err := ch.PublishWithContext(ctxFor(t, wait), "", resp, true, false, amqp.Publishing{
			Type: quoteReqType.Name(), Body: []byte(body), CorrelationId: "c-" + body, ReplyTo: "amq.rabbitmq.reply-to",
			Headers: amqp.Table{wire.HeaderReplyToken: "tok-" + body}})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case d := <-replies:
			if d.CorrelationId != "c-"+body || headerString(t, d, wire.HeaderReplyToken) != "tok-"+body {
				t.Fatalf("reply to %s: correlation id %q token %q; want c-%s and tok-%s", body, d.CorrelationId, headerString(t, d, wire.HeaderReplyToken), body, body)
			}
		case <-time.After(wait):
			t.Fatalf("no reply to %s", body)
		}
	}
}

// siblingResponder answers every request on a fresh queue as a responder
// that does not know x-acemq-reply-token would (a sibling library, an
// older acemq-go): the correlation id back, no token. Each request waits
// for a value on its gate first when gated is set.
func siblingResponder(t *testing.T, gated bool) (q string, gate chan struct{}) {
	t.Helper()
	q = brokertest.Queue(t, "rr-sibling")
	rawQueue(t, q, nil)
	gate = make(chan struct{}, 16)
	ch := rawChannel(t)
	reqs, err := ch.Consume(q, "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for d := range reqs {
			if gated {
				<-gate
			}
			_ = ch.Publish("", d.ReplyTo, false, false, amqp.Publishing{
				Type: quoteType.Name(), ContentType: wire.ContentTypeText, CorrelationId: d.CorrelationId,
				Body: append([]byte("reply to "), d.Body...)})
		}
	}()
	return q, gate
}

// TestTokenlessReplies: a reply without x-acemq-reply-token is matched by
// its correlation id, except where that is ambiguous: to a correlation id
// the caller chose whose earlier request went unanswered, the first such
// reply is taken for the earlier request's (dropped, counted) and the
// waiting request keeps waiting for the next.
func TestTokenlessReplies(t *testing.T) {
	c := dial(t)
	q, _ := siblingResponder(t, false)
	r := requester(t, c)
	for _, corr := range []string{"", "chosen-1"} {
		var opts []runtime.PublishOption
		if corr != "" {
			opts = append(opts, runtime.WithCorrelationID(corr))
		}
		got, err := runtime.Request(ctxFor(t, wait), r, quoteReqType, quoteType, "", "A-1", append(opts, runtime.WithRoutingKey(q))...)
		if err != nil || got != "reply to A-1" {
			t.Fatalf("correlation id %q: Request = %q, %v", corr, got, err)
		}
	}

	gq, gate := siblingResponder(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := runtime.Request(ctx, r, quoteReqType, quoteType, "", "first", runtime.WithRoutingKey(gq), runtime.WithCorrelationID("conversation-7")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("request 1: err = %v, want context.DeadlineExceeded", err)
	}
	done := make(chan struct{})
	var rep string
	var rerr error
	go func() {
		defer close(done)
		rep, rerr = runtime.Request(ctxFor(t, wait), r, quoteReqType, quoteType, "", "second", runtime.WithRoutingKey(gq), runtime.WithCorrelationID("conversation-7"))
	}()
	waitUntil(t, "request 2 waiting", func() bool { return r.Waiting() == 1 })
	gate <- struct{}{} // request 1's reply, without a token
	waitUntil(t, "LateReplies = 1", func() bool { return r.LateReplies() == 1 })
	gate <- struct{}{} // request 2's
	<-done
	if rerr != nil || rep != "reply to second" {
		t.Fatalf("request 2 = %q, %v; want %q", rep, rerr, "reply to second")
	}
}
