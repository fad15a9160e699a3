package runtime

import (
	"context"
	"sync"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// Trace context travels in the W3C headers traceparent and tracestate.
// Every publish is a producer span ("<exchange> publish", ended when the
// broker confirms) whose context is what the headers carry; a consumer's
// process span is the child of the span in the delivery's headers and
// links to it. The runtime's own republishes (a retry, a dead letter, a
// park) are producer spans children of the process span that decided them,
// and Replay's copies children of the dead letter's span, so one trace
// holds a message's every attempt, its dead letter and its replay.
var propagator = propagation.TraceContext{}

type tableCarrier amqp.Table

func (t tableCarrier) Get(key string) string { return core.HeaderString(t, key) }
func (t tableCarrier) Set(key, value string) { t[key] = value }
func (t tableCarrier) Keys() []string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	return keys
}

const tracerName = "github.com/acemq/acemq-go/runtime"

// unsetGlobal is the global tracer provider as it is before a service
// installs one (otel.SetTracerProvider replaces it).
var unsetGlobal = otel.GetTracerProvider()

// idleSpan is the span of a context that has none: a no-op, already boxed.
var idleSpan = trace.SpanFromContext(context.Background())

// tracerEntry is a provider and the runtime's tracer from it.
type tracerEntry struct {
	tp trace.TracerProvider
	tr trace.Tracer
}

// tracing is the tracer, or false when no provider records anything (none
// installed, or a no-op one): then no span is started, which would cost a
// few allocations per message for nothing, and the trace context the
// message carries is passed on as it is. The tracer is asked of its
// provider once and kept while the provider stays the same (a provider
// installed later with otel.SetTracerProvider is picked up at the next
// message): an SDK provider's Tracer takes a lock and a map lookup.
func (c *Connection) tracing() (trace.Tracer, bool) {
	tp := c.cfg.tracerProvider
	if tp == nil {
		if tp = otel.GetTracerProvider(); tp == unsetGlobal {
			return nil, false
		}
	}
	if _, ok := tp.(tracenoop.TracerProvider); ok {
		return nil, false
	}
	if e := c.tracers.Load(); e != nil && e.tp == tp {
		return e.tr, true
	}
	e := &tracerEntry{tp: tp, tr: tp.Tracer(tracerName)}
	c.tracers.Store(e)
	return e.tr, true
}

// spanAttrs lends the attribute buffers a span's attributes are gathered
// in: SetAttributes copies them, so one buffer serves message after
// message instead of a slice allocated (and grown) for each.
var spanAttrs = sync.Pool{New: func() any {
	b := make([]attribute.KeyValue, 0, 16)
	return &b
}}

// Attributes that never change, built once.
var (
	attrOpPublish     = attribute.String("messaging.operation.name", "publish")
	attrOpTypeSend    = attribute.String("messaging.operation.type", "send")
	attrOpProcess     = attribute.String("messaging.operation.name", "process")
	attrOpTypeProcess = attribute.String("messaging.operation.type", "process")
	attrRedelivered   = attribute.Bool("acemq.redelivered", true)
)

// injectTrace writes ctx's span context into headers.
func injectTrace(ctx context.Context, headers amqp.Table) {
	propagator.Inject(ctx, tableCarrier(headers))
}

// Prebuilt start options: passing them allocates nothing per span.
var (
	producerStart = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindProducer)}
	consumerStart = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer)}
)

// spanNames caches "<name> publish" and "<queue> process".
var spanNames = struct {
	sync.RWMutex
	m map[[2]string]string
}{m: map[[2]string]string{}}

func spanName(name, op string) string {
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

// startPublish starts the producer span of o and writes its context into
// o's headers. The parent is o.parent when it is valid (a replayed copy
// continues its message's trace, linked to ctx's span), else ctx's span.
func (c *Connection) startPublish(ctx context.Context, o *outgoing) trace.Span {
	parent := ctx
	if o.parent.IsValid() {
		parent = trace.ContextWithRemoteSpanContext(ctx, o.parent)
	}
	if o.msg.Headers == nil {
		o.msg.Headers = amqp.Table{}
	}
	tr, ok := c.tracing()
	if !ok {
		injectTrace(parent, o.msg.Headers)
		return idleSpan
	}
	pctx, span := tr.Start(parent, spanName(destination(o.exchange), "publish"), producerStart...)
	if span.IsRecording() {
		buf := spanAttrs.Get().(*[]attribute.KeyValue)
		attrs := append((*buf)[:0],
			attrSystem,
			attrOpPublish,
			attrOpTypeSend,
			attribute.String("messaging.destination.name", destination(o.exchange)),
			attribute.String("messaging.rabbitmq.destination.routing_key", o.key),
			attribute.String("messaging.message.id", o.msg.MessageId),
			attribute.Int("messaging.message.body.size", len(o.msg.Body)),
			attribute.Int("acemq.attempt", core.AttemptOf(o.msg.Headers)),
			attribute.String("acemq.publish", publishOrigin(o.origin)),
		)
		if o.msg.CorrelationId != "" {
			attrs = append(attrs, attribute.String("messaging.message.conversation_id", o.msg.CorrelationId))
		}
		if o.msg.Type != "" {
			attrs = append(attrs, attribute.String("acemq.message.type", o.msg.Type))
		}
		span.SetAttributes(attrs...)
		clear(attrs)
		*buf = attrs[:0]
		spanAttrs.Put(buf)
		if o.parent.IsValid() {
			if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
				span.AddLink(trace.Link{SpanContext: sc})
			}
		}
	}
	injectTrace(pctx, o.msg.Headers)
	return span
}

