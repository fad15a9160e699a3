package runtime

import (
	"github.com/acemq/acemq-go/runtime/wire"
	"time"
)

// Names of the exchanges the topology declares for every queue.
const (
	// DeadLetterExchange routes the broker's own dead-lettering (TTL,
	// length limits, rejections from outside this library) to q.dlq.
	DeadLetterExchange = wire.DeadLetterExchange
	// RetryExchange binds every rung queue under its own name, for tools.
	RetryExchange = wire.RetryExchange
)

// The suffixes of a queue's dead-letter and parked queues.
const (
	dlqSuffix    = wire.DeadLetterSuffix
	parkedSuffix = wire.ParkedSuffix
)

// DeadLetterQueue is the name of q's dead-letter queue, q.dlq.
func DeadLetterQueue(q string) string { return wire.DeadLetterQueue(q) }

// ParkedQueue is the name of q's parked queue, q.parked.
func ParkedQueue(q string) string { return wire.ParkedQueue(q) }

// RungQueue is the name of q's rung for a broker wait of d, q.retry.<N>s
// with N the whole seconds of d.
func RungQueue(q string, d time.Duration) string { return wire.RungQueue(q, d) }
