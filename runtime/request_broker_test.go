package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// quoteReqType and quoteType are the request and reply types of these
// tests: text, so that a test can write and read them raw.
var (
	quoteReqType = runtime.NewTextType("acemq.test.quote-request")
	quoteType    = runtime.NewTextType("acemq.test.quote")
)

// responder starts a consumer on a fresh queue q answering quote requests
// with h, and returns q.
func responder(tb testing.TB, c *runtime.Connection, h runtime.RequestHandler[string, string], opts ...runtime.ConsumeOption) string {
	tb.Helper()
	q := brokertest.Queue(tb, "rr")
	rawQueue(tb, q, nil)
	spec := runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{runtime.HandleRequest(quoteReqType, quoteType, h)}}
	cs, err := runtime.Consume(ctxFor(tb, 10*time.Second), c, spec, opts...)
	if err != nil {
		tb.Fatalf("Consume %s: %v", q, err)
	}
	responders.Store(q, cs)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = cs.Close(ctx)
	})
	return q
}

// responders are the consumers responder started, by queue.
var responders sync.Map

func consumerOf(tb testing.TB, q string) *runtime.Consumer {
	tb.Helper()
	cs, ok := responders.Load(q)
	if !ok {
		tb.Fatalf("no responder on %s", q)
	}
	return cs.(*runtime.Consumer)
}

// waitUntil polls cond until it holds, failing the test after wait.
func waitUntil(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("waited %v: %s never held", wait, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// requester is a Requester on c, closed at cleanup.
func requester(tb testing.TB, c *runtime.Connection, opts ...runtime.RequesterOption) *runtime.Requester {
	tb.Helper()
	r := runtime.NewRequester(c, opts...)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = r.Close(ctx)
	})
	return r
}

func priced(_ context.Context, m *runtime.Message[string]) (string, error) {
	return "price of " + m.Payload, nil
}

func TestRequestGetsItsReply(t *testing.T) {
	c := dial(t)
	var ids sync.Map // the requests' correlation ids, as the responder saw them
	q := responder(t, c, func(ctx context.Context, m *runtime.Message[string]) (string, error) {
		if m.Envelope.CorrelationID == "" || m.Envelope.CorrelationID != m.Envelope.ID {
			return "", fmt.Errorf("correlation id %q, want the request's x-acemq-id %q", m.Envelope.CorrelationID, m.Envelope.ID)
		}
		if _, dup := ids.LoadOrStore(m.Envelope.CorrelationID, true); dup {
			return "", fmt.Errorf("correlation id %q came twice", m.Envelope.CorrelationID)
		}
		return priced(ctx, m)
	})
	r := requester(t, c)
	for _, sku := range []string{"A-1", "B-2"} {
		got, err := runtime.Request(ctxFor(t, wait), r, quoteReqType, quoteType, "", sku, runtime.WithRoutingKey(q))
		if err != nil {
			t.Fatalf("Request %s: %v", sku, err)
		}
		if want := "price of " + sku; got != want {
			t.Fatalf("reply = %q, want %q", got, want)
		}
	}
	if n := r.Waiting(); n != 0 {
		t.Fatalf("Waiting = %d after every reply came", n)
	}
}

