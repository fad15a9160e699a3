package runtime

import (
	"context"
	"fmt"
	"strings"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
)

// declaration is one step of declaring a topology.
type declaration struct {
	kind string // exchange, queue, binding
	name string
	// quorum is a queue declared with x-queue-type: quorum.
	quorum bool
	do     func(ch *amqp.Channel) error
}

// method is the AMQP method a declaration sends.
func (d declaration) method() string {
	if d.kind == "binding" {
		return "queue.bind"
	}
	return d.kind + ".declare"
}

// Declare declares every exchange, queue and binding of t, with each
// queue's q.dlq, q.parked, rungs and the acemq.dlx and acemq.retry
// exchanges and their bindings (the wire contract), and the delay
// topology when t.Delay is set (WithDelay). Declaring what exists
// with the same arguments is harmless; a queue or exchange that exists
// with other arguments is a *DeclareError naming it and the argument.
// ctx bounds the whole call: when it ends before the broker has answered
// every declaration, Declare returns a *DeclareError naming the one it
// waited for, matching ctx's error (what was declared before it stays).
func (c *Connection) Declare(ctx context.Context, t *Topology) error {
	steps, err := t.plan()
	if err != nil {
		return err
	}
	if t.hasNativeRetry() {
		conn, err := c.amqpConn(ctx)
		if err != nil {
			return fmt.Errorf("declare: %w", err)
		}
		version, _ := conn.Properties["version"].(string)
		if err := checkBroker(t, version); err != nil {
			return err
		}
	}
	if t.Delay != "" {
		p := t.delayPrefix()
		c.delayPrefix.Store(&p)
	}
	cc, err := c.callChannel(ctx)
	if err != nil {
		return fmt.Errorf("declare: %w", err)
	}
	defer cc.Close(ctx)
	for _, s := range steps {
		if err := cc.Do(ctx, s.method(), s.do); err != nil {
			return amqpx.DeclareErrorOf(s.kind, s.name, err)
		}
		if s.quorum {
			c.quorum.Note(s.name)
		}
	}
	for _, q := range t.Queues {
		if q.NativeRetry {
			lo, hi, _ := nativeRetry(q.Retry) // plan refused an error
			c.native.Note(q.Name, lo, hi)
		}
	}
	return nil
}

// Declarations is what Declare declares for a topology, as data and in
// Declare's order: exchanges, queues, bindings. Every exchange and queue is
// durable, neither auto-deleted nor exclusive nor internal. acemq-gen
// export builds a RabbitMQ definitions file from it, so that importing the
// file and calling Declare give the same broker state.
type Declarations struct {
	Exchanges []Exchange
	Queues    []QueueDeclaration
	Bindings  []Binding
	// ExchangeBindings bind an exchange (ToExchange) to another: the delay
	// topology's (Topology.Delay).
	ExchangeBindings []Binding
}

// QueueDeclaration is one queue as Declare declares it.
type QueueDeclaration struct {
	Name      string
	Arguments map[string]any // the x-arguments; nil when there are none
}

