// Package consume is a consumer's engine: the delivery's life from the
// broker to its ack. Package runtime's Consumer wraps it (runtime.Consume
// fills its Config from the ConsumeOptions and the connection); nothing
// here is API, and nothing here imports package runtime: it reaches its
// connection through Conn, an adapter runtime gives it.
//
// One delivery's way, file by file, in the order it goes:
//
//  1. session.go — the subscription on one channel: the serve loop
//     receives the delivery (feed), takes it (its tag counted unsettled)
//     and hands it to a worker; the resubscribe after a lost channel.
//  2. decodeahead.go — with one worker, the loop decodes the next
//     deliveries while the handler runs (at most DecodeAhead).
//  3. delivery.go — the delivery in flight: process begins it (its
//     envelope read, span.go's process span started), runs its route
//     (core.RunRoute: internal/codec's decode, then the handler and its
//     middlewares, internal/core's handler.go) and carries out the answer.
//  4. outcome.go — what became of it, recorded in one place: the span,
//     the metrics (internal/obs), Stats (stats.go) and the log line.
//  5. retry.go, setaside.go, hold.go — when the answer is not Accept: the
//     retry (a rung, rungs.go; the broker's own, queuetype.go; a requeue,
//     requeue.go), the dead letter or park, each a copy confirmed before
//     the original is acked (copybound.go bounds the copies' wait), or a
//     hold in memory (a retry's wait, the registry's outage).
//  6. ackbatch.go — the ack: batched (multiple), behind the copies still
//     in flight (ackslack.go), flushed on a timer, a full batch or Close.
//
// consumer.go is the consumer itself (Start, Run, Close and its drain);
// framefail.go and cancelled.go are what a lost or failing channel does;
// redelivery.go counts the redeliveries of a message that may kill the
// process.
package consume
