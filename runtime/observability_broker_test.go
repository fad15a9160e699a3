package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// points are the data points of one instrument, each as its attributes
// ("k=v,k=v" sorted) and value (a counter's sum, a histogram's count, a
// gauge's value).
func points(t *testing.T, reader *sdkmetric.ManualReader, name string) (map[string]float64, metricdata.Metrics) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("collect metrics: %v", err)
	}
	out := map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			key := func(s attribute.Set) string {
				var kv []string
				for _, a := range s.ToSlice() {
					kv = append(kv, string(a.Key)+"="+a.Value.Emit())
				}
				return strings.Join(kv, ",")
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[key(p.Attributes)] += float64(p.Value)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out[key(p.Attributes)] += float64(p.Count)
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					out[key(p.Attributes)] += float64(p.Value)
				}
			default:
				t.Fatalf("%s is a %T", name, m.Data)
			}
			return out, m
		}
	}
	return out, metricdata.Metrics{}
}

// sumWhere adds the points whose attributes contain every one of want.
func sumWhere(pts map[string]float64, want ...string) float64 {
	var sum float64
	for k, v := range pts {
		ok := true
		for _, w := range want {
			if !strings.Contains(","+k+",", ","+w+",") {
				ok = false
			}
		}
		if ok {
			sum += v
		}
	}
	return sum
}