// TestReplyWire reads a reply by hand, as a sibling library would: the
// correlation id comes back as the property, the reply's type in the type
// property and x-acemq-reply-type; an error reply carries
// x-acemq-reply-error and its code, and an empty body.
func TestReplyWire(t *testing.T) {
	c := dial(t)
	q := responder(t, c, func(_ context.Context, m *runtime.Message[string]) (string, error) {
		if m.Payload == "none" {
			return "", &runtime.ReplyError{Code: "unknown_sku", Reason: "no such sku: none"}
		}
		if m.Envelope.ReplyTo == "" || !strings.HasPrefix(m.Envelope.ReplyTo, "amq.rabbitmq.reply-to.") {
			return "", fmt.Errorf("Envelope.ReplyTo = %q", m.Envelope.ReplyTo)
		}
		return "12.50", nil
	})
	ch := rawChannel(t)
	replies, err := ch.Consume("amq.rabbitmq.reply-to", "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	ask := func(body, corr string) amqp.Delivery {
		t.Helper()
		err := ch.PublishWithContext(ctxFor(t, wait), "", q, true, false, amqp.Publishing{
			Type: quoteReqType.Name(), ContentType: wire.ContentTypeText, Body: []byte(body),
			CorrelationId: corr, ReplyTo: "amq.rabbitmq.reply-to",
			Headers: amqp.Table{wire.HeaderReplyType: quoteType.Name()},
		})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case d := <-replies:
			return d
		case <-time.After(wait):
			t.Fatalf("no reply to %q", body)
		}
		return amqp.Delivery{}
	}
	d := ask("A-1", "corr-1")
	if d.CorrelationId != "corr-1" || d.Type != quoteType.Name() || string(d.Body) != "12.50" ||
		headerString(t, d, wire.HeaderReplyType) != quoteType.Name() || headerString(t, d, wire.HeaderID) == "" {
		t.Fatalf("reply = corr %q type %q body %q headers %v", d.CorrelationId, d.Type, d.Body, d.Headers)
	}
	if _, ok := d.Headers[wire.HeaderReplyError]; ok {
		t.Fatalf("a reply carries %s: %v", wire.HeaderReplyError, d.Headers)
	}
	d = ask("none", "corr-2")
	if d.CorrelationId != "corr-2" || len(d.Body) != 0 ||
		headerString(t, d, wire.HeaderReplyError) != "no such sku: none" ||
		headerString(t, d, wire.HeaderReplyErrorCode) != "unknown_sku" {
		t.Fatalf("error reply = corr %q body %q headers %v", d.CorrelationId, d.Body, d.Headers)
	}
}

func TestRequestGetsTheRespondersError(t *testing.T) {
	origin := brokertest.Name("rr-responder")
	c := dial(t, runtime.WithOrigin(origin))
	q := responder(t, c, func(_ context.Context, m *runtime.Message[string]) (string, error) {
		switch m.Payload {
		case "coded":
			return "", &runtime.ReplyError{Code: "unknown_sku", Reason: "no such sku"}
		case "panic":
			panic("out of stock table")
		}
		return "", errors.New("pricing is closed")
	})
	r := requester(t, c)
	for _, tc := range []struct{ body, code, reason string }{
		{"coded", "unknown_sku", "no such sku"},
		{"plain", "error", "pricing is closed"},
		{"panic", "panic", "out of stock table"},
	} {
		start := time.Now()
		_, err := runtime.Request(ctxFor(t, wait), r, quoteReqType, quoteType, "", tc.body, runtime.WithRoutingKey(q))
		var re *runtime.ReplyError
		if !errors.As(err, &re) {
			t.Fatalf("%s: err = %v, want a *ReplyError", tc.body, err)
		}
		if re.Code != tc.code || !strings.Contains(re.Reason, tc.reason) || re.Request != quoteReqType.Name() || re.Responder != origin {
			t.Fatalf("%s: ReplyError = %+v, want code %q reason containing %q from %q", tc.body, re, tc.code, tc.reason, origin)
		}
		if errors.Is(err, context.DeadlineExceeded) || time.Since(start) > wait/2 {
			t.Fatalf("%s: the error came as a timeout: %v", tc.body, err)
		}
	}
	waitDepth(t, q+".dlq", 0, wait)
	if n := depth(t, q); n != 0 {
		t.Fatalf("%s holds %d requests after their error replies", q, n)
	}
}

