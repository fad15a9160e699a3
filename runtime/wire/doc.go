// Package wire is acemq's wire contract: the names the runtime, the
// generator (acemq-gen) and the operator command (acemq) must spell alike,
// and the arithmetic that derives them. A queue q has a dead-letter queue
// q.dlq, a parked queue q.parked and, for the waits its retry policy leaves
// to the broker, rung queues q.retry.<N>s; Owner reads a name back to the
// queue it belongs to. The headers a message carries, the x-arguments of
// the queues the topology declares, the metric names and the rung
// arithmetic are here too, each spelled once.
//
// The package holds names and pure functions only: no connection, no
// state, and it imports nothing but the standard library, so every package
// of the runtime (and the test helpers under it) can import it. Package
// runtime no longer exports these names: a service that reads a header,
// names a dead-letter queue or a metric spells it wire.HeaderID,
// wire.DeadLetterQueue(q), wire.MetricOutcome.
package wire
