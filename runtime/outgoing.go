package runtime

import (
	"context"
	"fmt"
	"maps"

	"github.com/acemq/acemq-go/runtime/internal/outimpl"
)

// encodable is every *MessageType[T]: what building a message needs of
// its type, without its type parameter.
type encodable interface {
	codecFor(c *Connection) (Codec, error)
	Name() string
}

// encodeOne encodes v as a message of mt to exchange with opts applied:
// the message Publish and PublishAsync send, and an outbox stores.
func (c *Connection) encodeOne(ctx context.Context, mt encodable, exchange string, v any, opts []PublishOption) (outgoing, publishConfig, error) {
	codec, err := mt.codecFor(c)
	if err != nil {
		return outgoing{}, publishConfig{}, err
	}
	fp, _ := codec.(interface{ schemaFingerprint() string })
	cfg := publishConfigOf(opts)
	o, err := encodeOutgoing(ctx, c, mt.Name(), codec, fp, exchange, v, cfg)
	if err != nil {
		return outgoing{}, cfg, fmt.Errorf("publish %s to exchange %q: %w", mt.Name(), exchange, err)
	}
	return o, cfg, nil
}

// newOutgoing is the message Publish would send for v, not sent: ctx's
// trace context is written into its headers, so that the publish that
// sends it later continues the trace of the code that wrote it.
func (c *Connection) newOutgoing(ctx context.Context, mt encodable, exchange string, v any, opts []PublishOption) (outimpl.Outgoing, error) {
	o, cfg, err := c.encodeOne(ctx, mt, exchange, v, opts)
	if err != nil {
		return outimpl.Outgoing{}, err
	}
	injectTrace(ctx, o.msg.Headers)
	// What Publish would refuse when writing it: its header frame above
	// the connection's frame_max.
	if err := checkOutgoing(o.exchange, o.key, &o.msg, c.frameMax()); err != nil {
		return outimpl.Outgoing{}, fmt.Errorf("publish %s to exchange %q: %w", mt.Name(), exchange, err)
	}
	key := cfg.correlationID
	if cfg.orderingKeySet {
		key = cfg.orderingKey
	}
	return outimpl.Outgoing{Exchange: o.exchange, RoutingKey: o.key, Mandatory: o.mandatory, OrderingKey: key, Msg: o.msg}, nil
}

// publishOutgoing sends a message newOutgoing built (read back from an
// outbox) as PublishAsync sends one: its publish span continues the trace
// its headers carry, and acemq.publish says "outbox". It is an
// application's publish, checked as Publish checks one (a row written
// into the table by other means than NewOutgoing included) and never
// trimmed to fit: one that does not fit is refused (ErrInvalidMessage),
// nothing written.
func (c *Connection) publishOutgoing(ctx context.Context, out outimpl.Outgoing) (*Pending, error) {
	if err := checkOutgoing(out.Exchange, out.RoutingKey, &out.Msg, 0); err != nil {
		return nil, &PublishError{Exchange: out.Exchange, RoutingKey: out.RoutingKey, Err: err}
	}
	msg := out.Msg
	msg.Headers = maps.Clone(msg.Headers) // the publish writes its own trace context
	o := outgoing{exchange: out.Exchange, key: out.RoutingKey, mandatory: out.Mandatory, msg: msg,
		parent: traceOf(msg.Headers), origin: originOutbox}
	return c.publishAsync(ctx, false, o)
}

func init() {
	outimpl.New = func(ctx context.Context, c, mt any, exchange string, v, opts any) (outimpl.Outgoing, error) {
		return c.(*Connection).newOutgoing(ctx, mt.(encodable), exchange, v, opts.([]PublishOption))
	}
	outimpl.Publish = func(ctx context.Context, c any, o outimpl.Outgoing) (any, error) {
		p, err := c.(*Connection).publishOutgoing(ctx, o)
		if p == nil {
			return nil, err
		}
		return p, err
	}
}