// A message retried twice and then dead-lettered, on the real broker: the
// metrics say sent 1 (the application's publish; the runtime's copies are
// counted apart), consumed 3, retried 2, gave_up_attempts 1, with the
// conventions' attribute names and units; one trace holds the publish, the
// three process spans (each a child of the publish that brought it), the
// two retry publishes and the dead-letter publish, with status Error and the
// reason on each failed process span; a replay of the dead letter is one
// more publish span in the same trace.
func TestObservabilityRetriedTwiceThenDeadLettered(t *testing.T) {
	t.Parallel()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })

	c := dial(t, runtime.WithMeterProvider(mp), runtime.WithTracerProvider(tp))
	q := brokertest.Queue(t, "obs")
	policy := runtime.Fixed(3, 50*time.Millisecond)
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: policy}))
	cs, rec := consume(t, c, q, &policy, func(m seen) runtime.Ack {
		return runtime.Retry(fmt.Errorf("payment service down (attempt %d)", m.Envelope.Attempt))
	})

	ctx, root := tp.Tracer("test").Start(ctxFor(t, 30*time.Second), "place order")
	if err := runtime.Publish(ctx, c, textType, "", "order 1", runtime.WithRoutingKey(q), runtime.WithCorrelationID("conv-1")); err != nil {
		t.Fatal(err)
	}
	root.End()
	rec.waitN(t, 3, wait)
	deadline := time.Now().Add(wait)
	for {
		pts, _ := points(t, reader, wire.MetricOutcome)
		if sumWhere(pts, "acemq.outcome=gave_up_attempts") == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no gave_up_attempts outcome within %s: %v", wait, pts)
		}
		time.Sleep(20 * time.Millisecond)
	}

	dest := "messaging.destination.name=" + q
	sent, sentM := points(t, reader, wire.MetricSent)
	if got := sumWhere(sent, "acemq.publish=application", "messaging.system=rabbitmq", "messaging.operation.name=publish", "messaging.destination.name=amq.default", "acemq.message.type=acemq.test.text"); got != 1 {
		t.Errorf("sent by the application = %v, want 1: %v", got, sent)
	}
	if got := sumWhere(sent, "acemq.publish=retry"); got != 2 {
		t.Errorf("sent as retries = %v, want 2: %v", got, sent)
	}
	if got := sumWhere(sent, "acemq.publish=dead_letter"); got != 1 {
		t.Errorf("sent as dead letters = %v, want 1: %v", got, sent)
	}
	if sentM.Unit != "{message}" {
		t.Errorf("%s unit %q, want {message}", wire.MetricSent, sentM.Unit)
	}
	consumed, _ := points(t, reader, wire.MetricConsumed)
	if got := sumWhere(consumed, dest, "messaging.operation.name=process"); got != 3 {
		t.Errorf("consumed = %v, want 3: %v", got, consumed)
	}
	outcomes, _ := points(t, reader, wire.MetricOutcome)
	if got := sumWhere(outcomes, dest, "acemq.outcome=retried", "acemq.wait=memory"); got != 2 {
		t.Errorf("retried = %v, want 2: %v", got, outcomes)
	}
	if got := sumWhere(outcomes, dest, "acemq.outcome=gave_up_attempts"); got != 1 {
		t.Errorf("gave_up_attempts = %v, want 1: %v", got, outcomes)
	}
	if got := sumWhere(outcomes); got != 3 {
		t.Errorf("outcomes in all = %v, want 3: %v", got, outcomes)
	}
	proc, procM := points(t, reader, wire.MetricProcessDuration)
	if got := sumWhere(proc, dest, "error.type=retry"); got != 3 || procM.Unit != "s" {
		t.Errorf("process durations with error.type=retry = %v (unit %q), want 3 in s: %v", got, procM.Unit, proc)
	}
	ops, opsM := points(t, reader, wire.MetricOperationDuration)
	if got := sumWhere(ops, "messaging.operation.name=publish"); got != 4 || opsM.Unit != "s" {
		t.Errorf("publish durations = %v (unit %q), want 4 in s: %v", got, opsM.Unit, ops)
	}
	st := cs.Stats()
	if st.Handled["retried"] != 2 || st.Handled["gave_up_attempts"] != 1 || st.LastDelivery.IsZero() {
		t.Errorf("Stats = %+v, want retried 2, gave_up_attempts 1, a last delivery", st)
	}

	// The trace.
	tid := root.SpanContext().TraceID()
	var publishes, processes []sdktrace.ReadOnlySpan
	deadline = time.Now().Add(wait)
	for {
		publishes, processes = nil, nil
		for _, s := range spans.Ended() {
			if s.SpanContext().TraceID() != tid {
				continue
			}
			switch s.SpanKind() {
			case trace.SpanKindProducer:
				publishes = append(publishes, s)
			case trace.SpanKindConsumer:
				processes = append(processes, s)
			}
		}
		if len(publishes) >= 4 && len(processes) >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(publishes) != 4 || len(processes) != 3 {
		t.Fatalf("trace %s holds %d publish spans and %d process spans, want 4 (publish, 2 retries, dead letter) and 3", tid, len(publishes), len(processes))
	}
	attr := func(s sdktrace.ReadOnlySpan, k string) string {
		for _, a := range s.Attributes() {
			if string(a.Key) == k {
				return a.Value.Emit()
			}
		}
		return ""
	}
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range append(append([]sdktrace.ReadOnlySpan{}, publishes...), processes...) {
		byID[s.SpanContext().SpanID()] = s
	}
	first := publishes[0]
	for _, p := range publishes {
		if p.Parent().SpanID() == root.SpanContext().SpanID() {
			first = p
		}
	}
	if first.Name() != "amq.default publish" || first.Parent().SpanID() != root.SpanContext().SpanID() ||
		attr(first, "messaging.message.conversation_id") != "conv-1" || attr(first, "messaging.rabbitmq.destination.routing_key") != q ||
		attr(first, "messaging.message.body.size") != "7" || attr(first, "acemq.attempt") != "1" || attr(first, "messaging.message.id") == "" {
		t.Errorf("application publish span %q parent %s attributes %v", first.Name(), first.Parent().SpanID(), first.Attributes())
	}
	// Walk the chain: publish → process(1) → retry publish → process(2) →
	// retry publish → process(3) → dead-letter publish.
	child := func(parent sdktrace.ReadOnlySpan, kind trace.SpanKind) sdktrace.ReadOnlySpan {
		for _, s := range byID {
			if s.SpanKind() == kind && s.Parent().SpanID() == parent.SpanContext().SpanID() {
				return s
			}
		}
		t.Fatalf("no %s child of %q (%s)", kind, parent.Name(), parent.SpanContext().SpanID())
		return nil
	}
	// The first process span carries exactly the conventions' consumer
	// attributes and the runtime's own, each once.
	process1 := child(first, trace.SpanKindConsumer)
	got := map[string]string{}
	for _, a := range process1.Attributes() {
		if _, dup := got[string(a.Key)]; dup {
			t.Errorf("process span attribute %s set twice", a.Key)
		}
		got[string(a.Key)] = a.Value.Emit()
	}
	want := map[string]string{
		"messaging.system": "rabbitmq", "messaging.operation.name": "process", "messaging.operation.type": "process",
		"messaging.destination.name": q, "messaging.rabbitmq.destination.routing_key": q,
		"messaging.message.id": attr(first, "messaging.message.id"), "messaging.message.conversation_id": "conv-1",
		"messaging.message.body.size": "7", "acemq.attempt": "1", "acemq.message.type": "acemq.test.text",
		"acemq.outcome": "retry",
	}
	if !maps.Equal(got, want) {
		t.Errorf("process span attributes\n got %v\nwant %v", got, want)
	}
	at := first
	for attempt := 1; attempt <= 3; attempt++ {
		p := child(at, trace.SpanKindConsumer)
		if p.Name() != q+" process" || attr(p, "acemq.attempt") != fmt.Sprint(attempt) || p.Status().Code != codes.Error ||
			!strings.Contains(p.Status().Description, fmt.Sprintf("payment service down (attempt %d)", attempt)) {
			t.Errorf("process span %d: %q attempt %s status %v %q", attempt, p.Name(), attr(p, "acemq.attempt"), p.Status().Code, p.Status().Description)
		}
		if links := p.Links(); len(links) != 1 || links[0].SpanContext.SpanID() != at.SpanContext().SpanID() {
			t.Errorf("process span %d links %v, want the publish %s", attempt, links, at.SpanContext().SpanID())
		}
		at = child(p, trace.SpanKindProducer)
		want := "retry"
		if attempt == 3 {
			want = "dead_letter"
		}
		if attr(at, "acemq.publish") != want {
			t.Errorf("the publish after attempt %d is %q, want %s", attempt, attr(at, "acemq.publish"), want)
		}
		if want == "dead_letter" && attr(at, "messaging.rabbitmq.destination.routing_key") != wire.DeadLetterQueue(q) {
			t.Errorf("dead-letter publish routed to %q", attr(at, "messaging.rabbitmq.destination.routing_key"))
		}
	}

	// The replay stays in the message's trace: its publish is a child of
	// the dead-letter publish, linked to the span of Replay's ctx.
	deadLetter := at
	closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cs.Close(closeCtx); err != nil {
		t.Fatal(err)
	}
	rctx, op := tp.Tracer("test").Start(ctxFor(t, 30*time.Second), "operator replays")
	res, err := c.Replay(rctx, wire.DeadLetterQueue(q), runtime.ReplayOptions{})
	op.End()
	if err != nil || res.Moved != 1 {
		t.Fatalf("Replay: %v %v", res, err)
	}
	var replay sdktrace.ReadOnlySpan
	for _, s := range spans.Ended() {
		if s.SpanKind() == trace.SpanKindProducer && attr(s, "acemq.publish") == "replay" {
			replay = s
		}
	}
	switch {
	case replay == nil:
		t.Errorf("no replay publish span")
	case replay.SpanContext().TraceID() != tid || replay.Parent().SpanID() != deadLetter.SpanContext().SpanID():
		t.Errorf("replay span in trace %s parent %s, want trace %s parent %s (the dead-letter publish)",
			replay.SpanContext().TraceID(), replay.Parent().SpanID(), tid, deadLetter.SpanContext().SpanID())
	case len(replay.Links()) != 1 || replay.Links()[0].SpanContext.SpanID() != op.SpanContext().SpanID():
		t.Errorf("replay span links %v, want the operator's span", replay.Links())
	}
	moved, _ := points(t, reader, wire.MetricReplayMoved)
	if got := sumWhere(moved, "messaging.destination.name="+wire.DeadLetterQueue(q)); got != 1 {
		t.Errorf("acemq.replay.moved = %v, want 1: %v", got, moved)
	}
}

