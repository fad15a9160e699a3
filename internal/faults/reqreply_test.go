//go:build faults

package faults

// Request/reply under faults (issue 21, item 4): the responder's
// connection lost mid-request, the caller's connection lost, and no
// goroutine left after Close.

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

var quoteReq = runtime.NewTextType("acemq.faults.quote-request")

// serveQuotes starts a responder on q on c whose handler is h.
func serveQuotes(t *testing.T, c *runtime.Connection, q string, h runtime.RequestHandler[string, string]) *runtime.Consumer {
	t.Helper()
	cs, err := runtime.Consume(ctxFor(t, 20*time.Second), c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
		runtime.HandleRequest(quoteReq, text, h),
	}}, runtime.WithConcurrency(4))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(ctxFor(t, 10*time.Second)) })
	return cs
}

func closeRequester(t *testing.T, r *runtime.Requester) {
	t.Helper()
	if err := r.Close(ctxFor(t, 10*time.Second)); err != nil {
		t.Errorf("Requester.Close: %v", err)
	}
}

// The responder's connection is cut while its handler works on a request:
// the request was not acked, so the broker gives it to the responder again
// once it has resubscribed, and the caller, still within its ctx, gets a
// reply; a reply of the first run, if it was sent too, is dropped as late.
// Nothing waits past the caller's ctx.
func TestRequestResponderConnectionLostMidRequest(t *testing.T) {
	leakCheck(t)
	q := queue(t, "rr-responder-lost", nil)
	origin := Name("rr-responder")
	serving := dial(t, runtime.WithOrigin(origin), runtime.WithReconnectBackoff(50*time.Millisecond, 500*time.Millisecond))
	started := make(chan struct{}, 4)
	cut := make(chan struct{})
	var runs atomic.Int64
	cs := serveQuotes(t, serving, q, func(ctx context.Context, m *runtime.Message[string]) (string, error) {
		n := runs.Add(1)
		if n == 1 {
			started <- struct{}{}
			<-cut // the connection dies meanwhile
		}
		return fmt.Sprintf("quote for %s (run %d, redelivered %v)", m.Payload, n, m.Redelivered), nil
	})
	c := dial(t)
	r := runtime.NewRequester(c)
	const timeout = 20 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	type result struct {
		reply string
		err   error
		took  time.Duration
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		reply, err := runtime.Request(ctx, r, quoteReq, text, "", "A-1", runtime.WithRoutingKey(q))
		done <- result{reply, err, time.Since(start)}
	}()
	select {
	case <-started:
	case <-time.After(timeout):
		t.Fatal("the responder never got the request")
	}
	if n := KillConnections(t, origin, 10*time.Second); n == 0 {
		t.Fatal("no connection to cut")
	}
	close(cut)
	var got result
	select {
	case got = <-done:
	case <-time.After(timeout + 2*time.Second):
		t.Fatalf("Request still waits %s past its ctx", 2*time.Second)
	}
	if got.err != nil {
		t.Fatalf("Request after the responder's connection was cut: %v (after %s)", got.err, got.took)
	}
	// The first run's reply may reach the caller (sent on the reconnected
	// connection) before the redelivery runs: then the second run's reply
	// is the late one. Either way the request runs again and exactly one
	// reply is dropped as late.
	deadline := time.Now().Add(20 * time.Second)
	for runs.Load() < 2 || r.LateReplies() < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("runs %d late replies %d; want the redelivery run and its reply dropped as late", runs.Load(), r.LateReplies())
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("fault=responder-connection-lost reply=%q took_ms=%d late=%d runs=%d", got.reply, got.took.Milliseconds(), r.LateReplies(), runs.Load())
	if n := r.LateReplies(); n != 1 {
		t.Errorf("LateReplies = %d, want 1", n)
	}
	closeRequester(t, r)
	_ = cs.Close(ctxFor(t, 10*time.Second))
}

