package runtime_test

import (
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// attrKey is the points key of an attribute set: "k=v" pairs sorted by key.
func attrKey(kv ...string) string {
	pairs := make([]string, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		pairs = append(pairs, kv[i]+"="+kv[i+1])
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ",")
}

// outcomeKey is the exact attribute set of acemq.outcome for q.
func outcomeKey(q, outcome, wait string) string {
	kv := []string{"messaging.system", "rabbitmq", "messaging.destination.name", q,
		"acemq.message.type", textType.Name(), "acemq.outcome", outcome}
	if wait != "" {
		kv = append(kv, "acemq.wait", wait)
	}
	return attrKey(kv...)
}

// queueKey is the exact attribute set of the acemq counters about a queue
// (rung.missing, set_aside.failed).
func queueKey(q string) string {
	return attrKey("messaging.system", "rabbitmq", "messaging.destination.name", q)
}

// waitPoint waits until the point of name with exactly the attributes key
// reaches want (at least want when atLeast), and returns every point of
// name then.
func waitPoint(t *testing.T, reader *sdkmetric.ManualReader, name, key string, want float64, atLeast bool) map[string]float64 {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		pts, _ := points(t, reader, name)
		if got := pts[key]; got == want || atLeast && got > want {
			return pts
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s{%s} = %v after %s, want %v: %v", name, key, pts[key], wait, want, pts)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// onlyOutcomes checks that q's outcome points are exactly want (key →
// count): nothing else was counted for q.
func onlyOutcomes(t *testing.T, pts map[string]float64, q string, want map[string]float64) {
	t.Helper()
	for k, v := range pts {
		if !strings.Contains(","+k+",", ",messaging.destination.name="+q+",") {
			continue
		}
		if want[k] != v {
			t.Errorf("acemq.outcome{%s} = %v, want %v", k, v, want[k])
		}
	}
	for k, v := range want {
		if pts[k] != v {
			t.Errorf("acemq.outcome{%s} = %v, want %v (all: %v)", k, pts[k], v, pts)
		}
	}
}

// The outcomes and counters the retried-twice test does not reach, each
// on the real broker with its exact attributes (issue 12): gave_up_too_old, gave_up_attempts,
// rejected, retried with acemq.wait=broker and requeue, and the two
// topology alarms, acemq.retry.rung.missing and acemq.set_aside.failed.
func TestMetricsOfEveryOutcome(t *testing.T) {
	t.Parallel()

	t.Run("gave_up_too_old", func(t *testing.T) {
		t.Parallel()
		reader, withMeter := meter(t)
		q := brokertest.Queue(t, "metrics.giveup")
		rawQueue(t, q, nil)
		c := dial(t, withMeter)
		policy := runtime.Fixed(5, 100*time.Millisecond).WithGiveUpAfter(time.Minute)
		consume(t, c, q, &policy, func(seen) runtime.Ack { return runtime.Retry(errors.New("still down")) })
		hourAgo := time.Now().Add(-time.Hour).UTC().Format("2006-01-02T15:04:05.000Z")
		rawPublish(t, q, textMessage("old news", amqp.Table{wire.HeaderFirstSeen: hourAgo, wire.HeaderID: "old-1"}))
		getOne(t, wire.DeadLetterQueue(q), wait)
		pts := waitPoint(t, reader, wire.MetricOutcome, outcomeKey(q, "gave_up_too_old", ""), 1, false)
		onlyOutcomes(t, pts, q, map[string]float64{outcomeKey(q, "gave_up_too_old", ""): 1})
		sent, _ := points(t, reader, wire.MetricSent)
		if got := sumWhere(sent, "acemq.publish=dead_letter", "messaging.destination.name=amq.default", "acemq.message.type="+textType.Name()); got != 1 {
			t.Errorf("sent{acemq.publish=dead_letter} = %v, want 1: %v", got, sent)
		}
	})

	// Issue 22: two messages whose ladder ran out ("gave up after 5
	// attempts") show as gave_up_attempts 2 in Stats, the metric and the
	// log lines' outcome field; gave_up_too_old (GiveUpAfter's age) stays
	// at 0.
	t.Run("gave_up_attempts", func(t *testing.T) {
		t.Parallel()
		reader, withMeter := meter(t)
		logs, logger := newLogCapture()
		q := brokertest.Queue(t, "metrics.exhausted")
		rawQueue(t, q, nil)
		c := dial(t, withMeter, runtime.WithLogger(logger))
		policy := runtime.Fixed(5, 10*time.Millisecond)
		cs, _ := consume(t, c, q, &policy, func(seen) runtime.Ack { return runtime.Retry(errors.New("the warehouse said no")) })
		publishText(t, c, q, "A-1")
		publishText(t, c, q, "A-2")
		for range 2 {
			if got := headerString(t, getOne(t, wire.DeadLetterQueue(q), wait), wire.HeaderError); got != "gave up after 5 attempts: the warehouse said no" {
				t.Errorf("dead letter's %s = %q", wire.HeaderError, got)
			}
		}
		pts := waitPoint(t, reader, wire.MetricOutcome, outcomeKey(q, "gave_up_attempts", ""), 2, false)
		onlyOutcomes(t, pts, q, map[string]float64{outcomeKey(q, "retried", "memory"): 8, outcomeKey(q, "gave_up_attempts", ""): 2})
		st := cs.Stats()
		if st.Handled["gave_up_attempts"] != 2 || st.Handled["gave_up_too_old"] != 0 || st.Handled["retried"] != 8 {
			t.Errorf("Stats().Handled = %v, want gave_up_attempts 2, gave_up_too_old 0, retried 8", st.Handled)
		}
		lines := logs.waitFor(t, "acemq: dead-lettered", 2, wait)
		for _, r := range lines {
			if r.Attrs["outcome"] != "gave_up_attempts" || r.Attrs["attempt"] != "5" || r.Attrs["reason"] != "gave up after 5 attempts: the warehouse said no" {
				t.Errorf("log line %v, want outcome=gave_up_attempts attempt=5 and the reason", r)
			}
		}
		if retries := logs.matching("acemq: retry"); len(retries) == 0 || retries[0].Attrs["outcome"] != "retried" {
			t.Errorf("retry lines %v, want outcome=retried", retries)
		}
	})

	t.Run("rejected", func(t *testing.T) {
		t.Parallel()
		reader, withMeter := meter(t)
		q := brokertest.Queue(t, "metrics.reject")
		rawQueue(t, q, nil)
		c := dial(t, withMeter)
		consume(t, c, q, nil, func(seen) runtime.Ack { return runtime.Reject(errors.New("no such customer")) })
		publishText(t, c, q, "order for nobody")
		getOne(t, wire.DeadLetterQueue(q), wait)
		pts := waitPoint(t, reader, wire.MetricOutcome, outcomeKey(q, "rejected", ""), 1, false)
		onlyOutcomes(t, pts, q, map[string]float64{outcomeKey(q, "rejected", ""): 1})
		durations, _ := points(t, reader, wire.MetricProcessDuration)
		key := attrKey("messaging.system", "rabbitmq", "messaging.destination.name", q, "messaging.operation.name", "process",
			"messaging.operation.type", "process", "acemq.message.type", textType.Name(), "error.type", "reject")
		if durations[key] != 1 {
			t.Errorf("messaging.process.duration{%s} count = %v, want 1: %v", key, durations[key], durations)
		}
	})

	t.Run("retried in the broker", func(t *testing.T) {
		t.Parallel()
		reader, withMeter := meter(t)
		q := brokertest.Queue(t, "metrics.rung")
		policy := runtime.Fixed(2, time.Second).WithWaitInBrokerFrom(time.Second)
		c := dial(t, withMeter)
		declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: policy}))
		consume(t, c, q, &policy, func(m seen) runtime.Ack {
			if m.Envelope.Attempt == 1 {
				return runtime.Retry(errors.New("once"))
			}
			return runtime.Accept()
		})
		publishText(t, c, q, "via the rung")
		pts := waitPoint(t, reader, wire.MetricOutcome, outcomeKey(q, "accepted", ""), 1, false)
		onlyOutcomes(t, pts, q, map[string]float64{outcomeKey(q, "retried", "broker"): 1, outcomeKey(q, "accepted", ""): 1})
		sent, _ := points(t, reader, wire.MetricSent)
		if got := sumWhere(sent, "acemq.publish=retry", "messaging.destination.name=amq.default"); got != 1 {
			t.Errorf("sent{acemq.publish=retry} = %v, want 1 (the copy to the rung): %v", got, sent)
		}
		// With the rung declared: the queue's series at 0 (it exists from
		// the consumer's start, so that Prometheus sees its first increase).
		if missing, _ := points(t, reader, wire.MetricRungMissing); len(missing) != 1 || missing[queueKey(q)] != 0 {
			t.Errorf("acemq.retry.rung.missing = %v with the rung declared, want exactly {%s: 0}", missing, queueKey(q))
		}
	})

	t.Run("retried by a requeue", func(t *testing.T) {
		t.Parallel()
		reader, withMeter := meter(t)
		q := brokertest.Queue(t, "metrics.requeue")
		rawQueue(t, q, nil)
		c := dial(t, withMeter)
		consume(t, c, q, ptr(runtime.Fixed(3, time.Minute)), func(m seen) runtime.Ack {
			if !m.Redelivered {
				return runtime.Retry(errors.New("local and brief"))
			}
			return runtime.Accept()
		}, runtime.WithRequeueOnFailure())
		publishText(t, c, q, "bounce")
		pts := waitPoint(t, reader, wire.MetricOutcome, outcomeKey(q, "accepted", ""), 1, false)
		onlyOutcomes(t, pts, q, map[string]float64{outcomeKey(q, "retried", "requeue"): 1, outcomeKey(q, "accepted", ""): 1})
		consumed, _ := points(t, reader, wire.MetricConsumed)
		if got := sumWhere(consumed, "messaging.destination.name="+q); got != 2 {
			t.Errorf("consumed = %v, want 2 (the delivery and its requeue): %v", got, consumed)
		}
	})

	t.Run("rung missing", func(t *testing.T) {
		t.Parallel()
		reader, withMeter := meter(t)
		q := brokertest.Queue(t, "metrics.norung")
		policy := runtime.Fixed(2, time.Second).WithWaitInBrokerFrom(time.Second)
		c := dial(t, withMeter)
		declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: policy}))
		if _, err := rawChannel(t).QueueDelete(wire.RungQueue(q, time.Second), false, false, false); err != nil {
			t.Fatalf("delete the rung: %v", err)
		}
		consume(t, c, q, &policy, func(m seen) runtime.Ack {
			if m.Envelope.Attempt == 1 {
				return runtime.Retry(errors.New("the rung is gone"))
			}
			return runtime.Accept()
		})
		publishText(t, c, q, "lost rung")
		pts := waitPoint(t, reader, wire.MetricOutcome, outcomeKey(q, "accepted", ""), 1, false)
		// The broker wait fell back to memory: counted as such.
		onlyOutcomes(t, pts, q, map[string]float64{outcomeKey(q, "retried", "memory"): 1, outcomeKey(q, "accepted", ""): 1})
		missing, m := points(t, reader, wire.MetricRungMissing)
		if len(missing) != 1 || missing[queueKey(q)] != 1 {
			t.Errorf("acemq.retry.rung.missing = %v, want exactly {%s: 1}", missing, queueKey(q))
		}
		if m.Unit != "{message}" {
			t.Errorf("acemq.retry.rung.missing unit %q, want {message}", m.Unit)
		}
	})

	t.Run("set aside failed", func(t *testing.T) {
		t.Parallel()
		reader, withMeter := meter(t)
		q := brokertest.Queue(t, "metrics.setaside")
		rawQueue(t, q, nil) // and no q.dlq: the dead letter is returned
		c := dial(t, withMeter)
		consume(t, c, q, nil, func(seen) runtime.Ack { return runtime.Reject(errors.New("nowhere to go")) },
			runtime.WithoutDeclare(), runtime.WithSetAsideTiming(50*time.Millisecond, 100*time.Millisecond, time.Hour))
		publishText(t, c, q, "homeless")
		failed := waitPoint(t, reader, wire.MetricSetAsideFailed, queueKey(q), 3, true)
		if len(failed) != 1 {
			t.Errorf("acemq.set_aside.failed = %v, want only {%s}", failed, queueKey(q))
		}
		// Not carried out yet: no outcome counted.
		if pts, _ := points(t, reader, wire.MetricOutcome); sumWhere(pts, "messaging.destination.name="+q) != 0 {
			t.Errorf("outcomes counted while the dead letter could not be published: %v", pts)
		}
		sent, _ := points(t, reader, wire.MetricSent)
		if got := sumWhere(sent, "acemq.publish=dead_letter", "error.type=unroutable"); got < 3 {
			t.Errorf("sent{acemq.publish=dead_letter,error.type=unroutable} = %v, want ≥ 3 (each returned try): %v", got, sent)
		}
		declareDLQ(t, q)
		getOne(t, wire.DeadLetterQueue(q), wait)
		pts := waitPoint(t, reader, wire.MetricOutcome, outcomeKey(q, "rejected", ""), 1, false)
		onlyOutcomes(t, pts, q, map[string]float64{outcomeKey(q, "rejected", ""): 1})
	})
}