// A panic is recorded on the process span as an exception event with the
// stack; a Park sets status Error with the reason.
func TestObservabilityPanicAndParkSpans(t *testing.T) {
	t.Parallel()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	c := dial(t, runtime.WithTracerProvider(tp), runtime.WithMeterProvider(mp))
	q := brokertest.Queue(t, "obs.panic")
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
	policy := runtime.NoRetry()
	_, rec := consume(t, c, q, &policy, func(m seen) runtime.Ack {
		if m.Body == "boom" {
			panic("the handler fell over")
		}
		return runtime.Park(errors.New("address is not in the catalogue"))
	})
	publishText(t, c, q, "boom")
	publishText(t, c, q, "park me")
	// A type nobody declared: undecodable, and "unknown" on the metrics.
	rawPublish(t, q, amqp.Publishing{Type: "someone.elses.type", ContentType: wire.ContentTypeText, Body: []byte("?")})
	rec.waitN(t, 2, wait)
	waitDepth(t, wire.DeadLetterQueue(q), 1, wait)
	waitDepth(t, wire.ParkedQueue(q), 2, wait)
	dest := "messaging.destination.name=" + q
	for deadline := time.Now().Add(wait); ; time.Sleep(20 * time.Millisecond) {
		outcomes, _ := points(t, reader, wire.MetricOutcome)
		ok := sumWhere(outcomes, dest, "acemq.outcome=gave_up_attempts", "acemq.message.type=acemq.test.text") == 1 &&
			sumWhere(outcomes, dest, "acemq.outcome=parked") == 1 &&
			sumWhere(outcomes, dest, "acemq.outcome=undecodable", "acemq.message.type=unknown") == 1
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("outcomes %v, want gave_up_attempts 1 (the panic, no retries), parked 1, undecodable 1 of type unknown", outcomes)
		}
	}
	proc, _ := points(t, reader, wire.MetricProcessDuration)
	if sumWhere(proc, dest, "error.type=panic") != 1 || sumWhere(proc, dest, "error.type=park") != 1 || sumWhere(proc, dest, "error.type=undecodable") != 1 {
		t.Errorf("process durations by error.type: %v", proc)
	}
	var panicked, parked bool
	for deadline := time.Now().Add(wait); !(panicked && parked) && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		panicked, parked = spanSeen(spans.Ended(), q)
	}
	if !panicked || !parked {
		t.Errorf("panic event recorded %v, park status recorded %v", panicked, parked)
	}
}

