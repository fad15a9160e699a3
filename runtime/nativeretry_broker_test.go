package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
)

// A NativeRetry queue on RabbitMQ 4.3 (issue 24, item 6): the queue itself
// holds each failed delivery for the policy's wait — Exponential(3, 1s, 2s)
// without jitter, 1s then 2s, the broker's min(1s × failures, 2s) — no
// rung queue exists, and after the third attempt the runtime dead-letters
// the message with its reason. The waits are checked from below only (the
// broker held the message at least that long), never for speed.
func TestNativeRetryWaitsInTheQueue(t *testing.T) {
	t.Parallel()
	if nackCounts(t) {
		t.Skipf("RabbitMQ %s: quorum-queue delayed retry (x-delayed-retry-*) is RabbitMQ 4.3's", brokerVersion.text)
	}
	q := brokertest.Queue(t, "native.retry")
	policy := runtime.Exponential(3, time.Second, 2*time.Second).WithJitter(0)
	c := dial(t)
	tp := runtime.NewTopology().Queue(runtime.Queue{Name: q, Type: runtime.Quorum, DeadLetter: true, Retry: policy, NativeRetry: true})
	if err := c.Declare(ctxFor(t, 20*time.Second), tp); err != nil {
		t.Fatalf("Declare %s: %v", q, err)
	}
	if got, want := queuesUnder(t, q), []string{q, q + ".dlq", q + ".parked"}; !slices.Equal(got, want) {
		t.Errorf("queues %v, want %v (no rung)", got, want)
	}
	var mu sync.Mutex
	var attempts []int
	var at []time.Time
	consumeWith(t, c, q, policy, func(_ context.Context, m *runtime.Message[string]) runtime.Ack {
		mu.Lock()
		defer mu.Unlock()
		attempts, at = append(attempts, m.Envelope.Attempt), append(at, time.Now())
		return runtime.Retry(errors.New("always fails"))
	}, runtime.WithRequeueOnFailure())
	publishText(t, c, q, "m")
	expectDeadLetters(t, q, 1, 3)
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(attempts, []int{1, 2, 3}) {
		t.Fatalf("attempts %v, want [1 2 3]", attempts)
	}
	// The handler's own time between the calls includes the reject's
	// trip: a wait shorter than the policy's, less 50ms of clock, was not
	// the broker's.
	for i, want := range policy.Schedule() {
		if got := at[i+1].Sub(at[i]); got < want-50*time.Millisecond {
			t.Errorf("wait %d: %s between the calls, want at least %s", i+1, got.Round(time.Millisecond), want)
		}
	}
}

// Before 4.3 the broker accepts x-delayed-retry-* and ignores them, so a
// NativeRetry queue would requeue every failure at once: Declare refuses
// it, naming the queue and the broker's version, and declares nothing.
func TestNativeRetryRefusedBefore43(t *testing.T) {
	t.Parallel()
	if !nackCounts(t) {
		t.Skipf("RabbitMQ %s has native retry: TestNativeRetryWaitsInTheQueue", brokerVersion.text)
	}
	q := brokertest.Queue(t, "native.refused")
	c := dial(t)
	tp := runtime.NewTopology().Queue(runtime.Queue{Name: q, Type: runtime.Quorum, DeadLetter: true, Retry: runtime.Fixed(3, time.Second), NativeRetry: true})
	err := c.Declare(ctxFor(t, 20*time.Second), tp)
	want := fmt.Sprintf("queue %q: native retry needs RabbitMQ 4.3 or later; this broker is %q", q, brokerVersion.text)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Declare: %v; want %q", err, want)
	}
	if got := queuesUnder(t, q); len(got) != 0 {
		t.Errorf("queues %v declared; want none", got)
	}
}