// With the responder gone for good, the caller's ctx decides: Request
// returns ctx's error by its deadline, and Close leaves nothing behind.
func TestRequestNoResponderCtxDecides(t *testing.T) {
	leakCheck(t)
	q := queue(t, "rr-no-responder", nil)
	c := dial(t)
	r := runtime.NewRequester(c)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	_, err := runtime.Request(ctx, r, quoteReq, text, "", "A-1", runtime.WithRoutingKey(q))
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	if took > 2*time.Second {
		t.Errorf("Request with a 1s ctx returned after %s", took)
	}
	closeRequester(t, r)
}

// The caller's own connection is cut while it waits: direct reply-to can
// no longer bring the reply, so Request fails at once (not at its ctx)
// with ErrNoReply and ErrUnavailable; the broker drops the reply the
// responder sends; the next request, on a fresh connection, works; no
// goroutine is left after Close.
func TestRequestCallerConnectionLost(t *testing.T) {
	leakCheck(t)
	q := queue(t, "rr-caller-lost", nil)
	serving := dial(t)
	release := make(chan struct{})
	var released atomic.Bool
	defer func() {
		if released.CompareAndSwap(false, true) {
			close(release)
		}
	}()
	cs := serveQuotes(t, serving, q, func(_ context.Context, m *runtime.Message[string]) (string, error) {
		if m.Payload == "held" {
			<-release
		}
		return "quote for " + m.Payload, nil
	})
	origin := Name("rr-caller")
	c := dial(t, runtime.WithOrigin(origin))
	r := runtime.NewRequester(c)
	const timeout = 30 * time.Second
	errs := make(chan error, 1)
	go func() {
		_, err := runtime.Request(ctxFor(t, timeout), r, quoteReq, text, "", "held", runtime.WithRoutingKey(q))
		errs <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for r.Waiting() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the request never waited")
		}
		time.Sleep(10 * time.Millisecond)
	}
	WaitListed(t, origin, 10*time.Second)
	start := time.Now()
	if n := KillConnections(t, origin, 10*time.Second); n == 0 {
		t.Fatal("no connection to cut")
	}
	select {
	case err := <-errs:
		if !errors.Is(err, runtime.ErrNoReply) || !errors.Is(err, runtime.ErrUnavailable) {
			t.Fatalf("err = %v, want ErrNoReply and ErrUnavailable", err)
		}
		t.Logf("fault=caller-connection-lost failed_after_ms=%d err=%q", time.Since(start).Milliseconds(), err)
	case <-time.After(timeout):
		t.Fatal("Request still waits after its connection was cut")
	}
	released.Store(true)
	close(release) // the reply to the dead channel: dropped by the broker
	reply, err := runtime.Request(ctxFor(t, timeout), r, quoteReq, text, "", "A-2", runtime.WithRoutingKey(q))
	if err != nil || reply != "quote for A-2" {
		t.Fatalf("the next request: %q, %v", reply, err)
	}
	if n := r.LateReplies(); n != 0 {
		t.Errorf("LateReplies = %d: a reply to the dead channel reached the new one", n)
	}
	closeRequester(t, r)
	_ = cs.Close(ctxFor(t, 10*time.Second))
}

