package runtime_test

// The retry arithmetic, the names and the acks: no broker needed. The
// numbers are the ones the sibling libraries print in their tutorials, so
// a message moves between services written with any of them.

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
)

const s = time.Second

func durations(ds ...time.Duration) []time.Duration { return ds }

func TestSchedule(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		policy runtime.RetryPolicy
		want   []time.Duration
	}{
		{"Exponential(5,1s,60s)", runtime.Exponential(5, s, 60*s), durations(s, 2*s, 4*s, 8*s)},
		{"Exponential(4,20s,5m)", runtime.Exponential(4, 20*s, 5*time.Minute), durations(20*s, 40*s, 80*s)},
		{"Exponential(6,10s,300s)", runtime.Exponential(6, 10*s, 300*s), durations(10*s, 20*s, 40*s, 80*s, 160*s)},
		{"capped at max", runtime.Exponential(7, s, 10*s), durations(s, 2*s, 4*s, 8*s, 10*s, 10*s)},
		{"WithMultiplier(3)", runtime.Exponential(4, s, time.Hour).WithMultiplier(3), durations(s, 3*s, 9*s)},
		{"Fixed(3,1s)", runtime.Fixed(3, s), durations(s, s)},
		{"NoRetry", runtime.NoRetry(), durations()},
		{"zero value", runtime.RetryPolicy{}, durations()},
	}
	for _, c := range cases {
		if got := c.policy.Schedule(); !slices.Equal(got, c.want) {
			t.Errorf("%s.Schedule() = %v, want %v", c.name, got, c.want)
		}
		if got, want := len(c.policy.Schedule()), c.policy.Attempts()-1; got != want {
			t.Errorf("%s: %d waits for %d attempts, want attempts-1 = %d", c.name, got, c.policy.Attempts(), want)
		}
	}
}

func TestBrokerRungs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		policy runtime.RetryPolicy
		want   []time.Duration
	}{
		{"Exponential(4,20s,5m)", runtime.Exponential(4, 20*s, 5*time.Minute), durations(40*s, 80*s)},
		{"Exponential(6,10s,300s)", runtime.Exponential(6, 10*s, 300*s), durations(40*s, 80*s, 160*s)},
		{"Exponential(5,1s,60s): all below 30s", runtime.Exponential(5, s, 60*s), nil},
		{"WithWaitInBrokerFrom(0)", runtime.Exponential(6, 10*s, 300*s).WithWaitInBrokerFrom(0), nil},
		{"WithWaitInBrokerFrom(1m)", runtime.Exponential(6, 10*s, 300*s).WithWaitInBrokerFrom(time.Minute), durations(80*s, 160*s)},
		{"threshold is inclusive", runtime.Fixed(2, s).WithWaitInBrokerFrom(s), durations(s)},
		{"deduplicated", runtime.Fixed(5, 40*s), durations(40 * s)},
		{"deduplicated at the cap", runtime.Exponential(8, 30*s, 60*s), durations(30*s, 60*s)},
	}
	for _, c := range cases {
		if got := brokerRungs(c.policy); !slices.Equal(got, c.want) {
			t.Errorf("%s: wire.BrokerRungs = %v, want %v", c.name, got, c.want)
		}
	}
	if got := runtime.Exponential(6, 10*s, 300*s).WaitInBrokerFrom(); got != 30*s {
		t.Errorf("default WaitInBrokerFrom = %v, want 30s", got)
	}
	if got := runtime.Exponential(6, 10*s, 300*s).WithWaitInBrokerFrom(0); wire.InBroker(time.Hour, got.WaitInBrokerFrom()) {
		t.Errorf("wire.InBroker(1h) under WithWaitInBrokerFrom(0) = true, want false: zero means never the broker")
	}
}

