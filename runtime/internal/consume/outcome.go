package consume

import (
	"context"
	"encoding/base64"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/obs"
	"github.com/acemq/acemq-go/runtime/wire"
)

// What becomes of a delivery is recorded here and nowhere else, in every
// place that shows it at once: its process span, the metrics, Stats and
// the log. Twice:
//
//   - when process decides it (answered, notDecoded, poisonedNow,
//     heldForRegistry, returned): the span's acemq.outcome and Error
//     status, messaging.process.duration, a panic's stack;
//   - once it is carried out (accepted, retried, setAsideAs): the copy
//     confirmed, or the ack or nack decided: ConsumerStats.Handled,
//     acemq.outcome, and the outcome's log line.
//
// The consumer's log has one structured line per outcome that is not
// Accept, through the connection's logger (WithLogger), each with the
// consumer's queue and the broker:
//
//	Info  acemq: retry          type id attempt reason wait delay
//	Warn  acemq: dead-lettered  type id attempt reason to
//	Warn  acemq: parked         type id attempt reason to
//	Error acemq: handler panicked  type id attempt reason stack suppressed
//
// attempt is the attempt that failed; wait is where the next one waits
// (memory, broker, or requeue). The body is never logged unless
// WithBodyInLogs asks; the URL's password never is.

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

// notDecoded records a delivery that could not be decoded (why): the
// span's Error status, messaging.process.duration with error.type
// undecodable.
func (dv *delivery) notDecoded(why string) {
	dv.span.Fail(why)
	dv.cs.metrics.Processed(dv.cs.queue, dv.d.Type, time.Since(dv.began), "undecodable")
}

// poisonedNow records a delivery redelivered past WithRedeliveryLimit, or
// replaced by a copy carrying its count: the span's Error status.
func (dv *delivery) poisonedNow() {
	dv.span.Fail("could not be handled: redelivered too many times without being settled")
}

// heldForRegistry records a delivery held until the registry answers:
// the span's acemq.outcome, acemq.registry.unavailable.
func (dv *delivery) heldForRegistry() {
	dv.span.Outcome = "registry_unavailable"
	dv.cs.metrics.Add(dv.cs.metrics.RegistryUnavail, dv.cs.queue)
}

// returned records a delivery that could not be decoded for now (the
// consumer is being stopped) and goes back to its queue.
func (dv *delivery) returned(err error) {
	dv.span.Outcome = "returned"
	dv.cs.log.Warn("acemq: could not decode for now; returning the message to its queue", "err", err, "id", dv.d.MessageId)
}

// accepted records an Accept carried out.
func (dv *delivery) accepted() { dv.counted(obs.OutcomeAccepted, "") }

// retried records a retry once its wait is settled: held in memory, sent
// to a rung (after its confirm) or requeued.
func (dv *delivery) retried(why, wait string, delay time.Duration) {
	dv.counted(obs.OutcomeRetried, wait)
	if dv.cs.outcomeLog.Allow(time.Now(), obs.OutcomeRetried, why) {
		dv.cs.log.Info("acemq: retry", dv.outcomeAttrs(obs.OutcomeRetried, why, "wait", wait, "delay", delay)...)
	}
}

// setAsideAs records o, a dead letter or a park, once its copy in to is
// confirmed.
func (dv *delivery) setAsideAs(o obs.Outcome, why, to string) {
	dv.counted(o, "")
	what := "acemq: parked"
	if to == wire.DeadLetterQueue(dv.cs.queue) {
		what = "acemq: dead-lettered"
	}
	if dv.cs.outcomeLog.Allow(time.Now(), o, why) {
		dv.cs.log.Warn(what, dv.outcomeAttrs(o, why, "to", to)...)
	}
}

