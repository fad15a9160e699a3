package runtime

import (
	"context"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/obs"
	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracing is the tracer, or false when no provider records anything
// (obs.Tracers.Tracer).
func (c *Connection) tracing() (trace.Tracer, bool) { return c.tracers.Tracer(c.cfg.tracerProvider) }

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
