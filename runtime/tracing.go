package runtime

import (
	"context"
	"time"

	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/obs"
	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

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
		if tp = otel.GetTracerProvider(); tp == obs.UnsetGlobal {
			return nil, false
		}
	}
	if _, ok := tp.(tracenoop.TracerProvider); ok {
		return nil, false
	}
	if e := c.tracers.Load(); e != nil && e.TP == tp {
		return e.TR, true
	}
	e := &obs.TracerEntry{TP: tp, TR: tp.Tracer(obs.TracerName)}
	c.tracers.Store(e)
	return e.TR, true
}

// startPublish starts the producer span of o and writes its context into
// o's headers. The parent is o.parent when it is valid (a replayed copy
// continues its message's trace, linked to ctx's span), else ctx's span.
func (c *Connection) startPublish(ctx context.Context, o *amqpx.Outgoing) trace.Span {
	parent := ctx
	if o.Parent.IsValid() {
		parent = trace.ContextWithRemoteSpanContext(ctx, o.Parent)
	}
	if o.Msg.Headers == nil {
		o.Msg.Headers = amqp.Table{}
	}
	tr, ok := c.tracing()
	if !ok {
		obs.InjectTrace(parent, o.Msg.Headers)
		return obs.IdleSpan
	}
	pctx, span := tr.Start(parent, obs.SpanName(obs.Destination(o.Exchange), "publish"), obs.ProducerStart...)
	if span.IsRecording() {
		buf := obs.SpanAttrs.Get().(*[]attribute.KeyValue)
		attrs := append((*buf)[:0],
			obs.AttrSystem,
			obs.AttrOpPublish,
			obs.AttrOpTypeSend,
			attribute.String("messaging.destination.name", obs.Destination(o.Exchange)),
			attribute.String("messaging.rabbitmq.destination.routing_key", o.Key),
			attribute.String("messaging.message.id", o.Msg.MessageId),
			attribute.Int("messaging.message.body.size", len(o.Msg.Body)),
			attribute.Int("acemq.attempt", core.AttemptOf(o.Msg.Headers)),
			attribute.String("acemq.publish", obs.PublishOrigin(o.Origin)),
		)
		if o.Msg.CorrelationId != "" {
			attrs = append(attrs, attribute.String("messaging.message.conversation_id", o.Msg.CorrelationId))
		}
		if o.Msg.Type != "" {
			attrs = append(attrs, attribute.String("acemq.message.type", o.Msg.Type))
		}
		span.SetAttributes(attrs...)
		clear(attrs)
		*buf = attrs[:0]
		obs.SpanAttrs.Put(buf)
		if o.Parent.IsValid() {
			if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
				span.AddLink(trace.Link{SpanContext: sc})
			}
		}
	}
	obs.InjectTrace(pctx, o.Msg.Headers)
	return span
}

// endPublish ends a producer span once the confirm arrived (or the publish
// failed) and records the publish's metrics.
func (c *Connection) endPublish(span trace.Span, o *amqpx.Outgoing, start time.Time, err error) {
	c.metrics.Published(o.Exchange, o.Msg.Type, o.Origin, time.Since(start), err)
	if span.IsRecording() && err != nil {
		span.SetAttributes(attribute.String("error.type", obs.ErrorType(err)))
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// startSpan starts dv's process span, the consumer span of one delivery:
// the child of the span its headers carry (the publish, or the runtime's
// republish), linked to it too, as the messaging conventions ask. dv.ctx
// is the handler's context, carrying it.
func (dv *delivery) startSpan() {
	cs, d := dv.cs, &dv.d
	ctx := cs.handlerCtx
	if d.Headers != nil {
		ctx = obs.Propagator.Extract(ctx, obs.TableCarrier(d.Headers))
	}
	tr, ok := cs.c.tracing()
	if !ok {
		dv.ctx, dv.span = ctx, obs.ProcessSpan{Span: obs.IdleSpan}
		return
	}
	remote := trace.SpanContextFromContext(ctx)
	t := cs.typeOpts(d.Type)
	ctx, span := tr.Start(ctx, t.spanName, obs.ConsumerStart...)
	if remote.IsValid() && span.IsRecording() {
		span.AddLink(trace.Link{SpanContext: remote})
	}
	dv.ctx, dv.span = ctx, obs.ProcessSpan{Span: span, D: d, Queue: cs.queue, Typ: t.known, Attempt: dv.env.Attempt}
}

// startReceive starts the span of a Pull (op "receive") or a Browse (op
// "browse") of queue, the child of ctx's span.
func (c *Connection) startReceive(ctx context.Context, queue, op string) trace.Span {
	tr, ok := c.tracing()
	if !ok {
		return obs.IdleSpan
	}
	_, span := tr.Start(ctx, obs.SpanName(queue, op), obs.ConsumerStart...)
	if span.IsRecording() {
		name := obs.AttrOpReceive
		if op == "browse" {
			name = obs.AttrOpBrowse
		}
		span.SetAttributes(obs.AttrSystem, name, obs.AttrOpTypeReceive, attribute.String("messaging.destination.name", queue))
	}
	return span
}
