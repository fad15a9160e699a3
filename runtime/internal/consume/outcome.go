package consume

import (
	"encoding/base64"
	"time"
	"unicode/utf8"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/obs"
	"github.com/acemq/acemq-go/runtime/wire"
)

// What becomes of a delivery is recorded by the stage that decides it,
// in every place that shows it at once: its process span, the metrics,
// Stats and the log. Twice:
//
//   - when it is decided: the handler's answer (handle.go's answered), a
//     delivery that could not be decoded or goes back for now (decode.go's
//     notDecoded, returned), or the consumer's own answer (poisonedNow,
//     heldForRegistry, here): the span's acemq.outcome and Error status,
//     messaging.process.duration, a panic's stack;
//   - once it is carried out: the ack decided (settle.go's accepted) or
//     the copy confirmed (retried, setAsideAs, here):
//     ConsumerStats.Handled, acemq.outcome, and the outcome's log line.
//
// This file holds the records of the outcomes other than Accept, which
// are off the accepted delivery's path, and their log lines.
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