// spanSeen reports a process span of q with the panic's exception event,
// and one with the park's status.
func spanSeen(ended []sdktrace.ReadOnlySpan, q string) (panicked, parked bool) {
	for _, s := range ended {
		if s.Name() != q+" process" {
			continue
		}
		for _, e := range s.Events() {
			if e.Name != "exception" {
				continue
			}
			var stack, msg string
			for _, a := range e.Attributes {
				switch a.Key {
				case "exception.stacktrace":
					stack = a.Value.AsString()
				case "exception.message":
					msg = a.Value.AsString()
				}
			}
			if strings.Contains(msg, "the handler fell over") && strings.Contains(stack, "goroutine") && s.Status().Code == codes.Error {
				panicked = true
			}
		}
		if s.Status().Code == codes.Error && s.Status().Description == "parked by the handler: address is not in the catalogue" {
			parked = true
		}
	}
	return panicked, parked
}

// The gauges: a retry held in memory is acemq.consumer.held 1 for its
// queue while it waits, and Stats says the same; in_flight is 0 once the
// handler returned.
func TestObservabilityGauges(t *testing.T) {
	t.Parallel()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	c := dial(t, runtime.WithMeterProvider(mp))
	q := brokertest.Queue(t, "obs.gauge")
	policy := runtime.Fixed(2, 3*time.Second)
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: policy}))
	cs, rec := consume(t, c, q, &policy, func(m seen) runtime.Ack {
		if m.Envelope.Attempt == 1 {
			return runtime.Retry(errors.New("later"))
		}
		return runtime.Accept()
	})
	publishText(t, c, q, "wait for me")
	rec.waitN(t, 1, wait)
	dest := "messaging.destination.name=" + q
	var held, inFlight map[string]float64
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		held, _ = points(t, reader, wire.MetricHeld)
		inFlight, _ = points(t, reader, wire.MetricInFlight)
		if sumWhere(held, dest) == 1 {
			break
		}
	}
	if sumWhere(held, dest) != 1 || sumWhere(inFlight, dest) != 0 {
		t.Errorf("while the retry waits: held %v, in flight %v; want 1 and 0", held, inFlight)
	}
	if st := cs.Stats(); st.Held != 1 || st.InFlight != 0 || st.Handled["retried"] != 1 {
		t.Errorf("Stats while the retry waits: %+v", st)
	}
	rec.waitN(t, 2, wait)
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if held, _ = points(t, reader, wire.MetricHeld); sumWhere(held, dest) == 0 {
			break
		}
	}
	if sumWhere(held, dest) != 0 {
		t.Errorf("after the retry: held %v, want 0", held)
	}
}
