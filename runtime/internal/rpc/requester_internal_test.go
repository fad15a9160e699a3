package rpc

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
)

// A reply is decoded with its own fingerprint and the default limit, never
// with the decode info of a delivery the caller's ctx carries; with
// neither, with the caller's ctx itself, allocating nothing.
func TestReplyDecodeCtx(t *testing.T) {
	bare := context.Background()
	plain := amqp.Delivery{Headers: amqp.Table{wire.HeaderID: "id-1"}}
	if got := replyDecodeCtx(bare, plain); got != bare {
		t.Errorf("no fingerprint, no decode info: got a new ctx, want the caller's")
	}
	if n := testing.AllocsPerRun(1000, func() { _ = replyDecodeCtx(bare, plain) }); n != 0 {
		t.Errorf("no fingerprint, no decode info: %v allocations, want 0", n)
	}
	handler := core.WithDecodeInfo(bare, core.DecodeInfo{Fingerprint: "consumed", MaxBody: 5, CheckRequester: true})
	if got, want := core.DecodeInfoOf(replyDecodeCtx(handler, plain)), (core.DecodeInfo{MaxBody: core.DefaultMaxBodySize}); got != want {
		t.Errorf("in a handler's ctx: decode info %+v, want %+v", got, want)
	}
	fp := amqp.Delivery{Headers: amqp.Table{wire.HeaderSchemaFingerprint: "reply-fp"}}
	for _, ctx := range []context.Context{bare, handler} {
		if got, want := core.DecodeInfoOf(replyDecodeCtx(ctx, fp)), (core.DecodeInfo{Fingerprint: "reply-fp", MaxBody: core.DefaultMaxBodySize}); got != want {
			t.Errorf("a reply with a fingerprint: decode info %+v, want %+v", got, want)
		}
	}
}

// A call keeps the first of its reply and its failures; the later one is
// dropped, and the caller sees the kept one once done is closed.
func TestCallKeepsItsFirstOutcome(t *testing.T) {
	first := errors.New("returned")
	cl := &call{done: make(chan struct{})}
	cl.failWith(first)
	if cl.decide(amqp.Delivery{CorrelationId: "c1"}, nil) {
		t.Error("a reply after a failure was kept")
	}
	cl.failWith(errors.New("second"))
	<-cl.done
	if cl.err != first || cl.d.CorrelationId != "" {
		t.Errorf("after a failure then a reply: %v, %q; want the failure", cl.err, cl.d.CorrelationId)
	}

	cl = &call{done: make(chan struct{})}
	if !cl.decide(amqp.Delivery{CorrelationId: "c1"}, nil) {
		t.Error("the first reply was not kept")
	}
	cl.failWith(first)
	<-cl.done
	if cl.err != nil || cl.d.CorrelationId != "c1" {
		t.Errorf("after a reply then a failure: %v, %q; want the reply", cl.err, cl.d.CorrelationId)
	}

	// Concurrent outcomes (go test -race): exactly one is kept.
	cl = &call{done: make(chan struct{})}
	var wg sync.WaitGroup
	var mu sync.Mutex
	kept := 0
	for i := range 16 {
		wg.Go(func() {
			var ok bool
			if i%2 == 0 {
				ok = cl.decide(amqp.Delivery{CorrelationId: "c"}, nil)
			} else {
				ok = cl.decide(amqp.Delivery{}, first)
			}
			if ok {
				mu.Lock()
				kept++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	<-cl.done
	if kept != 1 {
		t.Errorf("%d outcomes kept, want 1", kept)
	}
}

// A request waiting for its reply costs two allocations: its call and
// the call's done channel (there were five: two buffered channels of two
// each).
func TestRequesterWaitAllocatesTheCallAndItsChannel(t *testing.T) {
	r := &Requester{waits: map[string]*call{}, byCorr: map[string]*call{}, owed: map[string]int{}}
	s := &replySession{}
	if n := testing.AllocsPerRun(1000, func() {
		cl, err := r.wait("token-1", "id-1", s)
		if err != nil {
			t.Fatal(err)
		}
		r.forget(cl, false)
	}); n != 2 {
		t.Errorf("wait and forget: %v allocations, want 2", n)
	}
}