// TestLateReplyIsDroppedAndCounted: a caller whose ctx ends gets ctx's
// error; its reply, when it comes, is dropped and counted, and the next
// request gets its own reply, not that one.
func TestLateReplyIsDroppedAndCounted(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	c := dial(t, runtime.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	gate := make(chan struct{})
	q := responder(t, c, func(_ context.Context, m *runtime.Message[string]) (string, error) {
		if m.Payload == "slow" {
			<-gate
		}
		return "reply to " + m.Payload, nil
	}, runtime.WithConcurrency(2))
	r := requester(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := runtime.Request(ctx, r, quoteReqType, quoteType, "", "slow", runtime.WithRoutingKey(q))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	close(gate)
	deadline := time.Now().Add(wait)
	for r.LateReplies() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("LateReplies = %d, want 1", r.LateReplies())
		}
		time.Sleep(20 * time.Millisecond)
	}
	got, err := runtime.Request(ctxFor(t, wait), r, quoteReqType, quoteType, "", "next", runtime.WithRoutingKey(q))
	if err != nil || got != "reply to next" {
		t.Fatalf("next request = %q, %v; want its own reply", got, err)
	}
	if n := r.LateReplies(); n != 1 {
		t.Fatalf("LateReplies = %d, want 1", n)
	}
	// The metrics say the same: one late reply on amq.rabbitmq.reply-to,
	// two requests timed, one timed out, one answered.
	late, _ := points(t, reader, wire.MetricLateReplies)
	if k := queueKey("amq.rabbitmq.reply-to"); late[k] != 1 || len(late) != 1 {
		t.Errorf("%s = %v, want {%s: 1}", wire.MetricLateReplies, late, k)
	}
	timed, _ := points(t, reader, wire.MetricRequestDuration)
	var ok, timedOut float64
	for k, n := range timed {
		if !strings.Contains(k, "acemq.message.type="+quoteReqType.Name()) || !strings.Contains(k, "acemq.reply.type="+quoteType.Name()) {
			t.Errorf("%s{%s}: not the request's and its reply's types", wire.MetricRequestDuration, k)
		}
		switch {
		case strings.Contains(k, "error.type=timeout"):
			timedOut += n
		case !strings.Contains(k, "error.type="):
			ok += n
		default:
			t.Errorf("%s{%s} = %v: an error type no request had", wire.MetricRequestDuration, k, n)
		}
	}
	if ok != 1 || timedOut != 1 {
		t.Errorf("%s: %v answered, %v timed out, want 1 and 1: %v", wire.MetricRequestDuration, ok, timedOut, timed)
	}
}

