package wire_test

import (
	"iter"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"
)

// Every name derived from a queue is read back to that queue and its kind,
// whatever the queue's own name holds (dots, a .dlq inside it, digits).
func TestOwnerReadsBackEveryDerivedName(t *testing.T) {
	queues := []string{"orders", "a", "orders.v1", "orders.dlq.archive", "orders.parked.x", "q.retry.5s.x",
		"shipping-7", "ünïcode", "orders.retry", "x.retry.", "9"}
	for _, q := range queues {
		for _, tc := range []struct {
			name string
			kind wire.Kind
		}{
			{wire.DeadLetterQueue(q), wire.DeadLetter},
			{wire.ParkedQueue(q), wire.Parked},
			{wire.RungQueue(q, time.Second), wire.Rung},
			{wire.RungQueue(q, 90*time.Second), wire.Rung},
			{wire.RungQueue(q, 24*time.Hour), wire.Rung},
		} {
			got, kind, ok := wire.Owner(tc.name)
			if !ok || got != q || kind != tc.kind {
				t.Errorf("Owner(%q) = %q, %v, %v; want %q, %v", tc.name, got, kind, ok, q, tc.kind)
			}
			if wire.IsRung(tc.name) != (tc.kind == wire.Rung) {
				t.Errorf("IsRung(%q) = %v", tc.name, !(tc.kind == wire.Rung))
			}
		}
	}
}

// A name that is not derived from a queue belongs to none: the queue
// itself, a suffix inside the name, a suffix alone, a rung without digits
// or its s.
func TestOwnerRefusesWhatIsNotDerived(t *testing.T) {
	for _, name := range []string{"orders", "", ".dlq", ".parked", ".retry.5s", "orders.dlq.archive",
		"orders.dlqx", "orders.retry.s", "orders.retry.5", "orders.retry.5m", "orders.retry.-5s", "orders.retry.5.0s",
		"orders.parkedx", "ordersdlq", "acemq.dlx", "acemq.retry", "acemq.reply.abc"} {
		if q, kind, ok := wire.Owner(name); ok {
			t.Errorf("Owner(%q) = %q, %v, true; want no owner", name, q, kind)
		}
	}
}

// The names the sibling libraries read: the spelling is the contract.
func TestNamesAreTheContracts(t *testing.T) {
	for got, want := range map[string]string{
		wire.DeadLetterQueue("orders"):                  "orders.dlq",
		wire.ParkedQueue("orders"):                      "orders.parked",
		wire.RungQueue("orders", 40*time.Second):        "orders.retry.40s",
		wire.RungQueue("orders", 1500*time.Millisecond): "orders.retry.1s",
		wire.DeadLetterExchange:                         "acemq.dlx",
		wire.RetryExchange:                              "acemq.retry",
		wire.Kind(0).String() + wire.Rung.String():      "Kind(0)rung",
	} {
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
	for _, h := range []string{wire.HeaderID, wire.HeaderAttempt, wire.HeaderFirstSeen, wire.HeaderOrigin, wire.HeaderError,
		wire.HeaderQueue, wire.HeaderDropped, wire.HeaderRedeliveries, wire.HeaderUnreadable, wire.HeaderSchemaFingerprint,
		wire.HeaderSchema, wire.HeaderReplyType, wire.HeaderReplyError, wire.HeaderReplyErrorCode, wire.HeaderReplyToken} {
		if !strings.HasPrefix(h, wire.InternalPrefix) {
			t.Errorf("%s is not under %s", h, wire.InternalPrefix)
		}
	}
	for _, h := range []string{wire.HeaderReplayedFrom, wire.HeaderReplayedAt, wire.HeaderReplayCount} {
		if strings.HasPrefix(h, "x-") {
			t.Errorf("%s starts with x-: a replay stamp reaches handlers", h)
		}
	}
}

// waits is a policy's distinct waits as the rung arithmetic reads them.
func waits(ds ...time.Duration) iter.Seq[time.Duration] { return slices.Values(ds) }

// The rung arithmetic on the ladders runtime's policy tests use.
func TestRungs(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name          string
		waits         []time.Duration
		threshold     time.Duration
		broker, spill []time.Duration
	}{
		{"Exponential(6, 10s, 300s)", []time.Duration{10 * s, 20 * s, 40 * s, 80 * s, 160 * s}, 30 * s,
			[]time.Duration{40 * s, 80 * s, 160 * s}, []time.Duration{10 * s, 20 * s}},
		{"Exponential(3, 500ms, 1s) from 1s", []time.Duration{500 * time.Millisecond, s}, s,
			[]time.Duration{s}, nil},
		{"Fixed(5, 1500ms) from 30s", []time.Duration{1500 * time.Millisecond}, 30 * s,
			nil, []time.Duration{2 * s}},
		{"never the broker", []time.Duration{10 * s, 60 * s}, 0, nil, nil},
		{"a wait of zero", []time.Duration{0, 40 * s}, 30 * s, []time.Duration{40 * s}, nil},
	} {
		broker := wire.BrokerRungs(waits(tc.waits...), tc.threshold)
		spill := wire.SpillRungs(waits(tc.waits...), tc.threshold)
		if !slices.Equal(broker, tc.broker) || !slices.Equal(spill, tc.spill) {
			t.Errorf("%s: broker %v, spill %v; want %v, %v", tc.name, broker, spill, tc.broker, tc.spill)
		}
		all := append(slices.Clone(tc.broker), tc.spill...)
		slices.Sort(all)
		if got := wire.Rungs(waits(tc.waits...), tc.threshold); !slices.Equal(got, slices.Compact(all)) {
			t.Errorf("%s: Rungs %v, want %v", tc.name, got, all)
		}
	}
	for _, tc := range []struct {
		d, threshold, rung time.Duration
		ok                 bool
	}{
		{1500 * time.Millisecond, 30 * s, 2 * s, true},
		{2 * s, 30 * s, 2 * s, true},
		{30 * s, 30 * s, 0, false},
		{0, 30 * s, 0, false},
		{10 * s, 0, 0, false},
	} {
		if rung, ok := wire.SpillRung(tc.d, tc.threshold); rung != tc.rung || ok != tc.ok {
			t.Errorf("SpillRung(%s, %s) = %s, %v; want %s, %v", tc.d, tc.threshold, rung, ok, tc.rung, tc.ok)
		}
	}
}