func TestSpillRungs(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	cases := []struct {
		name         string
		policy       runtime.RetryPolicy
		spill, rungs []time.Duration
	}{
		{"Exponential(6,10s,300s)", runtime.Exponential(6, 10*s, 300*s), durations(10*s, 20*s), durations(10*s, 20*s, 40*s, 80*s, 160*s)},
		{"Exponential(5,1s,60s): all below 30s", runtime.Exponential(5, s, 60*s), durations(s, 2*s, 4*s, 8*s), durations(s, 2*s, 4*s, 8*s)},
		{"rounded up to whole seconds", runtime.Exponential(4, 300*ms, 10*s), durations(s, 2*s), durations(s, 2*s)},
		{"the bench's r1: 500ms spills to the broker's 1s rung", runtime.Exponential(3, 500*ms, s).WithWaitInBrokerFrom(s), nil, durations(s)},
		{"WithWaitInBrokerFrom(0): never the broker", runtime.Exponential(6, 10*s, 300*s).WithWaitInBrokerFrom(0), nil, nil},
		{"a zero wait is never spilled", runtime.Fixed(3, 0), nil, nil},
		{"NoRetry", runtime.NoRetry(), nil, nil},
	}
	for _, c := range cases {
		if got := spillRungs(c.policy); !slices.Equal(got, c.spill) {
			t.Errorf("%s: wire.SpillRungs = %v, want %v", c.name, got, c.spill)
		}
		if got := rungsOf(c.policy); !slices.Equal(got, c.rungs) {
			t.Errorf("%s: wire.Rungs = %v, want %v", c.name, got, c.rungs)
		}
	}
}

func TestJitterDefaults(t *testing.T) {
	t.Parallel()
	if j := runtime.Exponential(5, s, 60*s).Jitter(); j != 0.2 {
		t.Errorf("Exponential jitter = %v, want 0.2 by default", j)
	}
	if j := runtime.Fixed(3, s).Jitter(); j != 0 {
		t.Errorf("Fixed jitter = %v, want 0: a fixed delay is an exact request", j)
	}
	if j := runtime.NoRetry().Jitter(); j != 0 {
		t.Errorf("NoRetry jitter = %v, want 0", j)
	}
	// Jitter never reaches the arithmetic a test can assert on.
	p := runtime.Exponential(5, s, 60*s).WithJitter(0.5)
	if got := p.Schedule(); !slices.Equal(got, durations(s, 2*s, 4*s, 8*s)) {
		t.Errorf("Schedule with jitter 0.5 = %v, want [1s 2s 4s 8s] (no jitter)", got)
	}
}

func TestNoRetry(t *testing.T) {
	t.Parallel()
	if n := runtime.NoRetry().Attempts(); n != 1 {
		t.Errorf("NoRetry().Attempts() = %d, want 1", n)
	}
	if n := (runtime.RetryPolicy{}).Attempts(); n != 1 {
		t.Errorf("zero RetryPolicy Attempts() = %d, want 1 (the zero value is NoRetry)", n)
	}
	if r := brokerRungs(runtime.NoRetry()); len(r) != 0 {
		t.Errorf("wire.BrokerRungs of NoRetry() = %v, want none", r)
	}
}

