package runtime

import (
	"fmt"
	"maps"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/wire"
	amqp "github.com/rabbitmq/amqp091-go"
)

// WithDelay has the message delivered d from now: it goes into the
// broker's delay topology (a Topology with Delay set, which the connection
// declared; its DelayPrefix, else wire.DelayPrefix) and reaches its
// exchange once d has passed, routed there as the same publish without
// WithDelay is, with its identity (x-acemq-id, message_id), properties and
// headers, and wire.HeaderDelayUntil, the time it is due. d is rounded up
// to whole seconds (wire.DelaySeconds: never early; 1.2s waits 2s); the
// broker adds a few milliseconds a level. Publish returns once the broker
// has confirmed that a level holds the message (the publish is always
// mandatory: an error matching ErrExchangeNotFound or ErrUnroutable means
// the delay topology is not declared). A d of zero or less publishes
// directly, as without the option; one past wire.MaxDelay (2^28−1 seconds,
// 8.5 years) is an error matching ErrInvalidMessage and
// wire.ErrDelayTooLong, nothing sent. So is a destination the topology
// cannot deliver (wire.CheckDelayDestination): the default exchange, a
// routing key with a word 0 or 1 among its first 28. For a time t, give
// WithDelay(time.Until(t)).
//
// NewOutgoing keeps the destination and writes the due time only, so that
// an outbox's relay (Connection.PublishOutgoing) sends the message into the
// delay topology for the time left when it relays it (directly once that
// time has passed). A published delay cannot be cancelled: the consumer
// checks, when it arrives, whether it still applies.
func WithDelay(d time.Duration) PublishOption {
	return publishOptionFunc(func(c *publishConfig) { c.delay, c.delaySet = d, true })
}

// delayPrefix is the topology's delay prefix, the default when unset.
func (t *Topology) delayPrefix() string {
	if t.DelayPrefix == "" {
		return wire.DelayPrefix
	}
	return t.DelayPrefix
}

// delayDeclarations adds the delay topology to d: the levels' and the
// delivery exchanges, the levels' queues, each level's two bindings, and
// a binding of the delivery exchange to each of t's exchanges.
func (t *Topology) delayDeclarations(d *Declarations) error {
	p := t.delayPrefix()
	if err := wire.CheckDelayPrefix(p); err != nil {
		return fmt.Errorf("declare: %w", err)
	}
	if t.Delay != Classic && t.Delay != Quorum {
		return fmt.Errorf("declare: the delay topology's queue type %q: write %s or %s", t.Delay, Classic, Quorum)
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
		d.Queues = append(d.Queues, QueueDeclaration{Name: level, Arguments: delayLevelArguments(t.Delay, n, next)})
		d.Bindings = append(d.Bindings, Binding{Queue: level, Exchange: level, RoutingKey: wire.DelayLevelPattern(n, true)})
		d.ExchangeBindings = append(d.ExchangeBindings, Binding{ToExchange: next, Exchange: level, RoutingKey: wire.DelayLevelPattern(n, false)})
	}
	for _, e := range t.Exchanges {
		if err := wire.CheckDelayDestination(e.Name, ""); err != nil {
			return fmt.Errorf("declare: the delay topology: %w", err)
		}
		d.ExchangeBindings = append(d.ExchangeBindings, Binding{ToExchange: e.Name, Exchange: delivery, RoutingKey: wire.DelayDeliveryPattern(e.Name)})
	}
	return nil
}

// delayLevelArguments hold a message 2^n seconds, then dead-letter it to
// next with its routing keys (no x-dead-letter-routing-key).
func delayLevelArguments(typ QueueType, n int, next string) map[string]any {
	args := map[string]any{
		wire.ArgMessageTTL:         wire.DelayLevelTTL(n),
		wire.ArgDeadLetterExchange: next,
	}
	if typ == Quorum {
		args[wire.ArgQueueType] = string(Quorum)
		args[wire.ArgDeadLetterStrategy] = "at-least-once"
		args[wire.ArgOverflow] = "reject-publish"
	}
	return args
}

// delayPrefixOf is the prefix of the delay topology c declared last, else
// the default.
func (c *Connection) delayPrefixOf() string {
	if p := c.delayPrefix.Load(); p != nil {
		return *p
	}
	return wire.DelayPrefix
}

// delayDue writes o's due time, d from now rounded up to whole seconds
// (wire.HeaderDelayUntil, to the millisecond), refusing a delay too long
// and a destination the delay topology cannot deliver. A d of zero or
// less writes nothing: o is published directly.
func delayDue(o *amqpx.Outgoing, d time.Duration) error {
	s, err := wire.DelaySeconds(d)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidMessage, err)
	}
	if s == 0 {
		return nil
	}
	if err := wire.CheckDelayDestination(o.Exchange, o.Key); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidMessage, err)
	}
	o.Msg.Headers[wire.HeaderDelayUntil] = core.FormatTime(time.Now().Add(time.Duration(s) * time.Second))
	return nil
}

// routeDue sends o, when it carries wire.HeaderDelayUntil (an outbox's
// message, NewOutgoingAt), into the delay topology for the time left until
// then, rounded up to whole seconds (routeDelay); a message whose time has
// come is left as it is, published directly.
func (c *Connection) routeDue(o *amqpx.Outgoing) error {
	v, ok := o.Msg.Headers[wire.HeaderDelayUntil]
	if !ok {
		return nil
	}
	due := core.TimeValue(v)
	if due.IsZero() {
		return fmt.Errorf("%w: %s is %v, not an RFC 3339 time", ErrInvalidMessage, wire.HeaderDelayUntil, v)
	}
	s, err := wire.DelaySeconds(time.Until(due))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidMessage, err)
	}
	return c.routeDelay(o, s)
}

// routeDelay sends o into the delay topology for s seconds (none when s is
// 0): to the level of its highest bit, with the delay routing key,
// mandatory, its own routing key in BCC (and in
// wire.HeaderDelayRoutingKey). o's headers are replaced, not written to.
func (c *Connection) routeDelay(o *amqpx.Outgoing, s int64) error {
	if s == 0 {
		return nil
	}
	if err := wire.CheckDelayDestination(o.Exchange, o.Key); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidMessage, err)
	}
	h := maps.Clone(o.Msg.Headers)
	h[wire.HeaderBCC] = []any{o.Key}
	h[wire.HeaderDelayRoutingKey] = o.Key
	o.Msg.Headers = h
	o.Key = wire.DelayRoutingKey(s, o.Exchange)
	o.Exchange = wire.DelayLevel(c.delayPrefixOf(), wire.DelayTopLevel(s))
	o.Mandatory = true
	return nil
}
