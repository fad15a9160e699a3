package runtime_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
)

// idList is a list of message ids that several goroutines append to.
type idList struct {
	mu  sync.Mutex
	ids []string
}

func (l *idList) add(id string) {
	l.mu.Lock()
	l.ids = append(l.ids, id)
	l.mu.Unlock()
}

func (l *idList) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.ids)
}

// waitLen waits up to d for the list to hold n ids.
func (l *idList) waitLen(tb testing.TB, n int, d time.Duration, what string) []string {
	tb.Helper()
	deadline := time.Now().Add(d)
	for len(l.all()) < n {
		if time.Now().After(deadline) {
			tb.Fatalf("waited %s for %d %s; got %d: %v", d, n, what, len(l.all()), l.all())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return l.all()
}

type aheadOrder struct {
	OrderID string `json:"order_id"`
}

const aheadSchema = `{"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}`

// A consumer of concurrency 1 decodes the next deliveries of its prefetch
// while its handler runs: while the handler is held on the first of 40,
// exactly DecodeAheadForTest more are decoded (the bound), then none; once
// it is released, every delivery is handled in the order it was
// published, the one whose body is not JSON is parked in its place (its
// handler never called, its process span between its neighbours', Error
// with the reason) and no delivery is decoded twice.
func TestDecodeAheadKeepsOrderAndBound(t *testing.T) {
	t.Parallel()
	const n, bad = 40, 5
	mt := runtime.NewJSONType[aheadOrder]("acemq.test.ahead."+brokertest.Name("v"), aheadSchema)
	q := brokertest.Queue(t, "ahead")
	rawQueue(t, q, nil)
	ids := make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("m%02d", i)
		body := fmt.Sprintf(`{"order_id": %q}`, ids[i])
		if i == bad {
			body = "this is not JSON"
		}
		rawPublish(t, q, amqp.Publishing{ContentType: wire.ContentTypeJSON, Type: mt.Name(), MessageId: ids[i], Body: []byte(body)})
	}

	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	c := dial(t, runtime.WithTracerProvider(tp))
	var decodedAhead, handled idList
	release := make(chan struct{})
	spec := runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{runtime.Handle(mt,
		func(_ context.Context, m *runtime.Message[aheadOrder]) runtime.Ack {
			if m.Payload.OrderID != m.Envelope.ID {
				t.Errorf("handler got order %q for the delivery %q", m.Payload.OrderID, m.Envelope.ID)
			}
			handled.add(m.Envelope.ID)
			<-release
			return runtime.Accept()
		})}}
	cs, err := runtime.Consume(ctxFor(t, 10*time.Second), c, spec, runtime.WithPrefetch(n),
		runtime.WithDecodeAheadHookForTest(decodedAhead.add))
	if err != nil {
		t.Fatalf("Consume: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close(ctxFor(t, 10*time.Second)) })

	// The handler holds the first; the bound's worth after it is decoded.
	handled.waitLen(t, 1, wait, "handler calls")
	decodedAhead.waitLen(t, 1+runtime.DecodeAheadForTest, wait, "deliveries decoded ahead")
	time.Sleep(settle)
	if got, want := decodedAhead.all(), ids[:1+runtime.DecodeAheadForTest]; !slices.Equal(got, want) {
		t.Fatalf("decoded ahead while the handler held the first: %v, want %v (the first and the bound of %d after it, in order)",
			got, want, runtime.DecodeAheadForTest)
	}
	if got := handled.all(); !slices.Equal(got, ids[:1]) {
		t.Fatalf("handler calls while the first is held: %v, want [m00]", got)
	}

	close(release)
	want := slices.Delete(slices.Clone(ids), bad, bad+1)
	if got := handled.waitLen(t, n-1, wait, "handler calls"); !slices.Equal(got, want) {
		t.Errorf("handled %v, want %v: in order, without the undecodable %s", got, want, ids[bad])
	}
	d := getOne(t, q+".parked", wait)
	checkParked(t, d, q, "this is not JSON", "could not be decoded: …")
	if d.MessageId != ids[bad] {
		t.Errorf("parked %q, want %q", d.MessageId, ids[bad])
	}
	if got := decodedAhead.all(); !slices.Equal(got, ids) {
		t.Errorf("decoded ahead %v, want each of %v once, in order", got, ids)
	}

	// The process spans end in the order the deliveries were processed.
	var order []string
	deadline := time.Now().Add(wait)
	for {
		order = order[:0]
		for _, s := range spans.Ended() {
			if s.SpanKind() != trace.SpanKindConsumer {
				continue
			}
			id := spanAttr(s.Attributes(), "messaging.message.id")
			order = append(order, id)
			if id == ids[bad] && (s.Status().Code != codes.Error || !strings.Contains(s.Status().Description, "could not be decoded")) {
				t.Errorf("the undecodable delivery's span: status %v %q, want Error 'could not be decoded: …'", s.Status().Code, s.Status().Description)
			}
		}
		if len(order) >= n || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !slices.Equal(order, ids) {
		t.Errorf("process spans ended in the order %v, want %v (the undecodable one parked in its place)", order, ids)
	}
}

func spanAttr(attrs []attribute.KeyValue, key string) string {
	for _, a := range attrs {
		if string(a.Key) == key {
			return a.Value.Emit()
		}
	}
	return ""
}

// With several workers each decodes its own delivery: none is decoded
// ahead by the loop, which would serialise their decodes.
func TestNoDecodeAheadWithSeveralWorkers(t *testing.T) {
	t.Parallel()
	mt := runtime.NewJSONType[aheadOrder]("acemq.test.ahead."+brokertest.Name("v"), aheadSchema)
	q := brokertest.Queue(t, "ahead.many")
	rawQueue(t, q, nil)
	c := dial(t)
	var decodedAhead, handled idList
	spec := runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{runtime.Handle(mt,
		func(_ context.Context, m *runtime.Message[aheadOrder]) runtime.Ack {
			handled.add(m.Payload.OrderID)
			return runtime.Accept()
		})}}
	cs, err := runtime.Consume(ctxFor(t, 10*time.Second), c, spec, runtime.WithConcurrency(4),
		runtime.WithDecodeAheadHookForTest(decodedAhead.add))
	if err != nil {
		t.Fatalf("Consume: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close(ctxFor(t, 10*time.Second)) })
	for i := range 8 {
		if err := runtime.Publish(ctxFor(t, 10*time.Second), c, mt, "", aheadOrder{OrderID: fmt.Sprint(i)}, runtime.WithRoutingKey(q)); err != nil {
			t.Fatal(err)
		}
	}
	handled.waitLen(t, 8, wait, "handler calls")
	if got := decodedAhead.all(); len(got) != 0 {
		t.Errorf("decoded ahead with 4 workers: %v, want none", got)
	}
}
