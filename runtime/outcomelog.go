package runtime

import (
	"encoding/base64"
	"time"
	"unicode/utf8"

	amqp "github.com/rabbitmq/amqp091-go"
)

// The consumer's log: one structured line per outcome that is not Accept,
// through the connection's logger (WithLogger), each with the consumer's
// queue and the broker:
//
//	Info  acemq: retry          type id attempt reason wait delay
//	Warn  acemq: dead-lettered  type id attempt reason to
//	Warn  acemq: parked         type id attempt reason to
//	Error acemq: handler panicked  type id attempt reason stack suppressed
//
// attempt is the attempt that failed; wait is where the next one waits
// (memory, broker, or requeue). The body is never logged unless
// WithBodyInLogs asks; the URL's password never is.

// logRetry records a retry once its wait is settled: held in memory, sent
// to a rung (after its confirm) or requeued.
func (cs *Consumer) logRetry(d amqp.Delivery, env Envelope, why, wait string, delay time.Duration) {
	cs.log.Info("acemq: retry", cs.outcomeAttrs(d, env, why, "wait", wait, "delay", delay)...)
}

// outcomeAttrs are the attributes every outcome line carries, then extra.
func (cs *Consumer) outcomeAttrs(d amqp.Delivery, env Envelope, why string, extra ...any) []any {
	id := env.ID
	if id == "" {
		id = d.MessageId
	}
	attrs := []any{"type", d.Type, "id", id, "attempt", env.Attempt, "reason", capReason(why)}
	attrs = append(attrs, extra...)
	if cs.cfg.bodyInLogs > 0 {
		attrs = append(attrs, "body", logBody(d.Body, cs.cfg.bodyInLogs))
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
// panicLogEvery per consumer; the panics in between are counted.
func (cs *Consumer) logPanic(pe *PanicError, d amqp.Delivery, env Envelope) {
	ok, suppressed := cs.panics.allow(time.Now())
	if !ok {
		return
	}
	attrs := cs.outcomeAttrs(d, env, pe.Error(), "stack", string(pe.Stack))
	if suppressed > 0 {
		attrs = append(attrs, "suppressed", suppressed)
	}
	cs.log.Error("acemq: handler panicked", attrs...)
}
