package runtime_test

// Batched acks against the broker: handlers that finish out of order never
// get a delivery acked before it is settled (the broker redelivers exactly
// the unsettled ones when the connection drops), a dead letter's original
// is acked only after its copy, and Close sends the acks a batch still
// holds.

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// unacked is the broker's count of q's deliveries not acked yet (the
// management API's figures lag a few seconds).
func unacked(t *testing.T, q string) int {
	t.Helper()
	var info struct {
		Unacked int `json:"messages_unacknowledged"`
		Ready   int `json:"messages_ready"`
	}
	if err := brokertest.Management("queues/{vhost}/"+url.PathEscape(q), &info); err != nil {
		t.Fatalf("queue %s: %v", q, err)
	}
	return info.Unacked
}

// waitUnacked waits until the broker reports want unacked deliveries on q.
func waitUnacked(t *testing.T, q string, want int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := unacked(t, q)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has %d unacked deliveries, want %d", q, got, want)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// Four handlers; m00 and m07 block while the 18 others are accepted. The
// others are acked (the broker counts 2 unacked), and when the broker drops
// the connection it redelivers m00 and m07 and nothing else: no multiple
// ack covered a delivery still being handled.
func TestAcksOutOfOrderNeverAckAnUnsettledDelivery(t *testing.T) {
	t.Parallel()
	origin := brokertest.Name("acks")
	c := dial(t, runtime.WithOrigin(origin), runtime.WithReconnectBackoff(50*time.Millisecond, time.Second))
	q := brokertest.Queue(t, "acks")
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
	const n = 20
	for i := range n {
		publishText(t, c, q, fmt.Sprintf("m%02d", i))
	}
	release := make(chan struct{})
	var (
		mu          sync.Mutex
		handled     = map[string]int{}
		redelivered []string
	)
	accepted := make(chan string, 2*n)
	_, _ = consume(t, c, q, nil, func(s seen) runtime.Ack {
		mu.Lock()
		handled[s.Body]++
		first := handled[s.Body] == 1
		if s.Redelivered {
			redelivered = append(redelivered, s.Body)
		}
		mu.Unlock()
		if first && (s.Body == "m00" || s.Body == "m07") {
			<-release // settled only after the connection is gone
		}
		accepted <- s.Body
		return runtime.Accept()
	}, runtime.WithConcurrency(4), runtime.WithPrefetch(n))
	for range n - 2 {
		select {
		case <-accepted:
		case <-time.After(wait):
			t.Fatal("the 18 unblocked messages were not all handled")
		}
	}
	waitUnacked(t, q, 2)

	if k := brokertest.KillConnections(t, origin); k == 0 {
		t.Fatal("the broker listed no connection named", origin)
	}
	close(release) // their session is dead: what they decide is discarded
	deadline := time.After(wait)
	for {
		mu.Lock()
		got := slices.Clone(redelivered)
		mu.Unlock()
		slices.Sort(got)
		if len(got) >= 2 {
			if !slices.Equal(got, []string{"m00", "m07"}) {
				t.Fatalf("redelivered %v, want exactly [m00 m07] (the settled ones were acked)", got)
			}
			break
		}
		select {
		case <-deadline:
			t.Fatalf("redelivered %v after the drop, want [m00 m07]", got)
		case <-time.After(50 * time.Millisecond):
		}
	}
	waitUnacked(t, q, 0)
	if d := depth(t, q); d != 0 {
		t.Errorf("%s holds %d, want 0", q, d)
	}
	mu.Lock()
	defer mu.Unlock()
	for body, k := range handled {
		want := 1
		if body == "m00" || body == "m07" {
			want = 2
		}
		if k != want {
			t.Errorf("%s handled %d times, want %d", body, k, want)
		}
	}
}

// With a batch that only Close flushes (a delay of an hour, a prefetch
// whose batch is 25), ten accepted deliveries stay unacked, and Close acks
// them: none returns to the queue.
func TestAcksFlushedOnClose(t *testing.T) {
	t.Parallel()
	c := dial(t)
	q := brokertest.Queue(t, "acksclose")
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
	const n = 10
	for i := range n {
		publishText(t, c, q, fmt.Sprintf("c%02d", i))
	}
	done := make(chan struct{}, n)
	cs, _ := consume(t, c, q, nil, func(seen) runtime.Ack {
		done <- struct{}{}
		return runtime.Accept()
	}, runtime.WithPrefetch(100), runtime.WithAckDelayForTest(time.Hour))
	for range n {
		select {
		case <-done:
		case <-time.After(wait):
			t.Fatal("not every message was handled")
		}
	}
	// Accepted, and waiting in the batch: the broker still counts them.
	waitUnacked(t, q, n)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cs.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if d := depth(t, q); d != 0 {
		t.Errorf("after Close %s holds %d, want 0 (Close sends the batch's acks)", q, d)
	}
	waitUnacked(t, q, 0)
}

// A full batch is sent without waiting for the timer: 8 deliveries at a
// prefetch of 32 (a batch of 8) are acked with no timer and no Close.
func TestAcksFullBatch(t *testing.T) {
	t.Parallel()
	c := dial(t)
	q := brokertest.Queue(t, "acksfull")
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
	for i := range 8 {
		publishText(t, c, q, fmt.Sprintf("f%02d", i))
	}
	consume(t, c, q, nil, func(seen) runtime.Ack { return runtime.Accept() },
		runtime.WithPrefetch(32), runtime.WithAckDelayForTest(time.Hour))
	waitUnacked(t, q, 0)
	if d := depth(t, q); d != 0 {
		t.Errorf("%s holds %d, want 0", q, d)
	}
}

// Rule 1 with copies: m00's handler rejects it late, while the others are
// accepted and acked. Its copy reaches q.dlq and the original is acked
// after it: q ends empty, q.dlq holds m00 once.
func TestAcksAfterTheCopy(t *testing.T) {
	t.Parallel()
	c := dial(t)
	q := brokertest.Queue(t, "ackscopy")
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
	const n = 12
	for i := range n {
		publishText(t, c, q, fmt.Sprintf("r%02d", i))
	}
	release := make(chan struct{})
	consume(t, c, q, nil, func(s seen) runtime.Ack {
		if s.Body == "r00" {
			<-release
			return runtime.Reject(fmt.Errorf("late"))
		}
		return runtime.Accept()
	}, runtime.WithConcurrency(3), runtime.WithPrefetch(n))
	waitUnacked(t, q, 1)
	close(release)
	ds := drain(t, wire.DeadLetterQueue(q), 1, wait)
	if got := string(ds[0].Body); got != "r00" {
		t.Errorf("%s got %q, want r00", wire.DeadLetterQueue(q), got)
	}
	waitUnacked(t, q, 0)
	if d := depth(t, q); d != 0 {
		t.Errorf("%s holds %d, want 0", q, d)
	}
}

// A redelivered delivery (perhaps the message that crashed the last
// consumer) sends the batch before its handler runs, and its own ack at
// once: a and b, accepted and waiting in a batch that only Close would
// send, are acked when r comes back redelivered, while r's handler still
// runs; r is acked as soon as it is accepted.
func TestAcksRedeliveredFlushesTheBatch(t *testing.T) {
	t.Parallel()
	c := dial(t)
	q := brokertest.Queue(t, "acksredelivered")
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
	publishText(t, c, q, "r")
	raw := rawChannel(t)
	if err := raw.Qos(1, 0, false); err != nil { // r only
		t.Fatal(err)
	}
	held, err := raw.Consume(q, "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var r amqp.Delivery
	select {
	case r = <-held:
	case <-time.After(wait):
		t.Fatal("the raw consumer got nothing")
	}
	publishText(t, c, q, "a")
	publishText(t, c, q, "b")
	got := make(chan seen, 3)
	release := make(chan struct{})
	consume(t, c, q, nil, func(s seen) runtime.Ack {
		got <- s
		if s.Body == "r" {
			<-release // as if it crashed the process: never settled
		}
		return runtime.Accept()
	}, runtime.WithPrefetch(100), runtime.WithAckDelayForTest(time.Hour))
	for range 2 {
		select {
		case <-got:
		case <-time.After(wait):
			t.Fatal("a and b were not handled")
		}
	}
	waitUnacked(t, q, 3) // a and b in the batch, r held by the raw consumer
	if err := r.Nack(false, true); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s.Body != "r" || !s.Redelivered {
			t.Fatalf("got %q (redelivered %v), want r redelivered", s.Body, s.Redelivered)
		}
	case <-time.After(wait):
		t.Fatal("r was not redelivered to the consumer")
	}
	// r is being handled: a and b were acked before it started.
	waitUnacked(t, q, 1)
	close(release)
	// r's own ack goes at once, not after the hour.
	waitUnacked(t, q, 0)
	if d := depth(t, q); d != 0 {
		t.Errorf("%s holds %d, want 0", q, d)
	}
}
