package runtime

import (
	"time"

	"github.com/acemq/acemq-go/runtime/internal/core"
)

// QueueType is a queue's x-queue-type.
type QueueType string

const (
	Classic QueueType = "classic"
	Quorum  QueueType = "quorum"
)

// Exchange is an exchange the topology declares (durable).
type Exchange struct {
	Name      string
	Kind      string // direct, topic, fanout or headers
	Arguments map[string]any
}

// Queue is an application queue the topology declares, with its dead-letter
// queue, parked queue and retry rungs.
type Queue struct {
	Name string
	// Type is classic (the default, when empty) or quorum.
	Type QueueType
	// DeadLetter adds x-dead-letter-exchange: acemq.dlx and
	// x-dead-letter-routing-key: <name>.dlq, so that what the broker
	// dead-letters on its own lands beside the library's dead letters.
	// A quorum queue must have it (or its own x-dead-letter-exchange in
	// Arguments): past its delivery limit the broker drops a message it
	// has nowhere to send, so Declare refuses one without.
	DeadLetter bool
	// DeliveryLimit is a quorum queue's x-delivery-limit: how many times
	// the broker hands a message back (nack with requeue, a channel or
	// consumer closed with it unacked) before it dead-letters it. Zero is
	// 50, wire.DefaultDeliveryLimit; a classic queue has no delivery count and
	// refuses a limit. Never -1: RabbitMQ 4 reads it as unlimited, 3.10 as
	// "drop after the first delivery".
	DeliveryLimit int
	// Retry is the policy whose rungs get rung queues (wire.Rungs): the
	// waits the broker holds, and the spill rungs a consumer sends short
	// waits to once its hold budget is full.
	Retry RetryPolicy
	// QuorumRungs declares the rungs as quorum queues with
	// x-dead-letter-strategy: at-least-once and x-overflow: reject-publish.
	QuorumRungs bool
	// NativeRetry has the quorum queue itself hold a failed delivery for
	// its wait (RabbitMQ 4.3's x-delayed-retry-type: failed, with
	// x-delayed-retry-min and -max from wire.NativeRetry of Retry's schedule) instead of rung
	// queues: none are declared. Its consumers must requeue their failures
	// (ConsumerSpec.RequeueOnFailure), each requeue an attempt counted by
	// the broker's x-delivery-count; a lost connection counts as one too,
	// and waits. Declare refuses it on a classic queue, with QuorumRungs,
	// for a policy the broker cannot give exactly (jitter, an exponential
	// ladder: see wire.NativeRetry) and on a broker before 4.3,
	// which would ignore the arguments and requeue at once.
	NativeRetry bool
	// Arguments are extra x-arguments for the queue itself.
	Arguments map[string]any
}

// Binding binds a queue to an exchange.
type Binding struct {
	Queue      string
	Exchange   string
	RoutingKey string
	Arguments  map[string]any
	// ToExchange, in Declarations.ExchangeBindings, is the destination
	// exchange of an exchange-to-exchange binding (Queue is then empty).
	ToExchange string
}

// Topology is the exchanges, queues and bindings a service needs. Build one
// with NewTopology and its chained methods, or as a literal; declare it with
// (*Connection).Declare. Generated code returns one from Topology().
type Topology struct {
	Exchanges []Exchange
	Queues    []Queue
	Bindings  []Binding
	// Delay, when set, declares the delay topology too, its levels'
	// queues of this type: classic, whose dead-lettering is at-most-once,
	// or quorum, with x-dead-letter-strategy: at-least-once and
	// x-overflow: reject-publish (docs/design.md, "Delayed delivery"). WithDelay
	// publishes into it.
	Delay QueueType
	// DelayPrefix names the delay topology: "" is wire.DelayPrefix,
	// acemq.delay; another ends in .delay. A Connection that declared a
	// topology with Delay set publishes WithDelay into its prefix.
	DelayPrefix string
}

// NewTopology returns an empty topology.
func NewTopology() *Topology { return &Topology{} }

// Exchange adds a durable exchange of the given kind.
func (t *Topology) Exchange(name, kind string) *Topology {
	t.Exchanges = append(t.Exchanges, Exchange{Name: name, Kind: kind})
	return t
}

// Queue adds a queue with its dead-letter queue, parked queue and rungs.
func (t *Topology) Queue(q Queue) *Topology {
	t.Queues = append(t.Queues, q)
	return t
}

// Bind binds queue to exchange with routingKey.
func (t *Topology) Bind(queue, exchange, routingKey string) *Topology {
	t.Bindings = append(t.Bindings, Binding{Queue: queue, Exchange: exchange, RoutingKey: routingKey})
	return t
}

// rungs of q, as declared.
func (q Queue) rungs() []time.Duration {
	if q.NativeRetry {
		return nil
	}
	return core.Rungs(q.Retry)
}
