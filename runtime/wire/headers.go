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
	// HeaderDropped says which headers of a message the runtime dropped, and
	// why: a copy that would not fit the broker's frame_max, or a header table
	// amqp091-go cannot read.
	HeaderDropped = "x-acemq-dropped-headers"
	// HeaderRedeliveries counts how many times a message came back unsettled
	// (Redelivered) to a consumer with runtime.WithRedeliveryLimit: the runtime stamps
	// it on the copy it puts back in place of the redelivered original.
	HeaderRedeliveries = "x-acemq-redeliveries"
	// HeaderUnreadable names the headers the runtime's header filter
	// removed from a delivery it could not read.
	HeaderUnreadable = "x-acemq-unreadable"
	// HeaderSchemaFingerprint is the header in which Publish records which
	// Avro schema wrote the body: "sha256:" and the hex SHA-256 of the
	// schema's Parsing Canonical Form. The consumer checks it against the
	// writer schema the registry returns for the body's id, so an id that
	// names another schema in the consumer's registry never decodes (see
	// Decode of the Avro codec). Bodies without it (other producers) are
	// trusted to the registry.
	HeaderSchemaFingerprint = "x-acemq-schema-fingerprint"
	// HeaderSchema is the header in which Publish carries the writer schema of
	// an Avro body when no shared registry is configured (the codec's registry
	// is a registry.Fingerprint, the default): the schema's JSON as hamba/avro
	// writes it (docs and defaults left out, which a reader does not need of a
	// writer), at most runtime.MaxCarriedSchema bytes. A consumer whose registry does
	// not know the body's schema id (another service's newer or older schema)
	// decodes with it, once its Parsing Canonical Form's SHA-256 is the
	// x-acemq-schema-fingerprint header and the id derived from it (registry.SchemaID)
	// is the body's; parsed and resolved once per fingerprint.
	HeaderSchema = "x-acemq-schema"

	// HeaderReplyType is, on a request, the message type its caller expects
	// back; on a reply, the type of the reply (the type property says the
	// same).
	HeaderReplyType = "x-acemq-reply-type"
	// HeaderReplyError is, on a reply, the responder's reason when it answered
	// with an error instead of a reply; the body is then empty.
	HeaderReplyError = "x-acemq-reply-error"
	// HeaderReplyErrorCode is the code of such an error: "error" unless the
	// responder returned a *runtime.ReplyError with a code of its own.
	HeaderReplyErrorCode = "x-acemq-reply-error-code"
	// HeaderReplyToken is, on a request, its requester's own key for the
	// reply, never reused (whatever correlation id the caller chose); a
	// responder echoes it unchanged on the reply, by which the requester
	// matches the reply to its request.
	HeaderReplyToken = "x-acemq-reply-token"

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
