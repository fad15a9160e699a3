package obs

import (
	"context"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/core"
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
// messaging.client.Consumed.messages, both with messaging.operation.name
// receive. A Browse is one span "<queue> browse" for the whole look,
// linked to each message's publish; what it reads goes back, so it counts
// in acemq.browsed, not as Consumed, except a message its callback acks
// (taken out of the queue: Consumed, operation receive).

// Attributes of the receive operations, built once.
var (
	AttrOpReceive     = attribute.String("messaging.operation.name", "receive")
	AttrOpTypeReceive = attribute.String("messaging.operation.type", "receive")
	AttrOpBrowse      = attribute.String("messaging.operation.name", "browse")
)

// Received records one Pull: its duration (error.type when it failed) and,
// when a message came, that message Consumed. typ is "" when none came.
func (m *Metrics) Received(queue, typ string, got bool, took time.Duration, err error) {
	ctx := context.Background()
	timed, counted := m.operationDuration.Enabled(ctx), got && m.Consumed.Enabled(ctx)
	if !timed && !counted {
		return
	}
	if got {
		typ = KnownType(typ)
	}
	if counted {
		m.Consumed.Add(ctx, 1, m.Opts(AttrKey{Kind: kindReceive, Dest: queue, Typ: typ}).Add...)
	}
	if timed {
		m.operationDuration.Record(ctx, took.Seconds(), m.Opts(AttrKey{Kind: kindReceive, Dest: queue, Typ: typ, ErrorType: ErrorType(err)}).Rec...)
	}
}

// BrowsedOne counts one message a Browse read; acked says its callback
// took it out of the queue (then it is Consumed, too).
func (m *Metrics) BrowsedOne(queue, typ string, acked bool) {
	ctx := context.Background()
	if m.browsed.Enabled(ctx) {
		m.browsed.Add(ctx, 1, m.Opts(AttrKey{Kind: kindBrowse, Dest: queue, Typ: KnownType(typ)}).Add...)
	}
	if acked && m.Consumed.Enabled(ctx) {
		m.Consumed.Add(ctx, 1, m.Opts(AttrKey{Kind: kindReceive, Dest: queue, Typ: KnownType(typ)}).Add...)
	}
}

// ReceivedMessage adds what a receive span says of one message: for a
// Pull its attributes, and for both the link to the context its headers
// carry (its publish), as the conventions ask of receive spans.
func ReceivedMessage(span trace.Span, d *amqp.Delivery, env core.Envelope, pull bool) {
	if !span.IsRecording() {
		return
	}
	if pull {
		attrs := []attribute.KeyValue{
			attribute.String("messaging.message.id", d.MessageId),
			attribute.String("acemq.message.type", KnownType(d.Type)),
			attribute.Int("messaging.message.body.size", len(d.Body)),
			attribute.String("messaging.rabbitmq.destination.routing_key", d.RoutingKey),
			attribute.Int("acemq.attempt", env.Attempt),
		}
		if d.CorrelationId != "" {
			attrs = append(attrs, attribute.String("messaging.message.conversation_id", d.CorrelationId))
		}
		if d.Redelivered {
			attrs = append(attrs, AttrRedelivered)
		}
		span.SetAttributes(attrs...)
	}
	if sc := TraceOf(d.Headers); sc.IsValid() {
		span.AddLink(trace.Link{SpanContext: sc})
	}
}

// EndReceive ends a receive span: Error with the reason when err.
func EndReceive(span trace.Span, err error) {
	if span.IsRecording() && err != nil {
		span.SetAttributes(attribute.String("error.type", ErrorType(err)))
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