// TestRequestExpiresWithItsCaller: a request waiting in its queue past its
// caller's ctx expires there; the responder never sees it.
func TestRequestExpiresWithItsCaller(t *testing.T) {
	c := dial(t)
	q := brokertest.Queue(t, "rr")
	rawQueue(t, q, nil)
	r := requester(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := runtime.Request(ctx, r, quoteReqType, quoteType, "", "A-1", runtime.WithRoutingKey(q)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	waitDepth(t, q, 0, wait)
}

// TestRequestNoQueueTakesIsUnroutable: with confirms or without (the
// broker's basic.return, matched by correlation id), a request no queue
// takes fails at once with ErrUnroutable, not at its ctx's end.
func TestRequestNoQueueTakesIsUnroutable(t *testing.T) {
	c := dial(t)
	for _, confirms := range []bool{false, true} {
		var opts []runtime.RequesterOption
		if confirms {
			opts = append(opts, runtime.WithRequestConfirms())
		}
		r := requester(t, c, opts...)
		start := time.Now()
		_, err := runtime.Request(ctxFor(t, wait), r, quoteReqType, quoteType, "", "A-1", runtime.WithRoutingKey(brokertest.Name("rr-none")))
		if !errors.Is(err, runtime.ErrUnroutable) {
			t.Fatalf("confirms %v: err = %v, want ErrUnroutable", confirms, err)
		}
		if took := time.Since(start); took > wait/2 {
			t.Fatalf("confirms %v: the unroutable request failed after %v, not at once", confirms, took)
		}
		if n := r.Waiting(); n != 0 {
			t.Fatalf("confirms %v: Waiting = %d after the request failed", confirms, n)
		}
	}
}

// TestRequestConfirmsReportANack: a request queue that refuses every
// publish (x-max-length 0, x-overflow reject-publish) nacks the request;
// with WithRequestConfirms the caller gets ErrNacked at once, without it
// (the default: the reply is the confirmation) its ctx's end.
func TestRequestConfirmsReportANack(t *testing.T) {
	c := dial(t)
	q := brokertest.Queue(t, "rr-full")
	rawQueue(t, q, amqp.Table{"x-max-length": int32(0), "x-overflow": "reject-publish"})
	r := requester(t, c, runtime.WithRequestConfirms())
	_, err := runtime.Request(ctxFor(t, wait), r, quoteReqType, quoteType, "", "A-1", runtime.WithRoutingKey(q))
	if !errors.Is(err, runtime.ErrNacked) {
		t.Fatalf("with confirms: err = %v, want ErrNacked", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = runtime.Request(ctx, requester(t, c), quoteReqType, quoteType, "", "A-1", runtime.WithRoutingKey(q))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("without confirms: err = %v, want the ctx's DeadlineExceeded", err)
	}
}

// TestThousandConcurrentRequests: 1,000 requests in flight at once on one
// Requester (one channel), each answered with its own reply.
func TestThousandConcurrentRequests(t *testing.T) {
	c := dial(t)
	q := responder(t, c, priced, runtime.WithConcurrency(16), runtime.WithPrefetch(256))
	r := requester(t, c)
	const n = 1000
	ctx := ctxFor(t, 60*time.Second)
	var wrong, failed atomic.Int64
	var first sync.Once
	var firstErr error
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sku := fmt.Sprintf("sku-%d", i)
			got, err := runtime.Request(ctx, r, quoteReqType, quoteType, "", sku, runtime.WithRoutingKey(q))
			switch {
			case err != nil:
				failed.Add(1)
				first.Do(func() { firstErr = err })
			case got != "price of "+sku:
				wrong.Add(1)
			}
		}()
	}
	wg.Wait()
	if failed.Load() != 0 || wrong.Load() != 0 {
		t.Fatalf("of %d requests %d failed (first: %v), %d got another's reply", n, failed.Load(), firstErr, wrong.Load())
	}
	if late := r.LateReplies(); late != 0 {
		t.Fatalf("LateReplies = %d", late)
	}
}

// TestReplyQueue: with WithReplyQueue the replies come through a durable
// queue of the requester's own, with a TTL (RabbitMQ 4.3 refuses transient
// queues that are not exclusive).
func TestReplyQueue(t *testing.T) {
	c := dial(t)
	q := responder(t, c, priced)
	r := requester(t, c, runtime.WithReplyQueue(brokertest.Name("rr-replies"), time.Minute))
	replies := r.ReplyTo() // acemq.reply.<name>: the shape a responder replies to
	t.Cleanup(func() { brokertest.DeleteQueues(t, replies) })
	got, err := runtime.Request(ctxFor(t, wait), r, quoteReqType, quoteType, "", "A-1", runtime.WithRoutingKey(q))
	if err != nil || got != "price of A-1" {
		t.Fatalf("Request = %q, %v", got, err)
	}
	info := brokertest.QueueDetails(t, replies)
	if !info.Durable || fmt.Sprint(info.Arguments["x-expires"]) != "60000" {
		t.Fatalf("reply queue %s: durable %v arguments %v; want durable, x-expires 60000", replies, info.Durable, info.Arguments)
	}
}

// TestRequesterCheckSkipsAGoneCaller: with WithRequesterCheck, a request
// whose caller's channel closed before the responder took it is settled
// without calling the handler.
func TestRequesterCheckSkipsAGoneCaller(t *testing.T) {
	c := dial(t)
	q := brokertest.Queue(t, "rr")
	rawQueue(t, q, nil)
	ch := openChannel(t)
	if _, err := ch.Consume("amq.rabbitmq.reply-to", "", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	err := ch.PublishWithContext(ctxFor(t, wait), "", q, true, false, amqp.Publishing{
		Type: quoteReqType.Name(), Body: []byte("A-1"), CorrelationId: "gone-1", ReplyTo: "amq.rabbitmq.reply-to"})
	if err != nil {
		t.Fatal(err)
	}
	waitDepth(t, q, 1, wait)
	_ = ch.Close() // the caller goes away
	var calls atomic.Int64
	spec := runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{runtime.HandleRequest(quoteReqType, quoteType,
		func(ctx context.Context, m *runtime.Message[string]) (string, error) {
			calls.Add(1)
			return priced(ctx, m)
		})}}
	cs, err := runtime.Consume(ctxFor(t, wait), c, spec, runtime.WithRequesterCheck())
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctxFor(t, wait))
	deadline := time.Now().Add(wait)
	for cs.Stats().Handled["accepted"] != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v: the request was not settled", cs.Stats())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("the handler ran %d times for a request whose caller had gone", n)
	}
	waitDepth(t, q, 0, wait)
}

