package obs

import (
	"context"
	"sync"
	"sync/atomic"

	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Trace context travels in the W3C headers traceparent and tracestate.
// Every publish is a producer span ("<exchange> publish", ended when the
// broker confirms) whose context is what the headers carry; a consumer's
// process span is the child of the span in the delivery's headers and
// links to it. The runtime's own republishes (a retry, a dead letter, a
// park) are producer spans children of the process span that decided them,
// and Replay's copies children of the dead letter's span, so one trace
// holds a message's every attempt, its dead letter and its replay.
var Propagator = propagation.TraceContext{}

type TableCarrier amqp.Table

func (t TableCarrier) Get(key string) string { return core.HeaderString(t, key) }
func (t TableCarrier) Set(key, value string) { t[key] = value }
func (t TableCarrier) Keys() []string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	return keys
}

const TracerName = "github.com/acemq/acemq-go/runtime"

// UnsetGlobal is the global tracer provider as it is before a service
// installs one (otel.SetTracerProvider replaces it).
var UnsetGlobal = otel.GetTracerProvider()

// IdleSpan is the span of a context that has none: a no-op, already boxed.
var IdleSpan = trace.SpanFromContext(context.Background())

// TracerEntry is a provider and the runtime's tracer from it.
type TracerEntry struct {
	TP trace.TracerProvider
	TR trace.Tracer
}

// SpanAttrs lends the attribute buffers a span's attributes are gathered
// in: SetAttributes copies them, so one buffer serves message after
// message instead of a slice allocated (and grown) for each.
var SpanAttrs = sync.Pool{New: func() any {
	b := make([]attribute.KeyValue, 0, 16)
	return &b
}}

// Attributes that never change, built once.
var (
	AttrOpPublish     = attribute.String("messaging.operation.name", "publish")
	AttrOpTypeSend    = attribute.String("messaging.operation.type", "send")
	AttrOpProcess     = attribute.String("messaging.operation.name", "process")
	AttrOpTypeProcess = attribute.String("messaging.operation.type", "process")
	AttrRedelivered   = attribute.Bool("acemq.redelivered", true)
)

// InjectTrace writes ctx's span context into headers.
func InjectTrace(ctx context.Context, headers amqp.Table) {
	Propagator.Inject(ctx, TableCarrier(headers))
}

// Prebuilt start options: passing them allocates nothing per span.
var (
	ProducerStart = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindProducer)}
	ConsumerStart = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer)}
)

// spanNames caches "<name> publish" and "<queue> process".
var spanNames = struct {
	sync.RWMutex
	m map[[2]string]string
}{m: map[[2]string]string{}}

func SpanName(name, op string) string {
	k := [2]string{name, op}
	spanNames.RLock()
	s, ok := spanNames.m[k]
	spanNames.RUnlock()
	if ok {
		return s
	}
	s = name + " " + op
	spanNames.Lock()
	if len(spanNames.m) < 10000 {
		spanNames.m[k] = s
	}
	spanNames.Unlock()
	return s
}

// ProcessSpan is a delivery's consumer span. Its attributes are set in one
// call when it ends, with the outcome among them: one copy of them into the
// span instead of two (the SDK grows its slice for each call, and copies and
// deduplicates it again at End).
type ProcessSpan struct {
	trace.Span
	D       *amqp.Delivery
	Queue   string
	Typ     string // acemq.message.type: the declared type, else unknown
	Attempt int
	// Outcome is acemq.outcome: the handler's answer (accept, retry,
	// reject, park), registry_unavailable or returned; "" sets none.
	Outcome string
}

// End sets the span's attributes, those of the messaging conventions for a
// consumer span and the runtime's own, and ends it.
func (p *ProcessSpan) End() {
	if p.D != nil && p.IsRecording() {
		d := p.D
		buf := SpanAttrs.Get().(*[]attribute.KeyValue)
		attrs := append((*buf)[:0],
			AttrSystem,
			AttrOpProcess,
			AttrOpTypeProcess,
			attribute.String("messaging.destination.name", p.Queue),
			attribute.String("messaging.message.id", d.MessageId),
			attribute.Int("messaging.message.body.size", len(d.Body)),
			attribute.String("messaging.rabbitmq.destination.routing_key", d.RoutingKey),
			attribute.Int("acemq.attempt", p.Attempt),
			attribute.String("acemq.message.type", p.Typ),
		)
		if d.CorrelationId != "" {
			attrs = append(attrs, attribute.String("messaging.message.conversation_id", d.CorrelationId))
		}
		if p.Outcome != "" {
			attrs = append(attrs, attribute.String(wire.AttrOutcome, p.Outcome))
		}
		if d.Redelivered {
			attrs = append(attrs, AttrRedelivered)
		}
		p.SetAttributes(attrs...)
		clear(attrs)
		*buf = attrs[:0]
		SpanAttrs.Put(buf)
	}
	p.Span.End()
}

// Fail marks the span Error with the outcome's reason.
func (p *ProcessSpan) Fail(why string) {
	if p.IsRecording() {
		p.SetStatus(codes.Error, core.CapReason(why))
	}
}

// Panicked records a handler's panic on the span as an exception event
// with its stack, as the conventions name it.
func (p *ProcessSpan) Panicked(pe *core.PanicError) {
	if !p.IsRecording() {
		return
	}
	p.AddEvent("exception", trace.WithAttributes(
		attribute.String("exception.type", "panic"),
		attribute.String("exception.message", pe.Error()),
		attribute.String("exception.stacktrace", string(pe.Stack)),
	))
}

// TraceOf is the span context headers carry (invalid when none).
func TraceOf(headers amqp.Table) trace.SpanContext {
	if headers == nil {
		return trace.SpanContext{}
	}
	return trace.SpanContextFromContext(Propagator.Extract(context.Background(), TableCarrier(headers)))
}

// Tracers keeps the tracer of the provider in use.
type Tracers struct{ e atomic.Pointer[TracerEntry] }

// Tracer is the tracer of tp (nil: the global provider), or false when no
// provider records anything (none installed, or a no-op one): then no
// span is started, which would cost a few allocations per message for
// nothing, and the trace context the message carries is passed on as it
// is. The tracer is asked of its provider once and kept while the provider
// stays the same (a provider installed later with otel.SetTracerProvider
// is picked up at the next message): an SDK provider's Tracer takes a lock
// and a map lookup.
func (t *Tracers) Tracer(tp trace.TracerProvider) (trace.Tracer, bool) {
	if tp == nil {
		if tp = otel.GetTracerProvider(); tp == UnsetGlobal {
			return nil, false
		}
	}
	if _, ok := tp.(tracenoop.TracerProvider); ok {
		return nil, false
	}
	if e := t.e.Load(); e != nil && e.TP == tp {
		return e.TR, true
	}
	e := &TracerEntry{TP: tp, TR: tp.Tracer(TracerName)}
	t.e.Store(e)
	return e.TR, true
}
