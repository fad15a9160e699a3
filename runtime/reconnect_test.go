package runtime_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
)

// The broker drops the connection (as on a restart): the consumer comes
// back on a fresh connection and channel by itself, a publish after the
// drop goes through, and what was held in memory when the session died is
// redelivered by the broker rather than lost.
func TestReconnectAfterTheBrokerDropsTheConnection(t *testing.T) {
	ctx := ctxFor(t, 60*time.Second)
	origin := brokertest.Name("reconnect")
	c := dial(t, runtime.WithOrigin(origin), runtime.WithReconnectBackoff(50*time.Millisecond, time.Second))
	q := brokertest.Queue(t, "reconnect")
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))

	type seen struct {
		body        string
		attempt     int
		redelivered bool
	}
	got := make(chan seen, 16)
	mt := runtime.NewTextType("reconnect.v1")
	var retried atomic.Bool
	_, err := runtime.Consume(ctx, c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
		runtime.Handle(mt, func(ctx context.Context, m *runtime.Message[string]) runtime.Ack {
			got <- seen{m.Payload, m.Envelope.Attempt, m.Redelivered}
			if m.Payload == "held" && retried.CompareAndSwap(false, true) {
				// Held in memory for 10s: the connection dies meanwhile.
				return runtime.Retry(reconnectErr("not yet"))
			}
			return runtime.Accept()
		}),
	}}, runtime.WithRetry(runtime.Fixed(3, 10*time.Second)))
	if err != nil {
		t.Fatal(err)
	}

	if err := runtime.Publish(ctx, c, mt, "", "held", runtime.WithRoutingKey(q)); err != nil {
		t.Fatal(err)
	}
	if s := reconnectReceive(t, got); s.body != "held" || s.attempt != 1 {
		t.Fatalf("first delivery = %+v", s)
	}

	if n := brokertest.KillConnections(t, origin); n == 0 {
		t.Fatal("the broker listed no connection named", origin)
	}

	// The held delivery was never acked: the broker redelivers it to the
	// resubscribed consumer, still on attempt 1.
	s := reconnectReceive(t, got)
	if s.body != "held" || s.attempt != 1 || !s.redelivered {
		t.Fatalf("after the drop got %+v, want the held message redelivered on attempt 1", s)
	}

	pubCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := runtime.Publish(pubCtx, c, mt, "", "after", runtime.WithRoutingKey(q)); err != nil {
		t.Fatalf("publish after the drop: %v", err)
	}
	if s := reconnectReceive(t, got); s.body != "after" || s.attempt != 1 {
		t.Fatalf("after the drop got %+v, want the new message", s)
	}
}

type reconnectErr string

func (e reconnectErr) Error() string { return string(e) }

func reconnectReceive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(15 * time.Second):
		t.Fatal("nothing arrived within 15s")
		panic("unreachable")
	}
}
