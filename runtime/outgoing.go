package runtime

import (
	"context"
	"fmt"
	"maps"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/obs"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Outgoing is a message built as Publish builds it and not sent
// (NewOutgoing), to be sent later by Connection.PublishOutgoing: what a
// transactional outbox stores in the caller's transaction and its relay
// publishes once the transaction has committed (pgstore.PublishTx and its
// relay are one). It is for the authors of such stores; a service
// publishes with Publish, PublishAsync or through a store.
//
// Msg carries the body, the properties and every header the publish would
// set (x-acemq-id, attempt 1, first seen, origin, the schema fingerprint,
// the writer's trace context); OrderingKey is WithOrderingKey's, else the
// correlation id: a relay that publishes one key's messages in the order
// they were written keeps that order. A store keeps every field as it is
// and gives it back unchanged, the headers' values with their AMQP types
// (pgstore keeps the table as AMQP encodes it).
type Outgoing struct {
	Exchange    string
	RoutingKey  string
	Mandatory   bool
	OrderingKey string
	Msg         amqp.Publishing
}

// encodeOne encodes v as a message of type typ (whose codec on c is
// codec) to exchange with opts applied: the message Publish and
// PublishAsync send, and an outbox stores.
func (c *Connection) encodeOne(ctx context.Context, typ string, codec Codec, exchange string, v any, opts []PublishOption) (amqpx.Outgoing, publishConfig, error) {
	fp, _ := codec.(interface{ SchemaFingerprint() string })
	cfg := publishConfigOf(opts)
	o, err := encodeOutgoing(ctx, c, typ, codec, fp, exchange, v, cfg)
	if err != nil {
		return amqpx.Outgoing{}, cfg, fmt.Errorf("publish %s to exchange %q: %w", typ, exchange, err)
	}
	return o, cfg, nil
}

// NewOutgoing encodes v as mt on c with opts, exactly as Publish would
// (an invalid value is an error matching ErrInvalidMessage, worded as
// Publish words it), and returns the message without sending anything: no
// broker is reached (an Avro type's registry may be). ctx's trace context
// is written into its headers, so that the publish that sends it later
// continues the trace of the code that wrote it. It refuses what Publish
// refuses, by the same check: a short string over 255 bytes, a header of no
// AMQP type, a header frame over the connection's frame_max (131072 while
// it has none).
func NewOutgoing[T any](ctx context.Context, c *Connection, mt *MessageType[T], exchange string, v T, opts ...PublishOption) (Outgoing, error) {
	codec, err := core.CodecFor(mt, connLink{c})
	if err != nil {
		return Outgoing{}, err
	}
	return c.newOutgoing(ctx, mt.Name(), codec, exchange, v, opts)
}

// newOutgoing is NewOutgoing without its type parameter.
func (c *Connection) newOutgoing(ctx context.Context, typ string, codec Codec, exchange string, v any, opts []PublishOption) (Outgoing, error) {
	o, cfg, err := c.encodeOne(ctx, typ, codec, exchange, v, opts)
	if err != nil {
		return Outgoing{}, err
	}
	obs.InjectTrace(ctx, o.Msg.Headers)
	// What Publish would refuse when writing it: its header frame above
	// the connection's frame_max.
	if err := amqpx.CheckOutgoing(o.Exchange, o.Key, &o.Msg, c.frameMax()); err != nil {
		return Outgoing{}, fmt.Errorf("publish %s to exchange %q: %w", typ, exchange, err)
	}
	key := cfg.correlationID
	if cfg.orderingKeySet {
		key = cfg.orderingKey
	}
	return Outgoing{Exchange: o.Exchange, RoutingKey: o.Key, Mandatory: o.Mandatory, OrderingKey: key, Msg: o.Msg}, nil
}

// PublishOutgoing sends o, a message NewOutgoing built (read back from an
// outbox), on c's confirm channel as PublishAsync sends a message: the
// same errors, the same Pending to wait on for the broker's confirm, o's
// headers as they are. Its publish span continues the trace o carries,
// and its metrics count it with acemq.publish "outbox". It is an
// application's publish, checked as Publish checks one (a message a store
// gives back changed, a row written into its table by other means,
// included) and never trimmed to fit: one AMQP cannot carry is refused, a
// *PublishError matching ErrInvalidMessage, nothing written.
func (c *Connection) PublishOutgoing(ctx context.Context, out Outgoing) (*Pending, error) {
	if err := amqpx.CheckOutgoing(out.Exchange, out.RoutingKey, &out.Msg, 0); err != nil {
		return nil, &PublishError{Exchange: out.Exchange, RoutingKey: out.RoutingKey, Err: err}
	}
	msg := out.Msg
	msg.Headers = maps.Clone(msg.Headers) // the publish writes its own trace context
	o := amqpx.Outgoing{Exchange: out.Exchange, Key: out.RoutingKey, Mandatory: out.Mandatory, Msg: msg,
		Parent: obs.TraceOf(msg.Headers), Origin: amqpx.OriginOutbox}
	if err := c.routeDue(&o); err != nil {
		return nil, &PublishError{Exchange: out.Exchange, RoutingKey: out.RoutingKey, Err: err}
	}
	return c.publishAsync(ctx, false, o)
}
