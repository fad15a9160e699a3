package runtime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"
	amqp "github.com/rabbitmq/amqp091-go"
)

// DelayTopology asks Declare for the binary delay topology that holds
// delayed messages (PublishAfter, PublishAt) in the broker, without a
// plugin, on every RabbitMQ version: wire.DelayLevels levels, level n a
// topic exchange and a queue named wire.DelayLevel(Prefix, n) whose
// x-message-ttl is 2^n seconds and which dead-letters to level n−1; the
// delivery exchange wire.DelayDelivery(Prefix); and, for each exchange of
// the topology, the binding through which a delayed message reaches it
// (docs/delayed-delivery.md; the wire format in docs/design.md). Every
// service that declares it declares the same names with the same
// arguments, so the topology exists once per broker (a vhost) however many
// services use it; two services that disagree on Type get a *DeclareError.
type DelayTopology struct {
	// Prefix names the topology: "" is wire.DelayPrefix, acemq.delay.
	// Another prefix ends in .delay (wire.CheckDelayPrefix); the
	// connections that publish into it name it too (WithDelayPrefix).
	Prefix string
	// Type is the levels' queue type: classic (the default, when empty),
	// whose dead-lettering is at-most-once, or quorum, declared with
	// x-dead-letter-strategy: at-least-once and x-overflow: reject-publish
	// (docs/reliability.md, "Delayed delivery", says which to pick).
	Type QueueType
}

// ExchangeBinding binds exchange Destination to exchange Source: what
// Source routes with RoutingKey goes on to Destination.
type ExchangeBinding struct {
	Destination string
	Source      string
	RoutingKey  string
}

// prefix is the topology's prefix, the default when unset.
func (dt *DelayTopology) prefix() string {
	if dt.Prefix == "" {
		return wire.DelayPrefix
	}
	return dt.Prefix
}

// declarations adds the delay topology to d: the levels' and the delivery
// exchanges, the levels' queues, each level's two bindings and a binding
// of the delivery exchange to each of exchanges.
func (dt *DelayTopology) declarations(d *Declarations, exchanges []Exchange) error {
	p := dt.prefix()
	if err := wire.CheckDelayPrefix(p); err != nil {
		return fmt.Errorf("declare: %w", err)
	}
	if dt.Type != "" && dt.Type != Classic && dt.Type != Quorum {
		return fmt.Errorf("declare: delay topology: queue type %q: write %s or %s", dt.Type, Classic, Quorum)
	}
	delivery := wire.DelayDelivery(p)
	for n := wire.DelayLevels - 1; n >= 0; n-- {
		d.Exchanges = append(d.Exchanges, Exchange{Name: wire.DelayLevel(p, n), Kind: amqp.ExchangeTopic})
	}
	d.Exchanges = append(d.Exchanges, Exchange{Name: delivery, Kind: amqp.ExchangeTopic})
	for n := wire.DelayLevels - 1; n >= 0; n-- {
		level, next := wire.DelayLevel(p, n), delivery
		if n > 0 {
			next = wire.DelayLevel(p, n-1)
		}
		d.Queues = append(d.Queues, QueueDeclaration{Name: level, Arguments: dt.levelArguments(n, next)})
		d.Bindings = append(d.Bindings, Binding{Queue: level, Exchange: level, RoutingKey: wire.DelayLevelPattern(n, true)})
		d.ExchangeBindings = append(d.ExchangeBindings, ExchangeBinding{Destination: next, Source: level, RoutingKey: wire.DelayLevelPattern(n, false)})
	}
	for _, e := range exchanges {
		if err := wire.CheckDelayDestination(e.Name, ""); err != nil {
			return fmt.Errorf("declare: delay topology: %w", err)
		}
		d.ExchangeBindings = append(d.ExchangeBindings, ExchangeBinding{Destination: e.Name, Source: delivery, RoutingKey: wire.DelayDeliveryPattern(e.Name)})
	}
	return nil
}

