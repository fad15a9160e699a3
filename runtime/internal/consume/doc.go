// Package consume is a consumer's engine: the delivery's life from the
// broker to its ack. Package runtime's Consumer wraps it (runtime.Consume
// fills its Config from the ConsumeOptions and the connection); nothing
// here is API, and nothing here imports package runtime: it reaches its
// connection through Conn, an adapter runtime gives it.
//
// One delivery goes through the stages in order, a file each, entering
// each once (TestOneDeliveryVisitsEachStageOnce follows one on the
// broker; each stage's last step calls the next stage's first):
//
//  1. session.go — the subscription on one channel (its serve loop's
//     start; the resubscribe after a lost channel).
//  2. receive.go — the loop takes the delivery from the channel the
//     moment the broker sends it (its tag counted unsettled, its time
//     recorded), has it decoded ahead with one worker, and queues it for
//     the workers.
//  3. decode.go — decoded ahead by that loop (one worker: the next
//     deliveries are decoded while the handler runs), or by the worker
//     that takes it (several); the worker begins its run (in flight,
//     counted, its envelope read, its process span started), takes the
//     decoded value and hands it to its handler. One that cannot be
//     decoded is parked, held for the registry or returned from here.
//  4. handle.go — the handler (inside its middlewares) is called, its
//     answer recorded (the span, messaging.process.duration).
//  5. settle.go — the answer carried out: an Accept is acked in a batch
//     and counted; a Retry, Reject or Park goes to its copy first.
//  6. ackbatch.go — the ack: batched (multiple), behind the copies still
//     in flight (ackslack.go), flushed on a timer, a full batch or Close.
//
// Off that path, when the answer is not Accept: retry.go (a rung,
// rungs.go; the broker's own retry, queuetype.go; a requeue, requeue.go),
// setaside.go (the dead letter or park), each a copy confirmed before the
// original is acked (copybound.go bounds the copies' wait), or hold.go (a
// hold in memory: a retry's wait, the registry's outage); outcome.go
// records those outcomes and logs them. delivery.go is what a delivery in
// flight carries; consumer.go is the consumer itself (Start, Run, Close
// and its drain); framefail.go and cancelled.go are what a lost or
// failing channel does; redelivery.go counts the redeliveries of a
// message that may kill the process.
package consume
