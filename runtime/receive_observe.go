package runtime

import (
	"context"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Pull and Browse are the messaging conventions' receive operations (a
// consumer asks for messages, rather than the broker pushing them to a
// subscription). A Pull is a span of kind consumer named "<queue> receive",
// the child of the caller's ctx and linked to the context the message's
// headers carry (its publish); its duration is recorded in
// messaging.client.operation.duration and the message it took in
// messaging.client.consumed.messages, both with messaging.operation.name
// receive. A Browse is one span "<queue> browse" for the whole look,
// linked to each message's publish; what it reads goes back, so it counts
// in acemq.browsed, not as consumed, except a message its callback acks
// (taken out of the queue: consumed, operation receive).

// Attributes of the receive operations, built once.
var (
	attrOpReceive     = attribute.String("messaging.operation.name", "receive")
	attrOpTypeReceive = attribute.String("messaging.operation.type", "receive")
	attrOpBrowse      = attribute.String("messaging.operation.name", "browse")
)

// received records one Pull: its duration (error.type when it failed) and,
// when a message came, that message consumed. typ is "" when none came.
func (m *metrics) received(queue, typ string, got bool, took time.Duration, err error) {
	ctx := context.Background()
	timed, counted := m.operationDuration.Enabled(ctx), got && m.consumed.Enabled(ctx)
	if !timed && !counted {
		return
	}
	if got {
		typ = knownType(typ)
	}
	if counted {
		m.consumed.Add(ctx, 1, m.opts(attrKey{kind: kindReceive, dest: queue, typ: typ}).add...)
	}
	if timed {
		m.operationDuration.Record(ctx, took.Seconds(), m.opts(attrKey{kind: kindReceive, dest: queue, typ: typ, errorType: errorType(err)}).rec...)
	}
}

// browsedOne counts one message a Browse read; acked says its callback
// took it out of the queue (then it is consumed, too).
func (m *metrics) browsedOne(queue, typ string, acked bool) {
	ctx := context.Background()
	if m.browsed.Enabled(ctx) {
		m.browsed.Add(ctx, 1, m.opts(attrKey{kind: kindBrowse, dest: queue, typ: knownType(typ)}).add...)
	}
	if acked && m.consumed.Enabled(ctx) {
		m.consumed.Add(ctx, 1, m.opts(attrKey{kind: kindReceive, dest: queue, typ: knownType(typ)}).add...)
	}
}

// startReceive starts the span of a Pull (op "receive") or a Browse (op
// "browse") of queue, the child of ctx's span.
func (c *Connection) startReceive(ctx context.Context, queue, op string) trace.Span {
	tr, ok := c.tracing()
	if !ok {
		return idleSpan
	}
	_, span := tr.Start(ctx, spanName(queue, op), consumerStart...)
	if span.IsRecording() {
		name := attrOpReceive
		if op == "browse" {
			name = attrOpBrowse
		}
		span.SetAttributes(attrSystem, name, attrOpTypeReceive, attribute.String("messaging.destination.name", queue))
	}
	return span
}

// receivedMessage adds what a receive span says of one message: for a
// Pull its attributes, and for both the link to the context its headers
// carry (its publish), as the conventions ask of receive spans.
func receivedMessage(span trace.Span, d *amqp.Delivery, env Envelope, pull bool) {
	if !span.IsRecording() {
		return
	}
	if pull {
		attrs := []attribute.KeyValue{
			attribute.String("messaging.message.id", d.MessageId),
			attribute.String("acemq.message.type", knownType(d.Type)),
			attribute.Int("messaging.message.body.size", len(d.Body)),
			attribute.String("messaging.rabbitmq.destination.routing_key", d.RoutingKey),
			attribute.Int("acemq.attempt", env.Attempt),
		}
		if d.CorrelationId != "" {
			attrs = append(attrs, attribute.String("messaging.message.conversation_id", d.CorrelationId))
		}
		if d.Redelivered {
			attrs = append(attrs, attrRedelivered)
		}
		span.SetAttributes(attrs...)
	}
	if sc := traceOf(d.Headers); sc.IsValid() {
		span.AddLink(trace.Link{SpanContext: sc})
	}
}

// endReceive ends a receive span: Error with the reason when err.
func endReceive(span trace.Span, err error) {
	if span.IsRecording() && err != nil {
		span.SetAttributes(attribute.String("error.type", errorType(err)))
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
