package consume

import (
	"context"
	"errors"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/core"
)

// The handle stage: the handler (inside its middlewares) is called on the
// decoded value, and its answer recorded and handed to the settle stage
// (settle.go).

// handle calls dv's handler on its decoded value and hands the answer on.
func (dv *delivery) handle(call core.DecodedCall) {
	dv.handled(call.Call(dv.ctx, &dv.d, dv.env, dv.apps))
}

// handled records the handler's answer (answered) and has it carried out
// (settle.go).
func (dv *delivery) handled(ack core.Ack) {
	kind, why := dv.answered(ack)
	dv.carryOut(kind, why)
}

// answered records the handler's answer: a panic's stack (logged, and an
// event of the span), messaging.process.duration, the span's
// acemq.outcome and, unless it is Accept, its Error status. It returns the
// answer's kind (Fatal applied) and the reason its copy carries.
func (dv *delivery) answered(ack core.Ack) (core.AckKind, string) {
	kind, why := ack.Kind(), ""
	switch kind {
	case core.AckRetry:
		why = core.Reason(ack.Err())
	case core.AckReject:
		why = "rejected by the handler: " + core.Reason(ack.Err())
	case core.AckPark:
		why = "parked by the handler: " + core.Reason(ack.Err())
	}
	errType := ""
	if kind != core.AckAccept {
		errType = kind.String()
	}
	if pe := panicOf(ack.Err()); pe != nil {
		dv.logPanic(pe)
		dv.span.Panicked(pe)
		errType = "panic"
	}
	dv.timed(errType)
	dv.span.Outcome = kind.String()
	if why != "" {
		dv.span.Fail(why)
	}
	return kind, why
}

// panicOf is the handler's panic err wraps, or nil.
func panicOf(err error) *core.PanicError {
	if err == nil {
		return nil
	}
	var pe *core.PanicError
	if errors.As(err, &pe) {
		return pe
	}
	return nil
}

// timed records how long dv took to get its answer, in
// messaging.process.duration; errType is "" for Accept.
func (dv *delivery) timed(errType string) {
	cs, took := dv.cs, time.Since(dv.began)
	if errType != "" {
		cs.metrics.Processed(cs.queue, dv.d.Type, took, errType)
		return
	}
	m := cs.metrics
	if ctx := context.Background(); m.ProcessDuration.Enabled(ctx) {
		m.ProcessDuration.Record(ctx, took.Seconds(), dv.opts.processOK.Rec...)
	}
}