// endPublish ends a producer span once the confirm arrived (or the publish
// failed) and records the publish's metrics.
func (c *Connection) endPublish(span trace.Span, o *outgoing, start time.Time, err error) {
	c.metrics.published(o.exchange, o.msg.Type, o.origin, time.Since(start), err)
	if span.IsRecording() && err != nil {
		span.SetAttributes(attribute.String("error.type", errorType(err)))
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// processSpan is a delivery's consumer span. Its attributes are set in one
// call when it ends, with the outcome among them: one copy of them into the
// span instead of two (the SDK grows its slice for each call, and copies and
// deduplicates it again at End).
type processSpan struct {
	trace.Span
	d       *amqp.Delivery
	queue   string
	typ     string // acemq.message.type: the declared type, else unknown
	attempt int
	// outcome is acemq.outcome: the handler's answer (accept, retry,
	// reject, park), registry_unavailable or returned; "" sets none.
	outcome string
}

// startSpan starts dv's process span, the consumer span of one delivery:
// the child of the span its headers carry (the publish, or the runtime's
// republish), linked to it too, as the messaging conventions ask. dv.ctx
// is the handler's context, carrying it.
func (dv *delivery) startSpan() {
	cs, d := dv.cs, &dv.d
	ctx := cs.handlerCtx
	if d.Headers != nil {
		ctx = propagator.Extract(ctx, tableCarrier(d.Headers))
	}
	tr, ok := cs.c.tracing()
	if !ok {
		dv.ctx, dv.span = ctx, processSpan{Span: idleSpan}
		return
	}
	remote := trace.SpanContextFromContext(ctx)
	t := cs.typeOpts(d.Type)
	ctx, span := tr.Start(ctx, t.spanName, consumerStart...)
	if remote.IsValid() && span.IsRecording() {
		span.AddLink(trace.Link{SpanContext: remote})
	}
	dv.ctx, dv.span = ctx, processSpan{Span: span, d: d, queue: cs.queue, typ: t.known, attempt: dv.env.Attempt}
}

// end sets the span's attributes, those of the messaging conventions for a
// consumer span and the runtime's own, and ends it.
func (p *processSpan) end() {
	if p.d != nil && p.IsRecording() {
		d := p.d
		buf := spanAttrs.Get().(*[]attribute.KeyValue)
		attrs := append((*buf)[:0],
			attrSystem,
			attrOpProcess,
			attrOpTypeProcess,
			attribute.String("messaging.destination.name", p.queue),
			attribute.String("messaging.message.id", d.MessageId),
			attribute.Int("messaging.message.body.size", len(d.Body)),
			attribute.String("messaging.rabbitmq.destination.routing_key", d.RoutingKey),
			attribute.Int("acemq.attempt", p.attempt),
			attribute.String("acemq.message.type", p.typ),
		)
		if d.CorrelationId != "" {
			attrs = append(attrs, attribute.String("messaging.message.conversation_id", d.CorrelationId))
		}
		if p.outcome != "" {
			attrs = append(attrs, attribute.String(wire.AttrOutcome, p.outcome))
		}
		if d.Redelivered {
			attrs = append(attrs, attrRedelivered)
		}
		p.SetAttributes(attrs...)
		clear(attrs)
		*buf = attrs[:0]
		spanAttrs.Put(buf)
	}
	p.Span.End()
}

// fail marks the span Error with the outcome's reason.
func (p *processSpan) fail(why string) {
	if p.IsRecording() {
		p.SetStatus(codes.Error, core.CapReason(why))
	}
}

// panicked records a handler's panic on the span as an exception event
// with its stack, as the conventions name it.
func (p *processSpan) panicked(pe *PanicError) {
	if !p.IsRecording() {
		return
	}
	p.AddEvent("exception", trace.WithAttributes(
		attribute.String("exception.type", "panic"),
		attribute.String("exception.message", pe.Error()),
		attribute.String("exception.stacktrace", string(pe.Stack)),
	))
}

// traceOf is the span context headers carry (invalid when none).
func traceOf(headers amqp.Table) trace.SpanContext {
	if headers == nil {
		return trace.SpanContext{}
	}
	return trace.SpanContextFromContext(propagator.Extract(context.Background(), tableCarrier(headers)))
}
