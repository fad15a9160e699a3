package amqpx

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// A Requester's publisher writes what its writer took in one go as one
// write to the socket (corked), and settles each request's publish only
// after that write: 16 requests, one write system call, 16 outcomes, all
// 16 in the queue, in order.
func TestRequestPublisherWritesItsBatchInOneWrite(t *testing.T) {
	url := brokertest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var sock *countingConn
	var cork *CorkConn
	conn, err := amqp.DialConfig(url, amqp.Config{Dial: func(network, addr string) (net.Conn, error) {
		nc, err := net.DialTimeout(network, addr, 10*time.Second)
		if err != nil {
			return nil, err
		}
		sock = &countingConn{Conn: nc}
		cork = &CorkConn{Conn: sock}
		return cork, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	q := brokertest.Queue(t, "reqbatch")
	if _, err := ch.QueueDeclare(q, false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	var waiting atomic.Int64
	p, err := NewRequestPublisher(ctx, nil, ch, cork, func(amqp.Return) {}, &waiting)
	if err != nil {
		t.Fatal(err)
	}
	if p.waiting != &waiting || p.cork != cork {
		t.Fatalf("a Requester's publisher: gathering %v, corked %v; want both", p.waiting == &waiting, p.cork == cork)
	}
	const n = 16
	outcomes := make(chan error, n)
	batch := make([]*Inflight, n)
	for i := range batch {
		msg := amqp.Publishing{MessageId: fmt.Sprint("req-", i), Body: []byte(fmt.Sprint("request ", i))}
		batch[i] = &Inflight{Key: ReturnKey{msg.MessageId, "", q}, Msg: msg, ctx: ctx, Then: func(err error) { outcomes <- err }}
		p.space <- struct{}{} // as enqueue takes its room
	}
	before := sock.writes.Load()
	p.writeBatch(batch) // as the writer does with what it took; the writer itself is idle
	if got := sock.writes.Load() - before; got != 1 {
		t.Fatalf("%d requests took %d writes to the socket, want 1", n, got)
	}
	for i := range n {
		select {
		case err := <-outcomes:
			if err != nil {
				t.Fatalf("outcome %d: %v, want nil", i, err)
			}
		case <-ctx.Done():
			t.Fatalf("%d of %d outcomes came", i, n)
		}
	}
	for i := range n {
		var d amqp.Delivery
		for ok := false; !ok; {
			if d, ok, err = ch.Get(q, true); err != nil {
				t.Fatal(err)
			}
			if !ok {
				if ctx.Err() != nil {
					t.Fatalf("%d of %d requests reached %s", i, n, q)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		if want := fmt.Sprint("request ", i); string(d.Body) != want {
			t.Fatalf("message %d of %s: %q, want %q", i, q, d.Body, want)
		}
	}
}

// When the socket's write of a corked batch failed, the batch's unconfirmed
// publishes are settled with that failure, not as written.
func TestSettleWrittenAfterAFailedFlush(t *testing.T) {
	lost := errors.New("broken pipe")
	p := &Publisher{cork: &CorkConn{Err: lost}}
	outcomes := make(chan error, 3)
	then := func(err error) { outcomes <- err }
	refused := errors.New("refused")
	p.wrote = []thenOutcome{{then: then}, {then: then, err: refused}, {then: then}}
	p.settleWritten()
	want := []error{lost, refused, lost}
	for i, w := range want {
		if err := <-outcomes; err != w {
			t.Errorf("outcome %d: %v, want %v", i, err, w)
		}
	}
	if len(p.wrote) != 0 {
		t.Errorf("%d outcomes left after settleWritten", len(p.wrote))
	}
}

// A Requester's written request is its caller's to settle (no drainer
// goroutine): settleWritten hands it over, unless its caller stopped
// waiting first or the write failed; then the writer settles it as
// before, once.
func TestSettleWrittenHandsARequestToItsCaller(t *testing.T) {
	outcomes := make(chan error, 4)
	then := func(err error) { outcomes <- err }
	p := &Publisher{}
	handed, left := &Inflight{CallerSettles: true, Then: then}, &Inflight{CallerSettles: true, Then: then}
	if left.CallerSettled() {
		t.Fatal("callerSettled before the write: true, want false (the writer keeps it)")
	}
	p.wrote = []thenOutcome{{then: then, f: handed}, {then: then, f: left}}
	p.settleWritten()
	if err := <-outcomes; err != nil {
		t.Fatalf("the request whose caller left: settled with %v, want nil", err)
	}
	select {
	case err := <-outcomes:
		t.Fatalf("the request handed to its caller was settled by the writer too (%v)", err)
	case <-time.After(50 * time.Millisecond):
	}
	if !handed.CallerSettled() {
		t.Fatal("callerSettled after the hand-over: false, want true")
	}

	lost := errors.New("broken pipe")
	failed := &Inflight{CallerSettles: true, Then: then}
	p = &Publisher{cork: &CorkConn{Err: lost}}
	p.wrote = []thenOutcome{{then: then, f: failed}}
	p.settleWritten()
	if err := <-outcomes; err != lost {
		t.Fatalf("a request whose flush failed: settled with %v, want %v", err, lost)
	}
	if failed.CallerSettled() {
		t.Fatal("callerSettled after a failed flush: true, want false (the writer settled it)")
	}
}
