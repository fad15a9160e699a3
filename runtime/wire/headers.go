package wire

// Header names of the wire contract shared with the sibling libraries
// (docs/design.md, "The wire contract").
const (
	HeaderID        = "x-acemq-id"
	HeaderAttempt   = "x-acemq-attempt"
	HeaderFirstSeen = "x-acemq-first-seen"
	HeaderOrigin    = "x-acemq-origin"
	HeaderError     = "x-acemq-error"
	HeaderQueue     = "x-acemq-queue"
	// HeaderDropped says which headers of a message the runtime dropped,
	// and why.
	HeaderDropped = "x-acemq-dropped-headers"
	// HeaderRedeliveries counts the times a message came back to a
	// consumer unsettled (a requeue, a lost connection).
	HeaderRedeliveries = "x-acemq-redeliveries"
	// HeaderUnreadable names the headers the runtime's header filter
	// removed from a delivery it could not read.
	HeaderUnreadable = "x-acemq-unreadable"
	// HeaderSchemaFingerprint is an Avro writer schema's fingerprint.
	HeaderSchemaFingerprint = "x-acemq-schema-fingerprint"
	// HeaderSchema is an Avro writer schema, carried when no registry is
	// shared.
	HeaderSchema = "x-acemq-schema"

	// The request/reply headers.
	HeaderReplyType      = "x-acemq-reply-type"
	HeaderReplyError     = "x-acemq-reply-error"
	HeaderReplyErrorCode = "x-acemq-reply-error-code"
	HeaderReplyToken     = "x-acemq-reply-token"

	// Replay stamps carry no x-acemq- prefix on purpose: they reach
	// handlers.
	HeaderReplayedFrom = "acemq-replayed-from"
	HeaderReplayedAt   = "acemq-replayed-at"
	HeaderReplayCount  = "acemq-replay-count"

	// InternalPrefix is the namespace of the library's own headers,
	// stripped from what a handler sees.
	InternalPrefix = "x-acemq-"
)

// The broker's headers: its dead-lettering (x-death on 3.10 and 4,
// x-first-death-* and x-last-death-*), and a quorum queue's count of
// deliveries.
const (
	HeaderDeath            = "x-death"
	HeaderFirstDeathPrefix = "x-first-death-"
	HeaderLastDeathPrefix  = "x-last-death-"
	HeaderFirstDeathQueue  = "x-first-death-queue"
	HeaderFirstDeathReason = "x-first-death-reason"
	HeaderLastDeathQueue   = "x-last-death-queue"
	HeaderLastDeathReason  = "x-last-death-reason"
	HeaderDeliveryCount    = "x-delivery-count"
)

// The x-arguments of the queues the topology declares.
const (
	ArgQueueType            = "x-queue-type"
	ArgDeadLetterExchange   = "x-dead-letter-exchange"
	ArgDeadLetterRoutingKey = "x-dead-letter-routing-key"
	ArgDeadLetterStrategy   = "x-dead-letter-strategy"
	ArgDeliveryLimit        = "x-delivery-limit"
	ArgMessageTTL           = "x-message-ttl"
	ArgOverflow             = "x-overflow"
	ArgExpires              = "x-expires"
	// RabbitMQ 4.3's quorum-queue delayed retry.
	ArgDelayedRetryPrefix = "x-delayed-retry-"
	ArgDelayedRetryType   = "x-delayed-retry-type"
	ArgDelayedRetryMin    = "x-delayed-retry-min"
	ArgDelayedRetryMax    = "x-delayed-retry-max"
)

// The content types of the runtime's codecs.
const (
	ContentTypeJSON = "application/json"
	ContentTypeAvro = "application/vnd.apache.avro+binary"
	ContentTypeText = "text/plain"
)
