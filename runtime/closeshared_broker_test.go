package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
)

// Closing one consumer with a ctx shorter than its running handler gives
// up on that consumer's channel only (issue 19, item 3): another consumer
// on the same Connection keeps its channel and the connection, and the
// abandoned delivery goes back to its queue.
func TestConsumerCloseAbandonsItsChannelNotTheConnection(t *testing.T) {
	t.Parallel()
	qa := brokertest.Queue(t, "close.shared.a")
	qb := brokertest.Queue(t, "close.shared.b")
	rawQueue(t, qa, nil)
	rawQueue(t, qb, nil)
	c := dial(t)
	started := make(chan struct{}, 1)
	a, _ := consume(t, c, qa, nil, func(seen) runtime.Ack {
		started <- struct{}{}
		time.Sleep(1500 * time.Millisecond)
		return runtime.Accept()
	})
	gotB := make(chan string, 4)
	b, _ := consume(t, c, qb, nil, func(s seen) runtime.Ack {
		gotB <- s.Body
		return runtime.Accept()
	})
	chB, connB := b.SessionForTest()
	conn := c.AMQPForTest()
	if conn == nil || connB != conn {
		t.Fatalf("B's session is not on the connection's amqp connection")
	}

	publishText(t, c, qa, "slow")
	select {
	case <-started:
	case <-time.After(wait):
		t.Fatal("A's handler never started")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := a.Close(ctx)
	if took := time.Since(start); took > time.Second {
		t.Errorf("Close(A) with a 200ms ctx took %s", took)
	}
	if err == nil {
		t.Fatal("Close(A) behind a running handler returned nil; want an error saying what it abandoned")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close(A) = %v; want it to wrap context.DeadlineExceeded", err)
	}
	for _, want := range []string{qa, "1 handler running", "1 delivery unsettled", "abandoned its channel"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Close(A) = %q; want it to say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "closed the connection") {
		t.Errorf("Close(A) = %q: it closed the shared connection", err)
	}

	publishText(t, c, qb, "after")
	select {
	case got := <-gotB:
		if got != "after" {
			t.Errorf("B handled %q, want %q", got, "after")
		}
	case <-time.After(wait):
		t.Fatalf("B never handled a message published after Close(A); B: %+v", b.Stats())
	}
	if ch, cn := b.SessionForTest(); ch != chB || cn != connB {
		t.Errorf("B's channel changed across Close(A): it lost its channel and resubscribed")
	}
	if got := c.AMQPForTest(); got != conn {
		t.Errorf("the connection's amqp connection changed across Close(A)")
	}
	if st := b.Stats(); st.State != runtime.ConsumerConsuming {
		t.Errorf("B's state %q after Close(A), want %q", st.State, runtime.ConsumerConsuming)
	}

	// A's delivery was not settled: it is back on qa, redelivered to a new
	// consumer, and A's handler finishing late settles nothing.
	time.Sleep(1600 * time.Millisecond) // A's handler has returned
	gotA := make(chan seen, 4)
	consume(t, c, qa, nil, func(s seen) runtime.Ack {
		gotA <- s
		return runtime.Accept()
	})
	select {
	case s := <-gotA:
		if s.Body != "slow" {
			t.Errorf("redelivered %q, want %q", s.Body, "slow")
		}
	case <-time.After(wait):
		t.Fatal("A's unsettled delivery never came back to the queue: lost")
	}
	select {
	case s := <-gotA:
		t.Errorf("a second delivery %q: duplicated", s.Body)
	case <-time.After(500 * time.Millisecond):
	}
}