// TestRetryRequestWithGoneCallerSpendsNoLadder: a handler that asks for a
// retry of a request whose caller has gone does not send it up the ladder.
func TestRetryRequestWithGoneCallerSpendsNoLadder(t *testing.T) {
	c := dial(t)
	var calls atomic.Int64
	gone := make(chan struct{})
	q := responder(t, c, func(_ context.Context, m *runtime.Message[string]) (string, error) {
		calls.Add(1)
		<-gone
		return "", runtime.RetryRequest(errors.New("the price list is loading"))
	}, runtime.WithRetry(runtime.Fixed(5, 50*time.Millisecond)))
	ch := openChannel(t)
	if _, err := ch.Consume("amq.rabbitmq.reply-to", "", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	err := ch.PublishWithContext(ctxFor(t, wait), "", q, true, false, amqp.Publishing{
		Type: quoteReqType.Name(), Body: []byte("A-1"), CorrelationId: "gone-2", ReplyTo: "amq.rabbitmq.reply-to"})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(wait)
	for calls.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the handler was never called")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = ch.Close()
	close(gone)
	// Settled as accepted (not retried, not dead-lettered) is the decision.
	deadline = time.Now().Add(wait)
	for cs := consumerOf(t, q); cs.Stats().Handled["accepted"] != 1; {
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v: the request was not settled", cs.Stats())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st := consumerOf(t, q).Stats(); st.Handled["retried"] != 0 {
		t.Fatalf("stats %+v: a request whose caller has gone was retried", st)
	}
	waitDepth(t, q, 0, wait)
	if n := calls.Load(); n != 1 {
		t.Fatalf("the handler ran %d times; a request whose caller has gone must not be retried", n)
	}
	if n := depth(t, q+".dlq"); n != 0 {
		t.Fatalf("%s.dlq holds %d", q, n)
	}
}

// TestRetryRequestWhileTheCallerWaits: a RetryRequest with the caller still
// there retries, and the caller gets the reply of the later attempt.
func TestRetryRequestWhileTheCallerWaits(t *testing.T) {
	c := dial(t)
	q := responder(t, c, func(_ context.Context, m *runtime.Message[string]) (string, error) {
		if m.Envelope.Attempt == 1 {
			return "", runtime.RetryRequest(errors.New("the price list is loading"))
		}
		return fmt.Sprintf("%s on attempt %d", m.Payload, m.Envelope.Attempt), nil
	}, runtime.WithRetry(runtime.Fixed(3, 50*time.Millisecond)))
	r := requester(t, c)
	got, err := runtime.Request(ctxFor(t, wait), r, quoteReqType, quoteType, "", "A-1", runtime.WithRoutingKey(q))
	if err != nil || got != "A-1 on attempt 2" {
		t.Fatalf("Request = %q, %v; want the second attempt's reply", got, err)
	}
}

// TestBadRequestIsAnsweredAndParked: a request that does not decode is
// parked, and its caller is told why instead of waiting out its ctx.
func TestBadRequestIsAnsweredAndParked(t *testing.T) {
	c := dial(t)
	type order struct {
		ID string `json:"id"`
	}
	orderType := runtime.NewJSONType[order]("acemq.test.order-request", `{"type":"object","required":["id"]}`)
	q := brokertest.Queue(t, "rr")
	rawQueue(t, q, nil)
	spec := runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{runtime.HandleRequest(orderType, quoteType,
		func(_ context.Context, m *runtime.Message[order]) (string, error) { return m.Payload.ID, nil })}}
	cs, err := runtime.Consume(ctxFor(t, wait), c, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctxFor(t, wait))
	ch := rawChannel(t)
	replies, err := ch.Consume("amq.rabbitmq.reply-to", "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = ch.PublishWithContext(ctxFor(t, wait), "", q, true, false, amqp.Publishing{
		Type: orderType.Name(), ContentType: "application/json", Body: []byte(`{"nope":1}`), CorrelationId: "bad-1", ReplyTo: "amq.rabbitmq.reply-to"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-replies:
		if d.CorrelationId != "bad-1" || headerString(t, d, wire.HeaderReplyErrorCode) != "bad_request" ||
			!strings.Contains(headerString(t, d, wire.HeaderReplyError), "id") {
			t.Fatalf("reply corr %q headers %v", d.CorrelationId, d.Headers)
		}
	case <-time.After(wait):
		t.Fatal("no reply to a bad request")
	}
	waitDepth(t, q+".parked", 1, wait)
}