func TestPolicyIsImmutable(t *testing.T) {
	t.Parallel()
	p := runtime.Exponential(5, s, 60*s)
	_ = p.WithJitter(0.5)
	_ = p.WithMultiplier(3)
	_ = p.WithWaitInBrokerFrom(0)
	_ = p.WithGiveUpAfter(time.Minute)
	if p.Jitter() != 0.2 || p.Multiplier() != 2 || p.WaitInBrokerFrom() != 30*s || p.GiveUpAfter() != 0 {
		t.Errorf("With… changed the receiver: %+v", p)
	}
	if got := p.WithGiveUpAfter(10 * time.Minute).GiveUpAfter(); got != 10*time.Minute {
		t.Errorf("WithGiveUpAfter(10m).GiveUpAfter() = %v", got)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	ok := []runtime.RetryPolicy{
		runtime.NoRetry(),
		runtime.Exponential(6, 10*s, 300*s),
		runtime.Exponential(6, 10*s, 300*s).WithWaitInBrokerFrom(15 * time.Minute),
		runtime.Exponential(6, 10*s, 300*s).WithWaitInBrokerFrom(0),
		runtime.Fixed(2, s).WithWaitInBrokerFrom(s),
	}
	for _, p := range ok {
		if err := p.Validate(); err != nil {
			t.Errorf("%v: Validate() = %v, want nil", p, err)
		}
	}
	bad := map[string]runtime.RetryPolicy{
		"15m":    runtime.Exponential(6, 10*s, 300*s).WithWaitInBrokerFrom(15*time.Minute + time.Second),
		"1.5s":   runtime.Fixed(2, 1500*time.Millisecond).WithWaitInBrokerFrom(s), // rung q.retry.1.5s cannot be named
		"jitter": runtime.Exponential(3, s, 10*s).WithJitter(1.5),
	}
	for want, p := range bad {
		err := p.Validate()
		if err == nil {
			t.Errorf("%v: Validate() = nil, want an error", p)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v: Validate() = %q, want it to mention %q", p, err, want)
		}
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	for got, want := range map[string]string{
		wire.DeadLetterQueue("orders.new"):        "orders.new.dlq",
		wire.ParkedQueue("orders.new"):            "orders.new.parked",
		wire.RungQueue("orders.new", 40*s):        "orders.new.retry.40s",
		wire.RungQueue("orders.new", 160*s):       "orders.new.retry.160s",
		wire.RungQueue("orders.new", time.Second): "orders.new.retry.1s",
		wire.DeadLetterExchange:                   "acemq.dlx",
		wire.RetryExchange:                        "acemq.retry",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestAckKinds(t *testing.T) {
	t.Parallel()
	boom := errors.New("no such item")
	cases := []struct {
		ack  runtime.Ack
		want runtime.AckKind
	}{
		{runtime.Accept(), runtime.AckAccept},
		{runtime.Ack{}, runtime.AckAccept},
		{runtime.Retry(boom), runtime.AckRetry},
		{runtime.Reject(boom), runtime.AckReject},
		{runtime.Park(boom), runtime.AckPark},
		{runtime.Retry(runtime.Fatal(boom)), runtime.AckReject},
		{runtime.Retry(fmt.Errorf("reserve: %w", runtime.Fatal(boom))), runtime.AckReject},
	}
	for _, c := range cases {
		if got := c.ack.Kind(); got != c.want {
			t.Errorf("%v.Kind() = %v, want %v", c.ack, got, c.want)
		}
	}
	f := runtime.Fatal(boom)
	if !errors.Is(f, boom) || !errors.Is(f, runtime.ErrFatal) {
		t.Errorf("Fatal(err) must match err and ErrFatal with errors.Is")
	}
	if f.Error() != "no such item" {
		t.Errorf("Fatal(err).Error() = %q, want err's text", f.Error())
	}
	if errors.Is(boom, runtime.ErrFatal) || errors.Is(nil, runtime.ErrFatal) {
		t.Errorf("a plain error or nil must not match ErrFatal")
	}
}

// The worked examples of docs/design.md ("Retry arithmetic"): if one of
// these changes, the page changes with it.
func TestDesignWorkedExamples(t *testing.T) {
	cases := []struct {
		name     string
		policy   runtime.RetryPolicy
		schedule string
		rungs    string
	}{
		{"1", runtime.Exponential(5, time.Second, 60*time.Second), "[1s 2s 4s 8s]", "[]"},
		{"2", runtime.Exponential(6, 10*time.Second, 300*time.Second), "[10s 20s 40s 1m20s 2m40s]", "[40s 1m20s 2m40s]"},
		{"3", runtime.Fixed(3, 45*time.Second), "[45s 45s]", "[45s]"},
		{"4", runtime.Fixed(4, 45*time.Second).WithWaitInBrokerFrom(0), "[45s 45s 45s]", "[]"},
	}
	for _, tc := range cases {
		if err := tc.policy.Validate(); err != nil {
			t.Errorf("example %s: Validate: %v", tc.name, err)
		}
		if got := fmt.Sprint(tc.policy.Schedule()); got != tc.schedule {
			t.Errorf("example %s: Schedule() = %s, docs/design.md says %s", tc.name, got, tc.schedule)
		}
		if got := fmt.Sprint(brokerRungs(tc.policy)); got != tc.rungs {
			t.Errorf("example %s: wire.BrokerRungs = %s, docs/design.md says %s", tc.name, got, tc.rungs)
		}
	}
	if got := wire.RungQueue("q", 160*time.Second); got != "q.retry.160s" {
		t.Errorf("RungQueue(q, 2m40s) = %s", got)
	}
}

// brokerRungs, spillRungs and rungsOf are wire's rung arithmetic over p's
// waits, as the generator and the runtime's topology compute them.
func brokerRungs(p runtime.RetryPolicy) []time.Duration {
	return wire.BrokerRungs(wire.Waits(p.Attempts(), p.Delay), p.WaitInBrokerFrom())
}

func spillRungs(p runtime.RetryPolicy) []time.Duration {
	return wire.SpillRungs(wire.Waits(p.Attempts(), p.Delay), p.WaitInBrokerFrom())
}

func rungsOf(p runtime.RetryPolicy) []time.Duration {
	return wire.Rungs(wire.Waits(p.Attempts(), p.Delay), p.WaitInBrokerFrom())
}