// Declarations lists what Declare declares for t: t's exchanges, then
// acemq.dlx and acemq.retry (when t has a queue); each queue, its q.dlq,
// its q.parked and its rungs; the bindings of q.dlq and of the rungs, then
// t's. It refuses what Declare refuses before it reaches the broker.
func (t *Topology) Declarations() (Declarations, error) {
	var d Declarations
	d.Exchanges = append(d.Exchanges, t.Exchanges...)
	if len(t.Queues) > 0 {
		d.Exchanges = append(d.Exchanges,
			Exchange{Name: wire.DeadLetterExchange, Kind: amqp.ExchangeDirect},
			Exchange{Name: wire.RetryExchange, Kind: amqp.ExchangeDirect})
	}
	for _, q := range t.Queues {
		if err := q.Retry.Validate(); err != nil {
			return Declarations{}, fmt.Errorf("queue %q: %w", q.Name, err)
		}
		if err := amqpx.CheckQueueNames(q.Name, q.Retry); err != nil {
			return Declarations{}, fmt.Errorf("declare: %w", err)
		}
		if err := q.validate(); err != nil {
			return Declarations{}, err
		}
		dlq := wire.DeadLetterQueue(q.Name)
		d.Queues = append(d.Queues,
			QueueDeclaration{Name: q.Name, Arguments: q.arguments()},
			QueueDeclaration{Name: dlq},
			QueueDeclaration{Name: wire.ParkedQueue(q.Name)})
		d.Bindings = append(d.Bindings, Binding{Queue: dlq, Exchange: wire.DeadLetterExchange, RoutingKey: dlq})
		for _, delay := range q.rungs() {
			rung := wire.RungQueue(q.Name, delay)
			d.Queues = append(d.Queues, QueueDeclaration{Name: rung, Arguments: q.rungArguments(delay)})
			d.Bindings = append(d.Bindings, Binding{Queue: rung, Exchange: wire.RetryExchange, RoutingKey: rung})
		}
	}
	d.Bindings = append(d.Bindings, t.Bindings...)
	if t.Delay != "" {
		if err := t.delayDeclarations(&d); err != nil {
			return Declarations{}, err
		}
	}
	if err := checkDeclarations(d); err != nil {
		return Declarations{}, err
	}
	return d, nil
}

func (t *Topology) hasNativeRetry() bool {
	for _, q := range t.Queues {
		if q.NativeRetry {
			return true
		}
	}
	return false
}

// plan lists the declarations of t in order: exchanges, queues, bindings.
func (t *Topology) plan() ([]declaration, error) {
	d, err := t.Declarations()
	if err != nil {
		return nil, err
	}
	var steps []declaration
	for _, e := range d.Exchanges {
		steps = append(steps, declaration{kind: "exchange", name: e.Name, do: func(ch *amqp.Channel) error {
			return ch.ExchangeDeclare(e.Name, e.Kind, true, false, false, false, amqp.Table(e.Arguments))
		}})
	}
	for _, q := range d.Queues {
		steps = append(steps, declaration{kind: "queue", name: q.Name, quorum: q.Arguments[wire.ArgQueueType] == string(Quorum), do: func(ch *amqp.Channel) error {
			_, err := ch.QueueDeclare(q.Name, true, false, false, false, amqp.Table(q.Arguments))
			return err
		}})
	}
	for _, b := range d.Bindings {
		steps = append(steps, declaration{kind: "binding", name: b.Queue + " ← " + b.Exchange + " (" + b.RoutingKey + ")", do: func(ch *amqp.Channel) error {
			return ch.QueueBind(b.Queue, b.RoutingKey, b.Exchange, false, amqp.Table(b.Arguments))
		}})
	}
	for _, b := range d.ExchangeBindings {
		steps = append(steps, declaration{kind: "binding", name: b.ToExchange + " ← " + b.Exchange + " (" + b.RoutingKey + ")", do: func(ch *amqp.Channel) error {
			return ch.ExchangeBind(b.ToExchange, b.RoutingKey, b.Exchange, false, amqp.Table(b.Arguments))
		}})
	}
	return steps, nil
}

// arguments are the x-arguments of the application queue itself.
func (q Queue) arguments() amqp.Table {
	args := amqp.Table{}
	for k, v := range q.Arguments {
		args[k] = v
	}
	if q.Type == Quorum {
		args[wire.ArgQueueType] = string(Quorum)
		if _, given := q.Arguments[wire.ArgDeliveryLimit]; !given || q.DeliveryLimit > 0 {
			args[wire.ArgDeliveryLimit] = q.deliveryLimit()
		}
	}
	if q.DeadLetter {
		args[wire.ArgDeadLetterExchange] = wire.DeadLetterExchange
		args[wire.ArgDeadLetterRoutingKey] = wire.DeadLetterQueue(q.Name)
	}
	if q.NativeRetry {
		native, _ := q.nativeRetryArguments() // validate refused an error
		for k, v := range native {
			args[k] = v
		}
	}
	if len(args) == 0 {
		return nil
	}
	return args
}

