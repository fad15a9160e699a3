// Package outimpl lets the facade runtime/acemqimpl build a message as
// Publish builds it without sending it, and send such a message later, as
// a transactional outbox (pgstore) needs: package runtime sets these
// functions in its init, as it sets typeimpl's. The connection, message
// type, value and options are passed as any because a function value
// cannot be generic (and this package cannot name runtime's types).
package outimpl

import (
	"context"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Outgoing is a message built as Publish builds it and not sent: where it
// goes, whether it is mandatory, its ordering key and the publishing
// itself (body, properties and headers, x-acemq-id and the writer's trace
// context among them).
type Outgoing struct {
	Exchange    string
	RoutingKey  string
	Mandatory   bool
	OrderingKey string
	Msg         amqp.Publishing
}

var (
	// New encodes v (of message type mt) on connection c with the
	// publish options opts (a []runtime.PublishOption), as Publish
	// would, and returns the message without sending it.
	New func(ctx context.Context, c, mt any, exchange string, v, opts any) (Outgoing, error)

	// Publish sends o on c's confirm channel, as PublishAsync sends a
	// message, and returns its *runtime.Pending.
	Publish func(ctx context.Context, c any, o Outgoing) (any, error)
)