// levelArguments hold a message 2^n seconds, then dead-letter it to next
// with its routing keys (no x-dead-letter-routing-key).
func (dt *DelayTopology) levelArguments(n int, next string) map[string]any {
	args := map[string]any{
		wire.ArgMessageTTL:         wire.DelayLevelTTL(n),
		wire.ArgDeadLetterExchange: next,
	}
	if dt.Type == Quorum {
		args[wire.ArgQueueType] = string(Quorum)
		args[wire.ArgDeadLetterStrategy] = "at-least-once"
		args[wire.ArgOverflow] = "reject-publish"
	}
	return args
}

// WithDelayPrefix names the delay topology the connection's delayed
// publishes go into (PublishAfter, PublishAt, and an outbox's delayed
// messages it relays): the Prefix of the DelayTopology that was declared.
// The default is wire.DelayPrefix, acemq.delay.
func WithDelayPrefix(prefix string) DialOption {
	return dialOptionFunc(func(c *dialConfig) { c.delayPrefix = prefix })
}

// delayPrefix is the connection's delay prefix.
func (c *Connection) delayPrefix() string {
	if c.cfg.delayPrefix == "" {
		return wire.DelayPrefix
	}
	return c.cfg.delayPrefix
}

// PublishAfter publishes v as Publish does, to exchange with the routing
// key of opts, to be delivered d from now: it goes into the broker's delay
// topology (DelayTopology, declared by Declare) and reaches exchange once d
// has passed, routed there as Publish routes it, with its identity
// (x-acemq-id, message_id), properties and headers, and
// wire.HeaderDelayUntil, the time it is due. d is rounded up to whole
// seconds (wire.DelaySeconds: never early; 1.2s waits 2s); the broker adds
// a few milliseconds a level. PublishAfter returns once the broker has
// confirmed that a level holds the message (an error matching
// ErrUnroutable means the delay topology was not declared under the
// connection's prefix, WithDelayPrefix). A d of zero or less publishes
// directly, as Publish; one past wire.MaxDelay (2^28−1 seconds) is an error
// matching ErrInvalidMessage and wire.ErrDelayTooLong, nothing sent. So is
// a destination the topology cannot deliver (wire.CheckDelayDestination):
// the default exchange, a routing key with a word 0 or 1 among its first
// 28. A published delay cannot be cancelled (docs/delayed-delivery.md).
func PublishAfter[T any](ctx context.Context, c *Connection, mt *MessageType[T], exchange string, d time.Duration, v T, opts ...PublishOption) error {
	return publishDelayed(ctx, c, mt, exchange, time.Now(), d, v, opts)
}

// PublishAt is PublishAfter until t: the delay is t less now, rounded up
// to whole seconds. A t in the past publishes directly.
func PublishAt[T any](ctx context.Context, c *Connection, mt *MessageType[T], exchange string, t time.Time, v T, opts ...PublishOption) error {
	now := time.Now()
	return publishDelayed(ctx, c, mt, exchange, now, t.Sub(now), v, opts)
}

// publishDelayed publishes v due d after now.
func publishDelayed[T any](ctx context.Context, c *Connection, mt *MessageType[T], exchange string, now time.Time, d time.Duration, v T, opts []PublishOption) error {
	s, err := wire.DelaySeconds(d)
	if err != nil {
		return fmt.Errorf("publish %s to exchange %q: %w: %w", mt.Name(), exchange, ErrInvalidMessage, err)
	}
	if s == 0 {
		return Publish(ctx, c, mt, exchange, v, opts...)
	}
	out, err := NewOutgoingAt(ctx, c, mt, exchange, now.Add(time.Duration(s)*time.Second), v, opts...)
	if err != nil {
		return err
	}
	o := outgoing{exchange: out.Exchange, key: out.RoutingKey, mandatory: out.Mandatory, msg: out.Msg, parent: traceOf(out.Msg.Headers)}
	if err := c.routeDelay(&o); err != nil {
		return &PublishError{Exchange: out.Exchange, RoutingKey: out.RoutingKey, Err: err}
	}
	pd, err := c.publishAsync(ctx, false, o)
	if err == nil {
		err = pd.Wait(ctx)
	}
	if errors.Is(err, ErrUnroutable) {
		return fmt.Errorf("%w: %w", err, errDelayNotDeclared)
	}
	return err
}

