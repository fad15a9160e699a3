package runtime_test

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
)

// A missing spill rung is remembered (issue 23): with 300 retries past the
// hold budget and the rung undeclared, only the copies written before the
// first one came back try the rung (at most the qos), one WARN line says
// so, and every wait is held in memory and comes back once. Before, each
// of the 300 tried the rung (a returned publish and a WARN line each).
func TestMissingRungIsRemembered(t *testing.T) {
	t.Parallel()
	const n, prefetch = 300, 20
	q := brokertest.Queue(t, "rung.remembered")
	rawQueue(t, q, nil)
	capture, logger := newLogCapture()
	reader, meterOpt := meter(t)
	c := dial(t, meterOpt, runtime.WithLogger(logger))
	policy := runtime.Fixed(2, 100*time.Millisecond)
	_, rec := consume(t, c, q, &policy, failOnce, runtime.WithHoldBudget(0), runtime.WithPrefetch(prefetch),
		runtime.WithRungProbeForTest(time.Hour))
	publishN(t, c, q, n)
	waitPoint(t, reader, wire.MetricOutcome, outcomeKey(q, "accepted", ""), n, false)
	if calls := rec.all(); len(calls) != 2*n {
		t.Errorf("%d handler calls, want %d (each message once per attempt)", len(calls), 2*n)
	}
	if got := counter(t, reader, wire.MetricRungMissing); got != n {
		t.Errorf("%s = %v, want %d (every wait held in memory)", wire.MetricRungMissing, got, n)
	}
	// The qos: the prefetch, no budget, and the default ack slack (as
	// large as the prefetch).
	tried, qos := returnedRetries(t, reader), 2*prefetch
	if tried < 1 || tried > float64(qos) {
		t.Errorf("%v retry copies returned by the missing rung, want 1..%d (those written before the first came back: at most the qos)", tried, qos)
	}
	warns := capture.matching("rung queue missing")
	if len(warns) != 1 || warns[0].Attrs["rung"] != q+".retry.1s" || warns[0].Attrs["held_in_memory"] != "1" {
		t.Errorf("WARN lines %v, want exactly one naming %s.retry.1s with held_in_memory=1", warns, q)
	}
}

// A remembered rung is probed again once per interval: while it is
// missing one WARN line per probe counts the waits held in memory since
// the last; once it is declared, the next probe finds it and the waits go
// to the broker again.
func TestMissingRungIsProbedAgain(t *testing.T) {
	t.Parallel()
	const probe = 400 * time.Millisecond
	q := brokertest.Queue(t, "rung.probed")
	rawQueue(t, q, nil)
	capture, logger := newLogCapture()
	reader, meterOpt := meter(t)
	c := dial(t, meterOpt, runtime.WithLogger(logger))
	policy := runtime.Fixed(2, 100*time.Millisecond)
	consume(t, c, q, &policy, failOnce, runtime.WithHoldBudget(0), runtime.WithRungProbeForTest(probe))
	start := time.Now()
	published := 0
	for ; time.Since(start) < 5*probe; published++ {
		publishText(t, c, q, "m"+strconv.Itoa(published))
		time.Sleep(20 * time.Millisecond)
	}
	waitPoint(t, reader, wire.MetricOutcome, outcomeKey(q, "accepted", ""), float64(published), false)
	tried, warns := returnedRetries(t, reader), capture.matching("rung queue missing")
	probes := float64(time.Since(start) / probe)
	if tried > probes+4 || float64(len(warns)) > probes+2 || len(warns) < 2 {
		t.Errorf("%v copies returned and %d WARN lines in %s (%d retries, %v probe intervals), want at most %v and 2..%v (one per probe)",
			tried, len(warns), time.Since(start).Round(time.Millisecond), published, probes, probes+4, probes+2)
	}
	held := 0
	for _, w := range warns {
		k, _ := strconv.Atoi(w.Attrs["held_in_memory"])
		held += k
	}
	if held < len(warns) {
		t.Errorf("WARN lines count %d waits held in all, want at least one per line: %v", held, warns)
	}

	rawQueue(t, q+".retry.1s", amqp.Table{"x-message-ttl": int32(1000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": q})
	deadline := time.Now().Add(wait)
	for i := 0; len(capture.matching("rung queue found again")) == 0; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("no probe found %s.retry.1s within %s; logs:\n%s", q, wait, capture.dump())
		}
		publishText(t, c, q, fmt.Sprintf("after %d", i))
		time.Sleep(50 * time.Millisecond)
	}
	publishText(t, c, q, "to the broker")
	waitPoint(t, reader, wire.MetricOutcome, outcomeKey(q, "retried", "broker"), 2, true)
}

// failOnce retries a message's first attempt and accepts its second.
func failOnce(m seen) runtime.Ack {
	if m.Envelope.Attempt == 1 {
		return runtime.Retry(errors.New("no rung"))
	}
	return runtime.Accept()
}

// publishN publishes n text messages to q in one batch.
func publishN(t *testing.T, c *runtime.Connection, q string, n int) {
	t.Helper()
	bodies := make([]string, n)
	for i := range bodies {
		bodies[i] = "m" + strconv.Itoa(i)
	}
	if err := runtime.PublishBatch(ctxFor(t, 30*time.Second), c, textType, "", bodies, runtime.WithRoutingKey(q)); err != nil {
		t.Fatalf("PublishBatch: %v", err)
	}
}

// returnedRetries counts the consumer's retry copies that no queue took.
func returnedRetries(t *testing.T, reader *sdkmetric.ManualReader) float64 {
	t.Helper()
	sent, _ := points(t, reader, wire.MetricSent)
	return sumWhere(sent, "acemq.publish=retry", "error.type=unroutable")
}
