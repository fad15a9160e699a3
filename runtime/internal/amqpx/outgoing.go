package amqpx

import (
	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/trace"
)

// Outgoing is one message ready for the wire.
type Outgoing struct {
	Exchange, Key string
	Mandatory     bool
	Msg           amqp.Publishing
	// Parent, when valid, is the trace the publish's span continues
	// instead of ctx's (a replayed copy stays in its message's trace).
	Parent trace.SpanContext
	// Origin is why the runtime publishes it (acemq.publish): "" for the
	// application's publish, else retry, dead_letter, park or replay.
	Origin string
}

// KeyOf is what a basic.return of o would name.
func KeyOf(o *Outgoing) ReturnKey { return ReturnKey{o.Msg.MessageId, o.Exchange, o.Key} }
