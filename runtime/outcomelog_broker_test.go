package runtime_test

// The consumer's log, captured through a slog handler: one line per
// outcome that is not Accept, a panic's stack at Error (rate-limited), and
// neither the body nor the password unless asked.

import (
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

func TestOutcomeLogLines(t *testing.T) {
	t.Parallel()
	capture, logger := newLogCapture()
	c := dial(t, runtime.WithLogger(logger))
	q := brokertest.Queue(t, "outcome-log")
	// Attempt 1 waits 500ms (±20%) in memory, attempt 2 waits 1s on the rung.
	policy := runtime.Exponential(3, 500*time.Millisecond, time.Second).WithWaitInBrokerFrom(time.Second)
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: policy}))

	var mu sync.Mutex
	ids := map[string]string{} // body → x-acemq-id
	_, rec := consume(t, c, q, &policy, func(m seen) runtime.Ack {
		mu.Lock()
		ids[m.Body] = m.Envelope.ID
		mu.Unlock()
		switch m.Body {
		case "body-retry-7f3a":
			return runtime.Retry(errors.New("downstream down"))
		case "body-park-7f3a":
			return runtime.Park(errors.New("bad customer"))
		case "body-panic-7f3a":
			var m map[string]int
			m["x"]++ // panics: assignment to entry in nil map
		}
		return runtime.Accept()
	})
	for _, b := range []string{"body-retry-7f3a", "body-park-7f3a", "body-panic-7f3a", "body-accept-7f3a"} {
		publishText(t, c, q, b)
	}
	rawPublish(t, q, amqp.Publishing{Type: "nobody.handles.this", Body: []byte("body-undecodable-7f3a"), MessageId: "raw-1"})
	rec.waitN(t, 1+1+3+1, wait)
	capture.waitFor(t, "acemq: dead-lettered", 2, wait)
	capture.waitFor(t, "acemq: parked", 2, wait)

	byID := func(msg, id string) []logRecord {
		var out []logRecord
		for _, r := range capture.matching(msg) {
			if r.Attrs["id"] == id {
				out = append(out, r)
			}
		}
		return out
	}
	mu.Lock()
	defer mu.Unlock()

	// Retries: Info, the failed attempt, where the wait is held, the delay.
	retries := byID("acemq: retry", ids["body-retry-7f3a"])
	if len(retries) != 2 {
		t.Fatalf("%d retry lines for the retried message, want 2:\n%s", len(retries), capture.dump())
	}
	for i, want := range []struct{ attempt, wait string }{{"1", "memory"}, {"2", "broker"}} {
		r := retries[i]
		if r.Level != slog.LevelInfo || r.Attrs["attempt"] != want.attempt || r.Attrs["wait"] != want.wait ||
			r.Attrs["reason"] != "downstream down" || r.Attrs["queue"] != q || r.Attrs["type"] != textType.Name() {
			t.Errorf("retry line %d = %v; want Info, attempt %s, wait %s, reason, queue, type", i, r, want.attempt, want.wait)
		}
	}
	if d, err := time.ParseDuration(retries[0].Attrs["delay"]); err != nil || d < 400*time.Millisecond || d > 600*time.Millisecond {
		t.Errorf("memory delay %q, want 500ms ±20%%", retries[0].Attrs["delay"])
	}
	if retries[1].Attrs["delay"] != "1s" {
		t.Errorf("broker delay %q, want 1s", retries[1].Attrs["delay"])
	}

	// Dead letter and parks: Warn, with the reason and where it went.
	checkWarn := func(msg, id, attempt, reason, to string) {
		t.Helper()
		rs := byID(msg, id)
		if len(rs) != 1 {
			t.Errorf("%d %q lines for %s, want 1:\n%s", len(rs), msg, id, capture.dump())
			return
		}
		r := rs[0]
		if r.Level != slog.LevelWarn || r.Attrs["attempt"] != attempt || !strings.HasPrefix(r.Attrs["reason"], reason) || r.Attrs["to"] != to || r.Attrs["queue"] != q {
			t.Errorf("%q line = %v; want Warn, attempt %s, reason %q…, to %s", msg, r, attempt, reason, to)
		}
	}
	checkWarn("acemq: dead-lettered", ids["body-retry-7f3a"], "3", "gave up after 3 attempts: downstream down", q+".dlq")
	checkWarn("acemq: parked", ids["body-park-7f3a"], "1", "parked by the handler: bad customer", q+".parked")
	checkWarn("acemq: parked", "raw-1", "1", `could not be decoded: no handler for type "nobody.handles.this"`, q+".parked")

	// The panic: a retry whose reason names the value and the line; its
	// stack at Error once (three panics within the rate limit).
	capture.waitFor(t, "acemq: dead-lettered", 2, wait)
	panics := capture.matching("acemq: handler panicked")
	if len(panics) != 1 {
		t.Fatalf("%d panic records for three panics within %s, want 1 (rate-limited):\n%s", len(panics), "10s", capture.dump())
	}
	p := panics[0]
	t.Logf("panic reason: %s", p.Attrs["reason"])
	if p.Level != slog.LevelError || !strings.Contains(p.Attrs["stack"], "outcomelog_broker_test.go:") || !strings.Contains(p.Attrs["stack"], "goroutine ") {
		t.Errorf("panic record = %v; want Error with the goroutine stack", p)
	}
	if r := p.Attrs["reason"]; !strings.Contains(r, "handler panicked: assignment to entry in nil map (at runtime_test.TestOutcomeLogLines.func") || !strings.Contains(r, "runtime/outcomelog_broker_test.go:") {
		t.Errorf("panic reason %q; want the value and the handler's file:line", r)
	}
	var dead amqp.Delivery
	for _, d := range drain(t, q+".dlq", 2, wait) {
		if string(d.Body) == "body-panic-7f3a" {
			dead = d
		}
	}
	if r := headerString(t, dead, wire.HeaderError); !strings.HasPrefix(r, "gave up after 3 attempts: handler panicked: assignment to entry in nil map (at runtime_test.") || !strings.Contains(r, "outcomelog_broker_test.go:") {
		t.Errorf("the panic's dead letter says %q; want the value and the frame", r)
	}

	// Never the body, never the password.
	if text := capture.text(); strings.Contains(text, "7f3a") || strings.Contains(text, "guest:guest") {
		t.Errorf("the logs show a body or the password:\n%s", text)
	}
}

// WithBodyInLogs adds the body, cut, to the outcome lines.
func TestOutcomeLogBodyWhenAsked(t *testing.T) {
	t.Parallel()
	capture, logger := newLogCapture()
	c := dial(t, runtime.WithLogger(logger))
	q := brokertest.Queue(t, "outcome-body")
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
	consume(t, c, q, nil, func(seen) runtime.Ack { return runtime.Park(errors.New("look at it")) }, runtime.WithBodyInLogs(10))
	publishText(t, c, q, "0123456789abcdef")
	r := capture.waitFor(t, "acemq: parked", 1, wait)[0]
	if r.Attrs["body"] != "0123456789 … (cut)" {
		t.Errorf("body in the log = %q, want the first 10 bytes and a cut mark", r.Attrs["body"])
	}
}
