package wire

// The names of the runtime's OpenTelemetry instruments (docs/metrics.md
// says what each counts and with which attributes): the messaging.* ones
// are OpenTelemetry's messaging semantic conventions, the acemq.* ones the
// library's own.
const (
	// MetricSent counts messages published (each one the runtime tried to
	// send), error.type on failure; acemq.publish says whose: application, or
	// the runtime's own copies: retry, dead_letter, park, replay.
	MetricSent = "messaging.client.sent.messages"
	// MetricConsumed counts deliveries handed to a consumer
	// (messaging.operation.name process) and messages Pull took (receive), or
	// a Browse's callback acked (receive).
	MetricConsumed = "messaging.client.consumed.messages"
	// MetricProcessDuration is the time a delivery took from its start to its
	// handler's (or the decoder's) answer, in seconds; error.type is set when
	// the answer was not Accept.
	MetricProcessDuration = "messaging.process.duration"
	// MetricOperationDuration is the time a publish took until the broker
	// confirmed it, or a Pull until the broker answered (receive, whether or
	// not a message came), in seconds.
	MetricOperationDuration = "messaging.client.operation.duration"
	// MetricOutcome counts settled deliveries by acemq.outcome: accepted,
	// retried (with acemq.wait memory, broker or requeue), rejected, parked,
	// gave_up_attempts (the policy's attempts ran out), gave_up_too_old (older
	// than the policy's GiveUpAfter) or undecodable. It is counted once the
	// outcome is carried out (the copy confirmed, the retry held).
	MetricOutcome = "acemq.outcome"
	// MetricRungMissing counts broker waits held in memory because the rung
	// queue was missing.
	MetricRungMissing = "acemq.retry.rung.missing"
	// MetricRetrySpilled counts waits below the broker threshold sent to a
	// rung because the consumer's hold budget was full (WithHoldBudget); each
	// is also an acemq.outcome retried with acemq.wait broker.
	MetricRetrySpilled = "acemq.retry.spilled"
	// MetricSetAsideFailed counts publishes of a retry, dead letter or park
	// that were returned or refused (each try; the delivery is held and the
	// copy tried again).
	MetricSetAsideFailed = "acemq.set_aside.failed"
	// MetricFrameErrors counts the times a consumer's connection was closed on
	// a frame the client cannot read (a message's header table amqp091-go
	// refuses); the consumer moves to a connection of its own and backs off.
	MetricFrameErrors = "acemq.consumer.frame_errors"
	// MetricRegistryUnavailable counts lookups of a writer schema that met a
	// registry that did not answer; the message was held, not parked.
	MetricRegistryUnavailable = "acemq.registry.unavailable"
	// MetricReplayMoved counts messages Replay moved (copy confirmed, original
	// acked), by source queue (messaging.destination.name).
	MetricReplayMoved = "acemq.replay.moved"
	// MetricBrowsed counts messages Browse read and put back: a look, not a
	// consumption (one the callback acked counts as consumed too).
	MetricBrowsed = "acemq.browsed"
	// MetricRequestDuration is a histogram: each Request from its send to its
	// reply (or its failure: error.type timeout, unroutable, reply_error,
	// no_reply …), by the request's destination and type. Its count is the
	// requests sent.
	MetricRequestDuration = "acemq.request.duration"
	// MetricLateReplies counts the replies no request waited for any more
	// (after its caller's ctx ended, or a second one), dropped; by the
	// Requester's reply_to (amq.rabbitmq.reply-to or its reply queue).
	MetricLateReplies = "acemq.request.late_replies"
	// MetricRequestsExpired counts the requests a responder settled without
	// running them because their caller's deadline had passed when it came to
	// them (their expiration, counted from when the consumer received them);
	// by the responder's queue.
	MetricRequestsExpired = "acemq.request.expired"
	// MetricHeld is the deliveries a consumer holds unsettled while its worker
	// is free: retries waiting in memory, copies tried again or waiting for
	// their confirm, deliveries waiting for the schema registry.
	MetricHeld = "acemq.consumer.held"
	// MetricInFlight is the deliveries a consumer's handlers (or decoders) are
	// working on.
	MetricInFlight = "acemq.consumer.in_flight"
)

// AttrOutcome is the attribute of acemq.outcome and of a process span that
// says how a delivery was settled (accepted, retried, parked, ...); it is
// spelled as the metric is.
const AttrOutcome = "acemq.outcome"
