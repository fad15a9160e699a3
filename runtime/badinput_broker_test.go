package runtime_test

// Forged and garbled envelopes, against the broker: never a crash, never a
// lost message, a garbled attempt is attempt 1.

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

func TestGarbledAttemptIsAttemptOne(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "garbled")
	rawQueue(t, q, nil)
	c := dial(t)
	_, rec := consume(t, c, q, ptr(runtime.Fixed(2, 100*time.Millisecond)), func(m seen) runtime.Ack {
		if m.Body[0] == 'r' && m.Envelope.Attempt == 1 { // "retry …": fail once
			return runtime.Retry(errors.New("once more"))
		}
		return runtime.Accept()
	})
	forged := map[string]any{
		"abc":                         "abc",
		"int -1":                      int64(-1),
		"string -1":                   "-1",
		"zero":                        int64(0),
		"2^63 as a string":            "9223372036854775808",
		"2^63 as float64":             float64(1 << 63),
		"a table":                     amqp.Table{"attempt": int64(3)},
		"retry after abc":             "abc",
		"retry after 2^63 as float64": float64(1 << 63),
	}
	for body, attempt := range forged {
		rawPublish(t, q, textMessage(body, amqp.Table{wire.HeaderAttempt: attempt}))
	}
	rawPublish(t, q, textMessage("absent", nil))
	rawPublish(t, q, textMessage("numeric string 3", amqp.Table{wire.HeaderAttempt: "3"}))

	calls := rec.waitN(t, len(forged)+2+2, wait) // two retried once
	got := map[string][]int{}
	for _, c := range calls {
		got[c.Body] = append(got[c.Body], c.Envelope.Attempt)
	}
	for body := range forged {
		want := []int{1}
		if body[0] == 'r' {
			want = []int{1, 2}
		}
		if !slices.Equal(got[body], want) {
			t.Errorf("%s: attempts %v, want %v", body, got[body], want)
		}
	}
	if !slices.Equal(got["absent"], []int{1}) {
		t.Errorf("absent x-acemq-attempt: attempts %v, want [1]", got["absent"])
	}
	if !slices.Equal(got["numeric string 3"], []int{3}) {
		t.Errorf(`x-acemq-attempt "3": attempts %v, want [3] (read from a numeric string)`, got["numeric string 3"])
	}
	time.Sleep(settle)
	for _, n := range []string{q, q + ".dlq", q + ".parked"} {
		if d := depth(t, n); d != 0 {
			t.Errorf("%s holds %d, want 0: every forged message was handled", n, d)
		}
	}

	// The consumer survived all of it.
	publishText(t, c, q, "still alive")
	rec.waitFor(t, wait, "a message after the forged ones", func(calls []seen) bool {
		return slices.ContainsFunc(calls, func(c seen) bool { return c.Body == "still alive" })
	})
}

func TestGarbledEnvelopeOnDeadLetter(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "garbled.dlq")
	rawQueue(t, q, nil)
	c := dial(t)
	consume(t, c, q, nil, func(seen) runtime.Ack { return runtime.Retry(errors.New("no")) })
	rawPublish(t, q, textMessage("forged", amqp.Table{
		wire.HeaderAttempt:   "9223372036854775808",
		wire.HeaderFirstSeen: "yesterday-ish",
		wire.HeaderID:        int64(42),
		"x-death":            "not a table",
	}))
	d := getOne(t, q+".dlq", wait)
	if got := headerString(t, d, wire.HeaderError); got != "gave up after 1 attempts: no" {
		t.Errorf("x-acemq-error = %q", got)
	}
	if string(d.Body) != "forged" {
		t.Errorf("body = %q", d.Body)
	}
	if _, ok := d.Headers["x-death"]; ok {
		t.Errorf("the dead letter kept x-death %v: every republish drops it", d.Headers["x-death"])
	}
}
