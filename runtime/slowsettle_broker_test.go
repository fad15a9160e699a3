package runtime_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// slowEndTP is a tracer provider whose first span's End blocks for hold:
// a span exporter that exports in End (a simple span processor) and waits
// for its collector.
type slowEndTP struct {
	tracenoop.TracerProvider
	hold  time.Duration
	once  *sync.Once
	ended chan struct{} // closed when the slow End starts
}

func (tp slowEndTP) Tracer(string, ...trace.TracerOption) trace.Tracer { return slowEndTracer{tp: tp} }

type slowEndTracer struct {
	tracenoop.Tracer
	tp slowEndTP
}

func (t slowEndTracer) Start(ctx context.Context, _ string, _ ...trace.SpanStartOption) (context.Context, trace.Span) {
	return ctx, slowEndSpan{tp: t.tp}
}

type slowEndSpan struct {
	tracenoop.Span
	tp slowEndTP
}

func (s slowEndSpan) End(...trace.SpanEndOption) {
	s.tp.once.Do(func() {
		close(s.tp.ended)
		time.Sleep(s.tp.hold)
	})
}

// An asynchronous publish's span ends from the confirm loop. While that
// End blocks (6 s here), the broker's return of an unroutable mandatory
// publish must still fail that publish with ErrUnroutable: amqp091-go gives
// up a notification the loop has not taken within 5 s, and a return given
// up is a message nobody took reported confirmed.
func TestAReturnIsNotLostBehindASlowSpanEnd(t *testing.T) {
	tp := slowEndTP{hold: 6 * time.Second, once: &sync.Once{}, ended: make(chan struct{})}
	c := dial(t, runtime.WithTracerProvider(tp))
	q := brokertest.Queue(t, "slow-settle")
	rawQueue(t, q, nil)
	notes := runtime.NewTextType("acemq.test.slow.settle")
	ctx := ctxFor(t, 30*time.Second)
	first, err := runtime.PublishAsync(ctx, c, notes, "", "routed", runtime.WithRoutingKey(q))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-tp.ended:
	case <-ctx.Done():
		t.Fatal("the first publish's span never ended")
	}
	lost, err := runtime.PublishAsync(ctx, c, notes, "", "nowhere", runtime.WithRoutingKey(q+".nobody"))
	if err != nil {
		t.Fatal(err)
	}
	if err := lost.Wait(ctx); !errors.Is(err, runtime.ErrUnroutable) {
		t.Errorf("an unroutable publish returned while the loop was busy: %v, want ErrUnroutable", err)
	}
	if err := first.Wait(ctx); err != nil {
		t.Errorf("the first publish: %v", err)
	}
}
