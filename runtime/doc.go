// Package runtime is what acemq-gen's generated code calls: a connection to
// RabbitMQ that reconnects, topology declaration, publishing with publisher
// confirms, consumers whose handlers return an Ack, the retry ladder, dead
// letters, parking, and the codecs (text, JSON Schema validated JSON, Avro
// in the Confluent wire format).
//
// It speaks the wire contract shared with the AceMQ sibling libraries in
// Ruby, Java and Python: the same queue names (q.dlq, q.parked,
// q.retry.<N>s), the same headers (x-acemq-id, x-acemq-attempt, …) and the
// same retry arithmetic, so a message can move between services written
// with any of them. docs/design.md in the repository is that contract in
// full: names, headers, reason texts, the retry arithmetic, the rules.
// Package runtime/wire spells its names and derives them (a queue's q.dlq,
// q.parked and rungs, and back), for the runtime, the generator and the
// operator command alike.
//
// # Handlers and acks
//
// A handler returns Accept, Retry(err), Reject(err) or Park(err). Retry
// republishes the message with x-acemq-attempt advanced (never a requeue,
// so the count rides on the message and survives restarts); when no attempt
// is left it goes to q.dlq with "gave up after N attempts: <reason>".
// Reject goes straight to q.dlq, Park to q.parked. A body the codec cannot
// decode never reaches a handler: it is parked with
// "could not be decoded: <why>". A panic is a Retry carrying a
// *PanicError (its reason names the value and the file:line that raised
// it; the stack is logged at Error); an error wrapped with Fatal is a
// Reject wherever it is returned.
//
// # Connecting
//
// Dial waits for a broker that is not there yet, with a capped backoff
// until its ctx is done, and fails at once on what retrying cannot fix
// (ErrAuth, ErrInvalidURL). Its errors are *DialError, which keep their
// cause for errors.Is and errors.As and never show the password. Several
// broker URLs, comma-separated or through WithAddresses, are tried in turn
// on the first dial and on every reconnect.
//
// # Logs
//
// Through WithLogger: one line per outcome that is not Accept (Info for a
// retry, Warn for a dead letter or a park, with queue, type, id, attempt
// and reason), a panic's stack at Error (at most once per 10s per
// consumer), each failed Dial attempt at Warn. Never the body unless
// WithBodyInLogs, never a password.
//
// # Design
//
// Never an ack before the copy is safe. Every retry, dead letter and park is
// a publish to the target queue by name through the default exchange, with
// the mandatory flag and a publisher confirm, and only then an ack of the
// original. A process that dies in between leaves a duplicate, never a
// loss. A copy that is returned (the queue is missing) or refused is
// counted as acemq.set_aside.failed and published again on a timer with
// backoff, the original held unacked meanwhile: nacking it back would spend
// one of a quorum queue's deliveries each time, and past the queue's
// delivery limit the broker dead-letters (or drops) it. Only a hold that
// nears the broker's consumer timeout nacks the original back, once.
//
// Quorum queues: the topology gives each an explicit x-delivery-limit
// (wire.DefaultDeliveryLimit unless told) and a dead-letter target, and no path
// of the runtime puts a delivery back unboundedly; WithRequeueOnFailure
// counts its requeues with the broker's x-delivery-count and dead-letters
// through the runtime after the policy's attempts. What the broker
// dead-letters on its own reads "dead-lettered by the broker: <reason>" in
// Envelope.Error (BrokerDeath).
//
// Waits below the policy's broker threshold (30s by default) are held in
// memory on a timer: the worker is free, only the prefetch slot is spent.
// Waits at or above it go to the rung queue for that delay, whose
// x-message-ttl holds the message and whose dead-letter target brings it
// back; a missing rung is counted as acemq.retry.rung.missing and the wait
// is held in memory instead, as is every wait for it for the next 30
// seconds, without trying the rung (then one wait tries it again, and one
// WARN line counts the waits held meanwhile). Per-message expiration is
// never used: the broker only expires the head of a queue.
//
// Publishing is pipelined on a confirm channel: each publish queues its
// message for the channel's writer and waits only for its own confirm;
// PublishAsync returns a Pending instead of waiting, so one goroutine can
// keep a window of confirms in flight. Consumers ack in batches
// (multiple=true) only below their lowest unsettled delivery. The application's
// publishes and the consumers' copies use two channels of the connection,
// so a publish that makes the broker close one channel cannot fail the
// other's publishes in flight.
// amqp091-go delivers a basic.return before the basic.ack of the same
// message from its single reader goroutine; one goroutine takes both from
// unbuffered channels, so a returned message is always known as such when
// its confirm arrives.
//
// Reconnection uses fresh connections and fresh channels, never
// amqp091-go's Config.Recovery: a recovered channel restarts delivery tags
// at 1, so an ack of a delivery held across the reconnect would ack a
// different message. A consumer resubscribes at once after its session died,
// without waiting for the dead session's handlers, whose settlement is
// discarded; retries held in memory by the dead session are dropped the
// moment it dies. The broker redelivers those messages.
//
// # Outages and alarms
//
// A publish that fails because the broker is down, restarting or cut off
// matches ErrUnavailable: a window, not a state; retry it with backoff.
// While the broker blocks the connection (a memory or disk alarm) publishes
// fail at once with ErrBlocked, which carries the broker's reason. Every call
// that takes a ctx returns by its deadline, Close included: a Close the
// broker does not answer in time closes the socket.
//
// # Schema registries
//
// An Avro type looks writer schemas up in a SchemaRegistry: the connection's
// WithSchemaRegistry, else the type's own (WithSchemaRegistry given to
// NewAvroType, generated from the manifest's registry:), else the process default, a registry.Fingerprint
// whose ids are derived from each schema's canonical form (registry.SchemaID), so
// two services built from the same manifest agree on ids with nothing
// configured. Package runtime/registry's Directory (schema files and an
// index, safe for several processes) and HTTP (a Confluent-compatible
// registry through hamba/avro's client) are for a v1 producer and a v2
// consumer.
// Publish writes x-acemq-schema-fingerprint beside the id; a body whose
// fingerprint is not the registry's schema for its id is parked, never
// decoded with another schema. A registry that does not answer
// (ErrRegistryUnavailable) holds the delivery, counted as
// acemq.registry.unavailable, and decodes it again when the registry is
// back: never parked, and not nacked for ten minutes (each nack spends a
// quorum queue's delivery limit). A body over WithMaxBodySize (1 MiB by
// default) is parked unread.
//
// # Replay
//
// Replay moves dead letters (or parked messages) back: each to its own
// queue (x-acemq-queue, or the queue the broker dead-lettered it from), or
// to a routing key given. It refuses a queue onto itself (ErrReplayLoop);
// a copy restarts at attempt 1 with its error cleared unless asked to keep
// them, keeps its identity and body, and is stamped acemq-replayed-from,
// acemq-replayed-at and acemq-replay-count. A pass reads with basic.get in
// batches, publishes each batch with confirms and then acks it, holds what
// its filter declines unsettled until it ends, and never moves a message
// twice: a copy that comes back while the pass runs is known by its id and
// by the pass's stamp. It prints "moved N, skipped M (drained)", or limit,
// deadline, cancelled.
//
// Close drains: no new deliveries, in-flight handlers finish, held retries
// are republished at once with their attempt advanced, and prefetched
// deliveries that never started go back to the queue.
package runtime