// Many requests on one connection, then Close: every goroutine of the
// Requester, its channel and the responder is gone.
func TestRequesterLeavesNoGoroutines(t *testing.T) {
	leakCheck(t)
	q := queue(t, "rr-leak", nil)
	serving := dial(t)
	cs := serveQuotes(t, serving, q, func(_ context.Context, m *runtime.Message[string]) (string, error) {
		return "quote for " + m.Payload, nil
	})
	c := dial(t)
	r := runtime.NewRequester(c)
	replies := runtime.NewRequester(c, runtime.WithReplyQueue(q+".replies", time.Minute))
	for i := range 50 {
		for _, rq := range []*runtime.Requester{r, replies} {
			body := fmt.Sprintf("sku-%d", i)
			got, err := runtime.Request(ctxFor(t, 20*time.Second), rq, quoteReq, text, "", body, runtime.WithRoutingKey(q))
			if err != nil || got != "quote for "+body {
				t.Fatalf("request %d: %q, %v", i, got, err)
			}
		}
	}
	closeRequester(t, r)
	closeRequester(t, replies)
	_ = cs.Close(ctxFor(t, 10*time.Second))
	if err := c.Close(ctxFor(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := serving.Close(ctxFor(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
}

// A reply sent while the requester's connection is down is not lost with
// WithReplyQueue (issue 21, item 3): it waits in the reply queue and
// reaches its caller once the Requester has reconnected. The requester
// reaches the node through a proxy: the proxy cuts its connection while
// the responder holds the request, then holds the reconnection's
// basic.consume on the reply queue, so that the reply is sent while no
// consumer takes it (the queue holds it: asserted); a second cut lets the
// next reconnection subscribe, and the waiting Request gets that reply.
func TestReplyQueueSurvivesTheRequestersReconnect(t *testing.T) {
	leakCheck(t)
	q := queue(t, "rr-replyq-reconnect", nil)
	replies := q + ".replies"
	serving := dial(t)
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	var released atomic.Bool
	defer func() {
		if released.CompareAndSwap(false, true) {
			close(release)
		}
	}()
	cs := serveQuotes(t, serving, q, func(_ context.Context, m *runtime.Message[string]) (string, error) {
		if m.Payload == "held" {
			started <- struct{}{}
			<-release
		}
		return "quote for " + m.Payload, nil
	})
	px, err := NewProxy(fmt.Sprintf("127.0.0.1:%d", AMQPPort))
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	c := dialQuiet(t, "amqp://guest:guest@"+px.Addr()+"/", runtime.WithReconnectBackoff(50*time.Millisecond, 500*time.Millisecond))
	r := runtime.NewRequester(c, runtime.WithReplyQueue(replies, time.Minute))
	replies = r.ReplyTo() // acemq.reply.<name>
	const timeout = 30 * time.Second
	type result struct {
		reply string
		err   error
	}
	done := make(chan result, 1)
	go func() {
		reply, err := runtime.Request(ctxFor(t, timeout), r, quoteReq, text, "", "held", runtime.WithRoutingKey(q))
		done <- result{reply, err}
	}()
	select {
	case <-started:
	case <-time.After(timeout):
		t.Fatal("the responder never got the request")
	}
	consumeHeld := px.StallToBrokerAt(BasicConsume, 1)
	if n := px.Cut(); n == 0 {
		t.Fatal("no connection through the proxy to cut")
	}
	select {
	case <-consumeHeld:
	case <-time.After(20 * time.Second):
		t.Fatal("the Requester never resubscribed to its reply queue after the cut")
	}
	released.Store(true)
	close(release) // the reply goes to the reply queue, which nobody consumes now
	deadline := time.Now().Add(20 * time.Second)
	for {
		n, err := QueueDepth(replies)
		if err == nil && n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reply queue %s holds %d messages (%v), want the reply sent while the requester was away", replies, n, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	select {
	case got := <-done:
		t.Fatalf("Request returned while its reply waited in the queue: %q, %v", got.reply, got.err)
	default:
	}
	if n := px.Cut(); n == 0 {
		t.Fatal("no held connection to cut")
	}
	select {
	case got := <-done:
		if got.err != nil || got.reply != "quote for held" {
			t.Fatalf("Request after the reconnect: %q, %v; want the reply that waited in %s", got.reply, got.err, replies)
		}
	case <-time.After(timeout):
		t.Fatal("Request never got the reply that waited in its queue")
	}
	if n := r.LateReplies(); n != 0 {
		t.Errorf("LateReplies = %d, want 0", n)
	}
	t.Logf("fault=requester-reconnect reply_queue=%s reply_survived=true", replies)
	closeRequester(t, r)
	_ = cs.Close(ctxFor(t, 10*time.Second))
	if err := c.Close(ctxFor(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
}
