package runtime

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
	var cork *corkConn
	conn, err := amqp.DialConfig(url, amqp.Config{Dial: func(network, addr string) (net.Conn, error) {
		nc, err := net.DialTimeout(network, addr, 10*time.Second)
		if err != nil {
			return nil, err
		}
		sock = &countingConn{Conn: nc}
		cork = &corkConn{Conn: sock}
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
	p, err := newRequestPublisher(ctx, nil, ch, cork, func(amqp.Return) {}, &waiting)
	if err != nil {
		t.Fatal(err)
	}
	if p.waiting != &waiting || p.cork != cork {
		t.Fatalf("a Requester's publisher: gathering %v, corked %v; want both", p.waiting == &waiting, p.cork == cork)
	}
	const n = 16
	outcomes := make(chan error, n)
	batch := make([]*inflight, n)
	for i := range batch {
		msg := amqp.Publishing{MessageId: fmt.Sprint("req-", i), Body: []byte(fmt.Sprint("request ", i))}
		batch[i] = &inflight{key: returnKey{msg.MessageId, "", q}, msg: msg, ctx: ctx, then: func(err error) { outcomes <- err }}
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
	p := &publisher{cork: &corkConn{err: lost}}
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
