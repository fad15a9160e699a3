package consume

import (
	"github.com/acemq/acemq-go/runtime/internal/obs"
	"go.opentelemetry.io/otel/trace"
)

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
	tr, ok := cs.conn.Tracer()
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
