package runtime

import (
	"github.com/acemq/acemq-go/runtime/wire"
)

// The suffixes of a queue's dead-letter and parked queues.
const (
	dlqSuffix    = wire.DeadLetterSuffix
	parkedSuffix = wire.ParkedSuffix
)
