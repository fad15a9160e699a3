package runtime

import (
	"context"

	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Trace context travels in the W3C headers traceparent and tracestate, so
// a consumer's span continues the publisher's trace.
var propagator = propagation.TraceContext{}

type tableCarrier amqp.Table

func (t tableCarrier) Get(key string) string { return headerString(t, key) }
func (t tableCarrier) Set(key, value string) { t[key] = value }
func (t tableCarrier) Keys() []string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	return keys
}

func (c *Connection) tracer() trace.Tracer {
	tp := c.cfg.tracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer("github.com/acemq/acemq-go/runtime")
}

// injectTrace writes ctx's span context into headers.
func injectTrace(ctx context.Context, headers amqp.Table) {
	propagator.Inject(ctx, tableCarrier(headers))
}

// startProcess starts the consumer span of one delivery, continuing the
// publisher's trace when the headers carry one.
func (cs *Consumer) startProcess(d *amqp.Delivery) (context.Context, trace.Span) {
	ctx := cs.handlerCtx
	if d.Headers != nil {
		ctx = propagator.Extract(ctx, tableCarrier(d.Headers))
	}
	return cs.c.tracer().Start(ctx, cs.queue+" process",
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(
			attribute.String("messaging.system", "rabbitmq"),
			attribute.String("messaging.destination.name", cs.queue),
			attribute.String("messaging.message.id", d.MessageId),
			attribute.String("messaging.message.type", d.Type),
		))
}