// TestRequestWithoutReplyToIsParked: nowhere to reply, nothing lost.
func TestRequestWithoutReplyToIsParked(t *testing.T) {
	c := dial(t)
	q := responder(t, c, priced)
	rawPublish(t, q, amqp.Publishing{Type: quoteReqType.Name(), Body: []byte("A-1")})
	d := getOne(t, q+".parked", wait)
	if why := headerString(t, d, wire.HeaderError); !strings.Contains(why, "without reply_to") {
		t.Fatalf("parked with %q", why)
	}
}

// TestWrongReplyTypeIsAnswered: a caller expecting another reply type is
// told so.
func TestWrongReplyTypeIsAnswered(t *testing.T) {
	c := dial(t)
	q := responder(t, c, priced)
	r := requester(t, c)
	other := runtime.NewTextType("acemq.test.other-reply")
	_, err := runtime.Request(ctxFor(t, wait), r, quoteReqType, other, "", "A-1", runtime.WithRoutingKey(q))
	var re *runtime.ReplyError
	if !errors.As(err, &re) || re.Code != "wrong_reply_type" || !strings.Contains(re.Reason, other.Name()) {
		t.Fatalf("err = %v, want a wrong_reply_type ReplyError naming %s", err, other.Name())
	}
}

// TestRequesterCloseFailsWaitingRequests: Close ends every wait with
// ErrNoReply and ErrClosed.
func TestRequesterCloseFailsWaitingRequests(t *testing.T) {
	c := dial(t)
	q := brokertest.Queue(t, "rr")
	rawQueue(t, q, nil) // nobody answers
	r := runtime.NewRequester(c)
	errs := make(chan error, 1)
	go func() {
		_, err := runtime.Request(ctxFor(t, wait), r, quoteReqType, quoteType, "", "A-1", runtime.WithRoutingKey(q))
		errs <- err
	}()
	waitUntil(t, "the request waits", func() bool { return r.Waiting() == 1 })
	if err := r.Close(ctxFor(t, wait)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		if !errors.Is(err, runtime.ErrNoReply) || !errors.Is(err, runtime.ErrClosed) {
			t.Fatalf("err = %v, want ErrNoReply and ErrClosed", err)
		}
	case <-time.After(wait):
		t.Fatal("Request still waits after Close")
	}
	if _, err := runtime.Request(ctxFor(t, wait), r, quoteReqType, quoteType, "", "A-1", runtime.WithRoutingKey(q)); !errors.Is(err, runtime.ErrClosed) {
		t.Fatalf("Request after Close: %v", err)
	}
}

// TestRequesterConnectionLost: the caller's own connection is cut while it
// waits (a connection this test opened): the request fails at once with
// ErrNoReply and ErrUnavailable, and the next request, on a fresh
// connection, gets its reply.
func TestRequesterConnectionLost(t *testing.T) {
	origin := brokertest.Name("rr-caller")
	c := dial(t, runtime.WithOrigin(origin))
	serving := dial(t)
	gate := make(chan struct{})
	var once sync.Once
	q := responder(t, serving, func(ctx context.Context, m *runtime.Message[string]) (string, error) {
		if m.Payload == "held" {
			<-gate
		}
		return priced(ctx, m)
	}, runtime.WithConcurrency(2))
	defer once.Do(func() { close(gate) })
	r := requester(t, c)
	errs := make(chan error, 1)
	go func() {
		_, err := runtime.Request(ctxFor(t, wait), r, quoteReqType, quoteType, "", "held", runtime.WithRoutingKey(q))
		errs <- err
	}()
	waitUntil(t, "the request waits", func() bool { return r.Waiting() == 1 })
	start := time.Now()
	if n := brokertest.KillConnections(t, origin); n == 0 {
		t.Fatal("the broker listed no connection named", origin)
	}
	select {
	case err := <-errs:
		if !errors.Is(err, runtime.ErrNoReply) || !errors.Is(err, runtime.ErrUnavailable) {
			t.Fatalf("err = %v, want ErrNoReply and ErrUnavailable", err)
		}
		t.Logf("failed %v after the cut: %v", time.Since(start).Round(time.Millisecond), err)
	case <-time.After(wait):
		t.Fatal("Request still waits after its connection was lost")
	}
	once.Do(func() { close(gate) })
	got, err := runtime.Request(ctxFor(t, wait), r, quoteReqType, quoteType, "", "A-2", runtime.WithRoutingKey(q))
	if err != nil || got != "price of A-2" {
		t.Fatalf("after the cut: %q, %v", got, err)
	}
}

