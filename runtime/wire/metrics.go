package wire

// The names of the runtime's OpenTelemetry instruments (docs/metrics.md
// says what each counts and with which attributes): the messaging.* ones
// are OpenTelemetry's messaging semantic conventions, the acemq.* ones the
// library's own.
const (
	MetricSent                = "messaging.client.sent.messages"
	MetricConsumed            = "messaging.client.consumed.messages"
	MetricProcessDuration     = "messaging.process.duration"
	MetricOperationDuration   = "messaging.client.operation.duration"
	MetricOutcome             = "acemq.outcome"
	MetricRungMissing         = "acemq.retry.rung.missing"
	MetricRetrySpilled        = "acemq.retry.spilled"
	MetricSetAsideFailed      = "acemq.set_aside.failed"
	MetricFrameErrors         = "acemq.consumer.frame_errors"
	MetricRegistryUnavailable = "acemq.registry.unavailable"
	MetricReplayMoved         = "acemq.replay.moved"
	MetricBrowsed             = "acemq.browsed"
	MetricRequestDuration     = "acemq.request.duration"
	MetricLateReplies         = "acemq.request.late_replies"
	MetricRequestsExpired     = "acemq.request.expired"
	MetricHeld                = "acemq.consumer.held"
	MetricInFlight            = "acemq.consumer.in_flight"
)

// AttrOutcome is the attribute of acemq.outcome and of a process span that
// says how a delivery was settled (accepted, retried, parked, ...); it is
// spelled as the metric is.
const AttrOutcome = "acemq.outcome"