// The prefixes and the names under them agree.
func TestPrefixesPrefixTheirNames(t *testing.T) {
	for prefix, names := range map[string][]string{
		wire.HeaderFirstDeathPrefix: {wire.HeaderFirstDeathQueue, wire.HeaderFirstDeathReason},
		wire.HeaderLastDeathPrefix:  {wire.HeaderLastDeathQueue, wire.HeaderLastDeathReason},
		wire.ArgDelayedRetryPrefix:  {wire.ArgDelayedRetryType, wire.ArgDelayedRetryMin, wire.ArgDelayedRetryMax},
	} {
		for _, n := range names {
			if !strings.HasPrefix(n, prefix) {
				t.Errorf("%s is not under %s", n, prefix)
			}
		}
	}
}

// Waits stops at the first wait equal to the one before it, however many
// attempts the policy allows.
func TestWaitsStopWhenTheyStopChanging(t *testing.T) {
	calls := 0
	exp := func(k int) time.Duration {
		calls++
		return min(time.Second<<(k-1), 8*time.Second)
	}
	got := slices.Collect(wire.Waits(1_000_000_000, exp))
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}
	if !slices.Equal(got, want) || calls != 5 {
		t.Fatalf("Waits = %v after %d calls of delay, want %v after 5", got, calls, want)
	}
	if got := slices.Collect(wire.Waits(1, exp)); len(got) != 0 {
		t.Fatalf("one attempt waits %v, want none", got)
	}
}

// NativeRetry gives the broker's min and max for the ladders it can
// delay, and says which wait it would get wrong for the others.
func TestNativeRetry(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		waits    []time.Duration
		jitter   float64
		min, max time.Duration
		err      string
	}{
		{[]time.Duration{2 * s, 2 * s, 2 * s}, 0, 2 * s, 2 * s, ""},
		{[]time.Duration{s, 2 * s}, 0, s, 2 * s, ""},
		{[]time.Duration{s, 2 * s, 3 * s, 3 * s}, 0, s, 3 * s, ""},
		{nil, 0, 0, 0, "1 attempt has no wait"},
		{[]time.Duration{s}, 0.2, 0, 0, "jitter 0.2"},
		{[]time.Duration{1500 * time.Microsecond}, 0, 0, 0, "wait 1 (1.5ms) is not a positive whole number of milliseconds"},
		{[]time.Duration{s, 2 * s, 4 * s}, 0, 0, 0, "3s after failure 3, not 4s"},
	} {
		lo, hi, err := wire.NativeRetry(tc.waits, tc.jitter)
		if tc.err == "" && (err != nil || lo != tc.min || hi != tc.max) {
			t.Errorf("NativeRetry(%v, %g) = %s, %s, %v; want %s, %s", tc.waits, tc.jitter, lo, hi, err, tc.min, tc.max)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("NativeRetry(%v, %g): %v, want an error saying %q", tc.waits, tc.jitter, err, tc.err)
		}
	}
}
