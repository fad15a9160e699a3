package runtime

import (
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"
)

// Which policies the broker's delay, min(min × failures, max), gives
// exactly, and what it says of the others.
func TestNativeRetryExpressible(t *testing.T) {
	for _, c := range []struct {
		name     string
		p        RetryPolicy
		min, max time.Duration
		err      string
	}{
		{name: "fixed", p: Fixed(4, 45*time.Second), min: 45 * time.Second, max: 45 * time.Second},
		{name: "fixed with one wait", p: Fixed(2, time.Minute), min: time.Minute, max: time.Minute},
		{name: "exponential of two waits is linear", p: Exponential(3, time.Second, 2*time.Second).WithJitter(0), min: time.Second, max: 2 * time.Second},
		{name: "exponential capped at its second wait", p: Exponential(6, time.Second, 2*time.Second).WithJitter(0), min: time.Second, max: 2 * time.Second},
		{name: "multiplier 1.5 capped", p: Exponential(4, time.Second, 1500*time.Millisecond).WithMultiplier(1.5).WithJitter(0), min: time.Second, max: 1500 * time.Millisecond},
		{name: "multiplier 1", p: Exponential(5, 10*time.Second, time.Minute).WithMultiplier(1).WithJitter(0), min: 10 * time.Second, max: 10 * time.Second},
		{name: "exponential", p: Exponential(4, time.Second, time.Minute).WithJitter(0),
			err: "waits [1s 2s 4s]: the broker's delay is min(min × failures, max), 3s after failure 3, not 4s"},
		{name: "jitter", p: Exponential(3, time.Second, 2*time.Second), err: "jitter 0.2: the broker's delay has none"},
		{name: "fixed with jitter", p: Fixed(3, time.Second).WithJitter(0.1), err: "jitter 0.1"},
		{name: "no retry", p: NoRetry(), err: "1 attempt has no wait for the broker to delay"},
		{name: "zero wait", p: Fixed(3, 0), err: "wait 1 (0s) is not a positive whole number of milliseconds"},
		{name: "sub-millisecond", p: Fixed(3, 1500*time.Microsecond), err: "wait 1 (1.5ms) is not a positive whole number of milliseconds"},
	} {
		t.Run(c.name, func(t *testing.T) {
			lo, hi, err := wire.NativeRetry(c.p.Schedule(), c.p.Jitter())
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("wire.NativeRetry = %s, %s, %v; want an error with %q", lo, hi, err, c.err)
				}
				return
			}
			if err != nil || lo != c.min || hi != c.max {
				t.Fatalf("wire.NativeRetry = %s, %s, %v; want %s, %s", lo, hi, err, c.min, c.max)
			}
			// The broker's delay after each failure is the schedule.
			for k, w := range c.p.Schedule() {
				if b := min(lo*time.Duration(k+1), hi); b != w {
					t.Errorf("failure %d: broker %s, policy %s", k+1, b, w)
				}
			}
		})
	}
}

func TestNativeRetryDeclarations(t *testing.T) {
	q := Queue{Name: "n", Type: Quorum, DeadLetter: true, Retry: Exponential(3, time.Second, 2*time.Second).WithJitter(0), NativeRetry: true}
	d, err := NewTopology().Queue(q).Declarations()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, qd := range d.Queues {
		names = append(names, qd.Name)
	}
	if strings.Join(names, " ") != "n n.dlq n.parked" {
		t.Errorf("queues %v; want n, n.dlq, n.parked and no rung", names)
	}
	args := d.Queues[0].Arguments
	if args[argDelayedRetryType] != "failed" || args[argDelayedRetryMin] != int64(1000) || args[argDelayedRetryMax] != int64(2000) {
		t.Errorf("arguments %v; want x-delayed-retry-type failed, min 1000, max 2000", args)
	}
	for _, c := range []struct {
		q   Queue
		err string
	}{
		{Queue{Name: "c", Retry: Fixed(2, time.Second), NativeRetry: true}, `queue "c": native retry is a quorum queue's`},
		{Queue{Name: "r", Type: Quorum, DeadLetter: true, Retry: Fixed(2, time.Second), NativeRetry: true, QuorumRungs: true}, "declares no rungs"},
		{Queue{Name: "e", Type: Quorum, DeadLetter: true, Retry: Exponential(4, time.Second, time.Minute), NativeRetry: true}, `queue "e": native retry: retry policy: jitter 0.2`},
		{Queue{Name: "a", Type: Quorum, DeadLetter: true, Retry: Fixed(2, time.Second), NativeRetry: true, Arguments: map[string]any{"x-delayed-retry-min": 5}}, "x-delayed-retry-min in Arguments"},
	} {
		if _, err := NewTopology().Queue(c.q).Declarations(); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v; want %q", c.q.Name, err, c.err)
		}
	}
}

func TestBrokerAtLeast(t *testing.T) {
	for v, want := range map[string]bool{"4.3.6": true, "4.3.0-rc.1": true, "4.10.0": true, "5.0.1": true, "4.2.3": false, "3.10.8": false, "4.0.5": false, "": false, "garbage": false} {
		if got := brokerAtLeast(v, wire.NativeRetryBroker); got != want {
			t.Errorf("brokerAtLeast(%q, 4.3) = %v, want %v", v, got, want)
		}
	}
	if err := checkBroker(NewTopology().Queue(Queue{Name: "n", NativeRetry: true}), "3.10.8"); err == nil ||
		!strings.Contains(err.Error(), `queue "n": native retry needs RabbitMQ 4.3 or later; this broker is "3.10.8"`) {
		t.Errorf("checkBroker on 3.10.8: %v", err)
	}
}
