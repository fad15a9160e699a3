package core

import (
	"errors"

	"github.com/acemq/acemq-go/runtime/internal/schemareg"
)

// The sentinel errors, runtime's (package runtime declares each as a var
// of the same name holding this value, with its documentation).
var (
	// ErrClosed is returned by calls on a Connection or Consumer that was
	// closed.
	ErrClosed = errors.New("acemq: closed")
	// ErrUnroutable is returned by a publish that the broker returned
	// (mandatory): no queue is bound for its exchange and routing key.
	ErrUnroutable = errors.New("acemq: unroutable")
	// ErrNacked is returned by a publish the broker refused (basic.nack).
	ErrNacked = errors.New("acemq: publish refused by the broker")
	// ErrQueueNotFound is returned for a queue that does not exist.
	ErrQueueNotFound = errors.New("acemq: queue not found")
	// ErrExchangeNotFound is returned by a publish to an exchange that does
	// not exist; nothing was sent.
	ErrExchangeNotFound = errors.New("acemq: exchange not found")
	// ErrRegistryUnavailable is wrapped by a schema registry's errors that
	// may pass (a registry that does not answer). A consumer that meets one
	// while decoding returns the message to its queue after a pause instead
	// of parking it.
	ErrRegistryUnavailable = schemareg.ErrUnavailable
	// ErrSchemaNotFound is returned by a registry for an unknown id.
	ErrSchemaNotFound = schemareg.ErrNotFound
	// ErrSchemaIDCollision is matched by a SchemaIDCollisionError: two
	// schemas whose derived ids are equal.
	ErrSchemaIDCollision = errors.New("acemq: schema id collision")
	// ErrSchemaMismatch is matched by a decode error for a body whose
	// x-acemq-schema-fingerprint header names another schema than the one
	// the consumer's registry holds under the body's id: the publisher and
	// the consumer do not share a registry. Such a body is parked, never
	// decoded with the wrong schema.
	ErrSchemaMismatch = errors.New("acemq: the registry's schema is not the writer's")
	// ErrBodyTooLarge is matched by the decode error of a body over the
	// consumer's WithMaxBodySize; such a body is parked unread.
	ErrBodyTooLarge = errors.New("acemq: body too large")
	// ErrInvalidMessage is matched by every error for a message that breaks
	// its schema on publish, or that AMQP cannot carry (an exchange,
	// routing key, property or header name over 255 bytes, a header value
	// of no AMQP type, properties and headers over the broker's
	// frame_max); such a message is never sent, and the error names what
	// is wrong.
	ErrInvalidMessage = errors.New("acemq: invalid message")

	// ErrAuth is matched by a Dial error the broker gave on login: wrong
	// user or password (403 ACCESS_REFUSED), a vhost that does not exist or
	// that the user may not use (530 NOT_ALLOWED). Retrying cannot fix it,
	// so Dial returns it at once.
	ErrAuth = errors.New("acemq: the broker refused the login")
	// ErrUnreachable is matched by a Dial error for a broker that is not
	// there: connection refused, DNS failure, timeout, a broker shutting
	// down, a connection closed or reset before the AMQP handshake
	// completed (a broker starting up, a load balancer with no broker
	// behind it). Dial keeps trying such errors until its ctx is done.
	// Such an error also matches ErrUnavailable.
	ErrUnreachable = errors.New("acemq: broker unreachable")
	// ErrInvalidURL is matched by a Dial error for a URL that does not
	// parse or whose scheme is not amqp:// or amqps://.
	ErrInvalidURL = errors.New("acemq: invalid broker URL")
	// ErrUnavailable is matched by the error of a call that failed because
	// the broker could not be reached or its connection was lost: an outage,
	// a restart, a connection cut or blocked. It is a window, not a state:
	// try again later (with backoff), do not stop for good. A publish that
	// fails with it may or may not have reached the broker when the failure
	// came after the write. It is matched alongside the cause (a DialError
	// matching ErrUnreachable, ErrBlocked, amqp091-go's error).
	ErrUnavailable = errors.New("acemq: broker unavailable")
	// ErrBlocked is matched by a publish refused at once because the broker
	// has blocked the connection (connection.blocked: a memory or disk
	// alarm). Its text carries the broker's reason; it also matches
	// ErrUnavailable. Nothing was sent.
	ErrBlocked = errors.New("acemq: connection blocked by the broker")
	// ErrOtherType is matched by the decode of a delivery whose type
	// property is not the message type's.
	ErrOtherType = errors.New("acemq: the delivery is of another message type")
)
