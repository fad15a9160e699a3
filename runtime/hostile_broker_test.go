package runtime_test

// Hostile headers against the broker: whatever a producer forges in
// x-acemq-attempt, x-death or x-acemq-first-seen, a message that keeps
// failing reaches q.dlq within the policy's attempts + 1 deliveries (the
// forged value counts as attempt 1 at worst), never a crash, never a loop.

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

func TestForgedHeadersReachTheDLQWithinThePolicy(t *testing.T) {
	t.Parallel()
	const attempts = 3
	q := brokertest.Queue(t, "hostile")
	rawQueue(t, q, nil)
	c := dial(t)
	_, rec := consume(t, c, q, ptr(runtime.Fixed(attempts, 50*time.Millisecond)), func(seen) runtime.Ack {
		return runtime.Retry(errors.New("always fails"))
	})
	forged := map[string]amqp.Table{
		"attempt -1":         {wire.HeaderAttempt: int64(-1)},
		"attempt 0":          {wire.HeaderAttempt: int64(0)},
		"attempt 2^63":       {wire.HeaderAttempt: "9223372036854775808"},
		"attempt maxint64":   {wire.HeaderAttempt: int64(math.MaxInt64)},
		"attempt abc":        {wire.HeaderAttempt: "abc"},
		"attempt table":      {wire.HeaderAttempt: amqp.Table{"n": int64(2)}},
		"attempt float":      {wire.HeaderAttempt: 2.5},
		"attempt 1e300":      {wire.HeaderAttempt: 1e300}, // RabbitMQ nacks a NaN header: the fuzz target covers it
		"attempt bytes":      {wire.HeaderAttempt: []byte{0xff, 0xfe}},
		"x-death a string":   {"x-death": "not a table"},
		"x-death forged":     {"x-death": []any{amqp.Table{"queue": q, "reason": "expired", "count": int64(1 << 40), "exchange": ""}}},
		"first-seen garbage": {wire.HeaderFirstSeen: "yesterday-ish"},
		"first-seen number":  {wire.HeaderFirstSeen: int64(-5)},
		"first-seen future":  {wire.HeaderFirstSeen: "9999-12-31T23:59:59.000Z"},
		"all at once": {
			wire.HeaderAttempt: "-7", wire.HeaderFirstSeen: "\x00", "x-death": int64(3),
			wire.HeaderID: int64(42), wire.HeaderError: amqp.Table{},
		},
	}
	for body, h := range forged {
		rawPublish(t, q, textMessage(body, h))
	}
	dls := drain(t, q+".dlq", len(forged), 30*time.Second)
	got := map[string]amqp.Delivery{}
	for _, d := range dls {
		got[string(d.Body)] = d
	}
	calls := map[string]int{}
	for _, s := range rec.all() {
		calls[s.Body]++
	}
	for body := range forged {
		d, ok := got[body]
		if !ok {
			t.Errorf("%s: did not reach %s.dlq", body, q)
			continue
		}
		if n := calls[body]; n < 1 || n > attempts+1 {
			t.Errorf("%s: handled %d times before the dead letter, want 1..%d", body, n, attempts+1)
		}
		reason, _ := d.Headers[wire.HeaderError].(string)
		if !strings.HasPrefix(reason, "gave up after ") || !strings.HasSuffix(reason, ": always fails") {
			t.Errorf("%s: x-acemq-error = %q", body, reason)
		}
		if _, ok := d.Headers["x-death"]; ok {
			t.Errorf("%s: the dead letter kept x-death", body)
		}
		if a, ok := d.Headers[wire.HeaderAttempt].(int64); !ok || a < 1 || a > attempts {
			t.Errorf("%s: the dead letter's x-acemq-attempt = %v (%T), want 1..%d", body, d.Headers[wire.HeaderAttempt], d.Headers[wire.HeaderAttempt], attempts)
		}
	}
	time.Sleep(settle)
	if d := depth(t, q); d != 0 {
		t.Errorf("%s holds %d: a forged message loops", q, d)
	}
	if t.Failed() {
		t.Log(fmt.Sprint(calls))
	}
}
