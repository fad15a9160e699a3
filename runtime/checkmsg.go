package runtime

import (
	"errors"
	"fmt"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
)

// AMQP writes a publish's exchange and routing key, most of a message's
// properties (content type and encoding, correlation id, reply-to,
// expiration, message id, type, user id, app id) and the name of every
// header, at every nesting level, as short strings: a length octet, so at
// most 255 bytes. amqp091-go finds a longer one only while writing the
// frame, and answers it by closing the whole connection (501), every
// channel on it with it: a consumer sharing the connection loses its
// channel and the deliveries it holds come back. A header value of a type
// AMQP has no field for cannot be written either. checkOutgoing is the
// one check of all of it, made before anything of a message is written,
// for every message the application publishes (Publish, PublishBatch,
// PublishAsync, Request, a reply) and for every message a transactional
// outbox stores and relays (NewOutgoing and PublishOutgoing:
// pgstore's PublishTx refuses what Publish refuses because both call it).
// The runtime's own copies (a retry, a dead letter, a park, a replay) are
// made of what the broker delivered, and so fit, and are checked again
// before they are written (fit).

// maxMessageID is the longest id WithMessageID takes: message_id is an
// AMQP short string.
const maxMessageID = amqpx.MaxShortstr

// checkIdentity refuses what would give a message an identity other than
// the one asked for: x-acemq-id among WithHeaders (Publish would replace
// it), an empty WithMessageID, or one message_id cannot carry. It looks at
// the options, not at the built message (whose x-acemq-id is the
// runtime's, as a copy's is), so it is made where every application
// publish and every outbox row is built from them (encodeOutgoing), just
// before checkOutgoing.
func checkIdentity(cfg publishConfig) error {
	if _, ok := cfg.headers[wire.HeaderID]; ok {
		return fmt.Errorf("%w: the header %s is the runtime's, not an application header: set the message's identity with WithMessageID", ErrInvalidMessage, wire.HeaderID)
	}
	if !cfg.messageIDSet {
		return nil
	}
	if cfg.messageID == "" {
		return fmt.Errorf("%w: WithMessageID: an empty id", ErrInvalidMessage)
	}
	if len(cfg.messageID) > maxMessageID {
		return fmt.Errorf("%w: WithMessageID: an id of %d bytes, above the %d of an AMQP message_id", ErrInvalidMessage, len(cfg.messageID), maxMessageID)
	}
	return nil
}

// checkDeclarations refuses a declaration with a name, kind, routing key
// or argument AMQP cannot carry, before anything is declared.
func checkDeclarations(d Declarations) error {
	short := func(what, s string) error {
		if len(s) > amqpx.MaxShortstr {
			return fmt.Errorf("declare: %s %s is %d bytes, above AMQP's %d for a short string (the client would close the connection)",
				what, amqpx.ShortQuote(s), len(s), amqpx.MaxShortstr)
		}
		return nil
	}
	args := func(what, name string, a map[string]any) error {
		if err := amqpx.CheckTable(amqp.Table(a)); err != nil {
			return fmt.Errorf("declare: the arguments of %s %s: %w", what, amqpx.ShortQuote(name), err)
		}
		return nil
	}
	for _, e := range d.Exchanges {
		if err := errors.Join(short("exchange", e.Name), short("exchange kind", e.Kind), args("exchange", e.Name, e.Arguments)); err != nil {
			return err
		}
	}
	for _, q := range d.Queues {
		if err := errors.Join(short("queue", q.Name), args("queue", q.Name, q.Arguments)); err != nil {
			return err
		}
	}
	for _, b := range d.Bindings {
		if err := errors.Join(short("binding's queue", b.Queue), short("binding's exchange", b.Exchange),
			short("binding's routing key", b.RoutingKey), args("binding of queue", b.Queue, b.Arguments)); err != nil {
			return err
		}
	}
	return nil
}
