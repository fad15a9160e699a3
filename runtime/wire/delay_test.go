package wire_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"
)

// The delay routing key byte for byte (docs/design.md, "Delayed
// delivery"): 28 bits, the highest first, then the exchange; read back to
// the same seconds and exchange, and published into the level of its
// highest bit.
func TestDelayRoutingKey(t *testing.T) {
	for _, tc := range []struct {
		s    int64
		ex   string
		want string
		top  int
	}{
		{1, "orders", "0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.1.orders", 0},
		{13, "orders", "0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.1.1.0.1.orders", 3},
		{3 * 24 * 3600, "billing.reminders", "0.0.0.0.0.0.0.0.0.0.1.1.1.1.1.1.0.1.0.0.1.0.0.0.0.0.0.0.billing.reminders", 17},
		{1<<28 - 1, "x", strings.Repeat("1.", 28) + "x", 27},
		{1 << 27, "x", "1." + strings.Repeat("0.", 27) + "x", 27},
	} {
		got := wire.DelayRoutingKey(tc.s, tc.ex)
		if got != tc.want {
			t.Errorf("DelayRoutingKey(%d, %q) = %q, want %q", tc.s, tc.ex, got, tc.want)
		}
		s, ex, ok := wire.ParseDelayRoutingKey(got)
		if !ok || s != tc.s || ex != tc.ex {
			t.Errorf("ParseDelayRoutingKey(%q) = %d, %q, %v; want %d, %q", got, s, ex, ok, tc.s, tc.ex)
		}
		if top := wire.DelayTopLevel(tc.s); top != tc.top {
			t.Errorf("DelayTopLevel(%d) = %d, want %d", tc.s, top, tc.top)
		}
	}
	for _, k := range []string{"", "order.created", strings.Repeat("0.", 27) + "0", strings.Repeat("0.", 27) + "2.x", strings.Repeat("0,", 28) + "x"} {
		if _, _, ok := wire.ParseDelayRoutingKey(k); ok {
			t.Errorf("ParseDelayRoutingKey(%q) read a delay key", k)
		}
	}
}

// A delay is whole seconds rounded up; zero or less publishes directly;
// past 2^28−1 s is an error.
func TestDelaySeconds(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int64
	}{
		{0, 0}, {-time.Hour, 0}, {time.Millisecond, 1}, {time.Second, 1}, {time.Second + time.Nanosecond, 2},
		{1500 * time.Millisecond, 2}, {72 * time.Hour, 259200}, {wire.MaxDelay, 268435455},
	} {
		got, err := wire.DelaySeconds(tc.d)
		if err != nil || got != tc.want {
			t.Errorf("DelaySeconds(%s) = %d, %v; want %d", tc.d, got, err, tc.want)
		}
	}
	_, err := wire.DelaySeconds(wire.MaxDelay + time.Millisecond)
	if !errors.Is(err, wire.ErrDelayTooLong) || !strings.Contains(err.Error(), "268435456 s, past the delay topology's 268435455 s") {
		t.Errorf("DelaySeconds(MaxDelay+1ms) = %v, want ErrDelayTooLong naming 268435456 s", err)
	}
	if wire.MaxDelay != 268435455*time.Second {
		t.Errorf("MaxDelay = %s", wire.MaxDelay)
	}
}

// The names, TTLs and binding keys of the levels.
func TestDelayLevels(t *testing.T) {
	if got := wire.DelayLevel(wire.DelayPrefix, 7); got != "acemq.delay.07" {
		t.Errorf("DelayLevel(7) = %q", got)
	}
	if got := wire.DelayLevel(wire.DelayPrefix, 27); got != "acemq.delay.27" {
		t.Errorf("DelayLevel(27) = %q", got)
	}
	if got := wire.DelayDelivery(wire.DelayPrefix); got != "acemq.delay.delivery" {
		t.Errorf("DelayDelivery = %q", got)
	}
	if wire.DelayLevelTTL(0) != 1000 || wire.DelayLevelTTL(27) != 134217728000 {
		t.Errorf("TTLs %d %d", wire.DelayLevelTTL(0), wire.DelayLevelTTL(27))
	}
	if got := wire.DelayLevelPattern(27, true); got != "1.#" {
		t.Errorf("level 27 hold = %q", got)
	}
	if got := wire.DelayLevelPattern(0, false); got != strings.Repeat("*.", 27)+"0.#" {
		t.Errorf("level 0 pass = %q", got)
	}
	if got := wire.DelayDeliveryPattern("orders"); got != strings.Repeat("*.", 28)+"orders" {
		t.Errorf("delivery pattern = %q", got)
	}
	for n := range wire.DelayLevels {
		p, got, ok := wire.DelayLevelOf(wire.DelayLevel("test.x.delay", n))
		if !ok || got != n || p != "test.x.delay" {
			t.Errorf("DelayLevelOf(level %d) = %q %d %v", n, p, got, ok)
		}
	}
	for _, name := range []string{"acemq.delay.28", "acemq.delay.7", "orders.07", "acemq.delay.delivery", "delay.07", "acemq.delay.x7"} {
		if wire.IsDelayLevel(name) {
			t.Errorf("IsDelayLevel(%q) = true", name)
		}
	}
	for _, p := range []string{"", "delay", "acemq.delays", "a..delay", "a.*.delay", "#.delay", ".delay"} {
		if wire.CheckDelayPrefix(p) == nil {
			t.Errorf("CheckDelayPrefix(%q) accepted it", p)
		}
	}
	if err := wire.CheckDelayPrefix("test.abc.delay"); err != nil {
		t.Error(err)
	}
}

// What the topology cannot deliver is refused: the default exchange, an
// exchange that is not plain words, a routing key a level would route on.
func TestCheckDelayDestination(t *testing.T) {
	for _, tc := range []struct{ ex, key, want string }{
		{"", "q", "default exchange"},
		{"a.*", "k", "no * or #"},
		{"a..b", "k", "empty word"},
		{strings.Repeat("x", 200), "k", "at most 199"},
		{"orders", "orders.1", `word 2 is "1"`},
		{"orders", "0", `word 1 is "0"`},
		{"orders", strings.Repeat("a.", 28) + "a", "has 29 words"},
	} {
		err := wire.CheckDelayDestination(tc.ex, tc.key)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckDelayDestination(%q, %q) = %v, want %q", tc.ex, tc.key, err, tc.want)
		}
	}
	for _, tc := range []struct{ ex, key string }{{"orders", "order.created"}, {"a.b-c_d", ""}, {"orders", "v1.10.x"}, {"o", strings.Repeat("a.", 27) + "a"}} {
		if err := wire.CheckDelayDestination(tc.ex, tc.key); err != nil {
			t.Errorf("CheckDelayDestination(%q, %q) = %v", tc.ex, tc.key, err)
		}
	}
}