type quoteTenantKey struct{}

// TestRequestHandlerRunsInsideMiddleware: a consumer's middlewares wrap a
// request handler as they wrap any: the handler sees the ctx a middleware
// passes on, and the reply still goes back.
func TestRequestHandlerRunsInsideMiddleware(t *testing.T) {
	c := dial(t)
	var seen atomic.Value
	mw := func(next runtime.HandlerFunc) runtime.HandlerFunc {
		return func(ctx context.Context, in *runtime.Incoming) runtime.Ack {
			seen.Store(in.Payload())
			return next(context.WithValue(ctx, quoteTenantKey{}, "t-7"), in)
		}
	}
	q := responder(t, c, func(ctx context.Context, m *runtime.Message[string]) (string, error) {
		tenant, _ := ctx.Value(quoteTenantKey{}).(string)
		return m.Payload + " for " + tenant, nil
	}, runtime.WithMiddleware(mw))
	r := requester(t, c)
	got, err := runtime.Request(ctxFor(t, wait), r, quoteReqType, quoteType, "", "A-1", runtime.WithRoutingKey(q))
	if err != nil || got != "A-1 for t-7" {
		t.Fatalf("Request = %q, %v; want the handler's reply with the middleware's ctx", got, err)
	}
	if p, _ := seen.Load().(string); p != "A-1" {
		t.Fatalf("the middleware saw payload %v", seen.Load())
	}
}

// TestRequestPublishEndsOnce: each request's publish span ends once, as a
// success, whether its caller got the reply or gave up waiting (the caller
// settles a written request itself, the writer one it did not write).
func TestRequestPublishEndsOnce(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	c := dial(t, runtime.WithTracerProvider(tp))
	gate := make(chan struct{})
	defer close(gate)
	q := responder(t, c, func(_ context.Context, m *runtime.Message[string]) (string, error) {
		if m.Payload == "slow" {
			<-gate
		}
		return "reply to " + m.Payload, nil
	}, runtime.WithConcurrency(2))
	r := requester(t, c)
	const answered = 5
	for i := range answered {
		if _, err := runtime.Request(ctxFor(t, wait), r, quoteReqType, quoteType, "", fmt.Sprint("q", i), runtime.WithRoutingKey(q)); err != nil {
			t.Fatalf("Request %d: %v", i, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := runtime.Request(ctx, r, quoteReqType, quoteType, "", "slow", runtime.WithRoutingKey(q)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the slow request: %v, want context.DeadlineExceeded", err)
	}
	deadline := time.Now().Add(wait)
	for len(publishSpans(spans.Ended(), q)) < answered+1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // a second End would be recorded by now
	ended := publishSpans(spans.Ended(), q)
	if len(ended) != answered+1 {
		for _, s := range spans.Ended() {
			t.Logf("span %s kind %v attrs %v", s.Name(), s.SpanKind(), s.Attributes())
		}
		t.Fatalf("%d publish spans ended, want %d (one a request)", len(ended), answered+1)
	}
	for _, s := range ended {
		if s.Status().Code == codes.Error {
			t.Errorf("publish span %s ended with an error: %s", s.Name(), s.Status().Description)
		}
	}
}

// publishSpans are the producer spans of publishes routed to key.
func publishSpans(all []sdktrace.ReadOnlySpan, key string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range all {
		if s.SpanKind() != trace.SpanKindProducer {
			continue
		}
		for _, a := range s.Attributes() {
			if a.Key == "messaging.rabbitmq.destination.routing_key" && a.Value.AsString() == key {
				out = append(out, s)
			}
		}
	}
	return out
}