// counted counts o in Stats and acemq.outcome; wait is where a retry
// waits.
func (dv *delivery) counted(o obs.Outcome, wait string) {
	cs := dv.cs
	cs.stats.outcomes[o].Add(1)
	if o == obs.OutcomeAccepted && wait == "" {
		m := cs.metrics
		if ctx := context.Background(); m.Outcome.Enabled(ctx) {
			m.Outcome.Add(ctx, 1, cs.typeOpts(dv.d.Type).accepted.Add...)
		}
		return
	}
	cs.metrics.SettledAs(cs.queue, dv.d.Type, o, wait)
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
		m.ProcessDuration.Record(ctx, took.Seconds(), cs.typeOpts(dv.d.Type).processOK.Rec...)
	}
}

// typeOpts are the metric options of the common path of one message type
// on one consumer (consumed, processed with Accept, accepted) and its
// process span's name. A consumer keeps those of the type it saw last, so
// that a run of one type (the usual queue) takes neither the type
// registry's lock nor the option map's for each delivery.
type typeOpts struct {
	typ, known          string
	spanName            string // the process span's: "<queue> process"
	consumed, processOK obs.AttrOpts
	accepted            obs.AttrOpts
}

func (cs *Consumer) typeOpts(typ string) *typeOpts {
	if t := cs.lastType.Load(); t != nil && t.typ == typ {
		return t
	}
	m, known := cs.metrics, obs.KnownType(typ)
	t := &typeOpts{typ: typ, known: known, spanName: obs.SpanName(cs.queue, "process"),
		consumed:  m.Opts(obs.AttrKey{Kind: obs.KindConsume, Dest: cs.queue, Typ: known}),
		processOK: m.Opts(obs.AttrKey{Kind: obs.KindProcess, Dest: cs.queue, Typ: known}),
		accepted:  m.Opts(obs.AttrKey{Kind: obs.KindOutcome, Dest: cs.queue, Typ: known, OutcomeName: obs.OutcomeAccepted.String()}),
	}
	cs.lastType.Store(t)
	return t
}

// consumedOne counts a delivery of type typ handed to cs.
func (cs *Consumer) consumedOne(typ string) {
	m := cs.metrics
	if ctx := context.Background(); m.Consumed.Enabled(ctx) {
		m.Consumed.Add(ctx, 1, cs.typeOpts(typ).consumed.Add...)
	}
}

// outcomeAttrs are the attributes every outcome line carries (its
// acemq.outcome name first, as Stats and the metric say it), then extra.
func (dv *delivery) outcomeAttrs(o obs.Outcome, why string, extra ...any) []any {
	return append([]any{"outcome", o.String()}, dv.lineAttrs(why, extra...)...)
}

// lineAttrs are the message's attributes of a log line about it, then extra.
func (dv *delivery) lineAttrs(why string, extra ...any) []any {
	d, env := &dv.d, dv.env
	id := env.ID
	if id == "" {
		id = d.MessageId
	}
	attrs := []any{"type", d.Type, "id", id, "attempt", env.Attempt, "reason", core.CapReason(why)}
	attrs = append(attrs, extra...)
	if n := dv.cs.cfg.BodyInLogs; n > 0 {
		attrs = append(attrs, "body", logBody(d.Body, n))
	}
	return attrs
}

// logBody is body as text (base64 when it is not UTF-8), cut at max bytes.
func logBody(body []byte, max int) string {
	cut := ""
	if len(body) > max {
		body, cut = body[:max], " … (cut)"
	}
	if utf8.Valid(body) {
		return string(body) + cut
	}
	return "base64:" + base64.StdEncoding.EncodeToString(body) + cut
}

// logPanic logs a handler's panic at Error with its stack, at most once per
// core.PanicLogEvery per consumer; the panics in between are counted.
func (dv *delivery) logPanic(pe *core.PanicError) {
	ok, suppressed := dv.cs.panics.Allow(time.Now())
	if !ok {
		return
	}
	attrs := dv.lineAttrs(pe.Error(), "stack", string(pe.Stack))
	if suppressed > 0 {
		attrs = append(attrs, "suppressed", suppressed)
	}
	dv.cs.log.Error("acemq: handler panicked", attrs...)
}