// NewOutgoingAt is NewOutgoing of a message due at t, for an outbox: it
// carries wire.HeaderDelayUntil, t (to the millisecond, rounded up), and
// Connection.PublishOutgoing sends it into the delay topology for the time
// left then, rounded up to whole seconds (directly once t has passed). It
// refuses a destination the delay topology cannot deliver and a t past
// wire.MaxDelay from now, as PublishAt does.
func NewOutgoingAt[T any](ctx context.Context, c *Connection, mt *MessageType[T], exchange string, t time.Time, v T, opts ...PublishOption) (Outgoing, error) {
	if _, err := wire.DelaySeconds(time.Until(t)); err != nil {
		return Outgoing{}, fmt.Errorf("publish %s to exchange %q: %w: %w", mt.Name(), exchange, ErrInvalidMessage, err)
	}
	out, err := NewOutgoing(ctx, c, mt, exchange, v, opts...)
	if err != nil {
		return Outgoing{}, err
	}
	if err := wire.CheckDelayDestination(out.Exchange, out.RoutingKey); err != nil {
		return Outgoing{}, fmt.Errorf("publish %s to exchange %q: %w: %w", mt.Name(), exchange, ErrInvalidMessage, err)
	}
	if r := t.Truncate(time.Millisecond); r.Before(t) {
		t = r.Add(time.Millisecond)
	}
	out.Msg.Headers[wire.HeaderDelayUntil] = formatTime(t)
	return out, nil
}

// routeDelay sends o, when it carries wire.HeaderDelayUntil, into the delay
// topology for the time left until then: to the level of its highest bit,
// with the delay routing key, mandatory, its own routing key in BCC (and in
// wire.HeaderDelayRoutingKey). A message whose time has come is left as it
// is (published directly). o's headers are replaced, not written to.
func (c *Connection) routeDelay(o *outgoing) error {
	v, ok := o.msg.Headers[wire.HeaderDelayUntil]
	if !ok {
		return nil
	}
	due := timeValue(v)
	if due.IsZero() {
		return fmt.Errorf("%w: %s is %v, not an RFC 3339 time", ErrInvalidMessage, wire.HeaderDelayUntil, v)
	}
	s, err := wire.DelaySeconds(time.Until(due))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidMessage, err)
	}
	if s == 0 {
		return nil
	}
	if err := wire.CheckDelayDestination(o.exchange, o.key); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidMessage, err)
	}
	h := maps.Clone(o.msg.Headers)
	h[wire.HeaderBCC] = []any{o.key}
	h[wire.HeaderDelayRoutingKey] = o.key
	o.msg.Headers = h
	o.key = wire.DelayRoutingKey(s, o.exchange)
	o.exchange = wire.DelayLevel(c.delayPrefix(), wire.DelayTopLevel(s))
	o.mandatory = true
	return nil
}

// deliveredRoutingKey is the routing key a handler sees: a delayed
// message's own (wire.HeaderDelayRoutingKey) when it arrived with a delay
// routing key, else d's.
func deliveredRoutingKey(d *amqp.Delivery) string {
	if _, _, ok := wire.ParseDelayRoutingKey(d.RoutingKey); ok {
		if k, ok := d.Headers[wire.HeaderDelayRoutingKey].(string); ok {
			return k
		}
	}
	return d.RoutingKey
}

// errDelayNotDeclared says what an unroutable level means.
var errDelayNotDeclared = errors.New("the delay topology is not declared under this prefix (Declare a Topology with Delay set; WithDelayPrefix names another)")
