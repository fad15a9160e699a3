package runtime

import "github.com/acemq/acemq-go/runtime/internal/core"

// Envelope is what the runtime knows about a message besides its payload:
// its identity (x-acemq-id), correlation id, reply_to, type, origin, first
// seen, attempt, last error (x-acemq-error, or the broker's own
// dead-lettering), content type, the queue a dead letter or parked message
// came from, and what a replay wrote.
type Envelope = core.Envelope

// Death is what the broker wrote when it dead-lettered a message on its
// own: past a quorum queue's delivery limit (delivery_limit), a TTL
// (expired), a length limit (maxlen) or a nack without requeue from
// outside the library (rejected).
type Death = core.Death

// BrokerDeath reads the broker's latest dead-lettering from a message's
// headers: x-last-death-* (RabbitMQ 4), else the first entry of x-death
// (the most recent, on 3.10 and 4), else x-first-death-*. ok is false when
// the broker never dead-lettered the message. The runtime drops these
// headers on every republish, so what is left is the broker's own word
// since the library last handled the message. Tools that read or replay
// dead letters use it to say why a message without x-acemq-error is there.
func BrokerDeath(headers map[string]any) (d Death, ok bool) { return core.BrokerDeath(headers) }