// deliveryLimit is the queue's x-delivery-limit, the default when unset.
func (q Queue) deliveryLimit() int {
	if q.DeliveryLimit > 0 {
		return q.DeliveryLimit
	}
	return wire.DefaultDeliveryLimit
}

// validate refuses what would let the broker drop a message on its own: a
// quorum queue with no dead-letter target, a limit where none is counted.
func (q Queue) validate() error {
	switch {
	case q.DeliveryLimit < 0:
		return fmt.Errorf("queue %q: delivery limit %d: give a positive limit (-1 is unlimited on RabbitMQ 4 but drops after one delivery on 3.10), or 0 for the default %d", q.Name, q.DeliveryLimit, wire.DefaultDeliveryLimit)
	case q.Type != Quorum && q.DeliveryLimit != 0:
		return fmt.Errorf("queue %q: a delivery limit applies to quorum queues only (a classic queue counts no deliveries); set Type: Quorum or drop DeliveryLimit", q.Name)
	case q.Type == Quorum && !q.DeadLetter && q.Arguments[wire.ArgDeadLetterExchange] == nil:
		return fmt.Errorf("queue %q: a quorum queue needs a dead-letter target (past its delivery limit the broker drops what it cannot dead-letter); set DeadLetter: true", q.Name)
	}
	if q.NativeRetry {
		return q.validateNative()
	}
	return nil
}

// validateNative refuses a NativeRetry queue the broker would not delay
// exactly as its policy says.
func (q Queue) validateNative() error {
	switch {
	case q.Type != Quorum:
		return fmt.Errorf("queue %q: native retry is a quorum queue's (RabbitMQ %s's x-delayed-retry-*); set Type: Quorum, or use the rungs", q.Name, wire.NativeRetryBroker)
	case q.QuorumRungs:
		return fmt.Errorf("queue %q: native retry declares no rungs; drop QuorumRungs", q.Name)
	}
	for k := range q.Arguments {
		if strings.HasPrefix(k, wire.ArgDelayedRetryPrefix) {
			return fmt.Errorf("queue %q: %s in Arguments: native retry sets the x-delayed-retry-* arguments from the policy; remove it", q.Name, k)
		}
	}
	if _, _, err := nativeRetry(q.Retry); err != nil {
		return fmt.Errorf("queue %q: native retry: %w", q.Name, err)
	}
	return nil
}

// checkBroker refuses to declare a NativeRetry queue on a broker before
// 4.3: it would accept x-delayed-retry-* and ignore them, and every failed
// delivery would come back at once, a hot loop.
func checkBroker(t *Topology, version string) error {
	for _, q := range t.Queues {
		if q.NativeRetry && !brokerAtLeast(version, wire.NativeRetryBroker) {
			return fmt.Errorf("queue %q: native retry needs RabbitMQ %s or later; this broker is %q, which ignores x-delayed-retry-* (a failed delivery would come back at once): declare the queue without NativeRetry (rungs), or on %s", q.Name, wire.NativeRetryBroker, version, wire.NativeRetryBroker)
		}
	}
	return nil
}

// rungArguments hold a message for d, then dead-letter it back to q
// through the default exchange.
func (q Queue) rungArguments(d interface{ Milliseconds() int64 }) amqp.Table {
	args := amqp.Table{
		wire.ArgMessageTTL:           d.Milliseconds(),
		wire.ArgDeadLetterExchange:   "",
		wire.ArgDeadLetterRoutingKey: q.Name,
	}
	if q.QuorumRungs {
		args[wire.ArgQueueType] = string(Quorum)
		args[wire.ArgDeadLetterStrategy] = "at-least-once"
		args[wire.ArgOverflow] = "reject-publish"
	}
	return args
}
