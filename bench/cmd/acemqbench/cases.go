package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acemq/acemq-go/bench/orders"
	"github.com/acemq/acemq-go/runtime"
)

// runFunc does one side of a case for n messages and returns how long the
// part that counts took and how many messages it counted.
type runFunc func(ctx context.Context, e *env, n int) (time.Duration, int, error)

// benchCase is one row of the table: A / B, and the target A/B must reach
// (0: none, the row is for reading).
type benchCase struct {
	name         string
	aName, bName string
	a, b         runFunc
	target       float64
	// aDiv and bDiv divide --n for a slow side (wait-each, watermill), so a
	// run stays short; the throughput is per message either way.
	aDiv, bDiv int
	// mul multiplies --n for both sides of a case that must run long
	// enough to reach its steady state (R1: many times the hold time).
	mul int
	// format is the body the case carries: "json" or "avro".
	format string
	// pg: the case needs PostgreSQL (--pg).
	pg bool
}

func (c benchCase) scale(n int, a bool) int {
	if c.mul > 1 {
		n *= c.mul
	}
	d := c.bDiv
	if a {
		d = c.aDiv
	}
	if d > 1 {
		n /= d
	}
	return max(n, 1)
}

// cases are every case of issues 14 and 23 that the harness runs. The
// targets are issue 23's table where it sets one, with issue 38's two
// restated as relatives (R1 against R1-safe-raw, C1-json against
// C1-json-decoding-raw: what a client that keeps rule 1, or decodes, can
// reach); docs/performance.md lists them. "jsonref" rows are the runtime
// alone (no generated code: the reference validator), "quorum" rows the
// quorum queues, for reading beside the classic ones (no target yet).
func cases() []benchCase {
	const pub256, raw256 = "Publish, 256 goroutines", "raw, confirm window 256"
	const async256, consume = "PublishAsync, window 256", "Consume+decode+ack, prefetch 256"
	const rawConsume64, rawAckEach = "raw, prefetch 256, multiple acks", "raw, prefetch 256, ack each"
	const raw32 = "raw, 32 goroutines, each waits its confirm"
	return []benchCase{
		{name: "P1-avro", format: "avro", target: 0.85,
			aName: pub256, a: landsIn(queueOf("avro"), typedPublish("avro", 256)),
			bName: raw256, b: landsIn(queueOf("avro"), rawPublishWindow("avro", 256))},
		{name: "P1-json", format: "json", target: 0.85,
			aName: pub256, a: landsIn(queueOf("json"), typedPublish("json", 256)),
			bName: raw256, b: landsIn(queueOf("json"), rawPublishWindow("json", 256))},
		{name: "P1-jsonref", format: formatJSONRef,
			aName: pub256 + " (runtime only)", a: landsIn(queueOf("json"), typedPublish(formatJSONRef, 256)),
			bName: raw256, b: landsIn(queueOf("json"), rawPublishWindow("json", 256))},
		{name: "P1-avro-all", format: "avro", target: 0.90,
			aName: "PublishBatch(256)", a: landsIn(queueOf("avro"), typedPublishAll("avro", 256)),
			bName: raw256, b: landsIn(queueOf("avro"), rawPublishWindow("avro", 256))},
		// P1-batch-raw is P1-avro-all's ceiling: raw amqp091-go in
		// batches of 256, each waited for in full before the next (the
		// window never empties, a batch does).
		{name: "P1-batch-raw", format: "avro",
			aName: "raw, batches of 256", a: landsIn(queueOf("avro"), rawPublishBatches("avro", 256)),
			bName: raw256, b: landsIn(queueOf("avro"), rawPublishWindow("avro", 256))},
		{name: "P1-json-all", format: "json", target: 0.80,
			aName: "PublishBatch(256)", a: landsIn(queueOf("json"), typedPublishAll("json", 256)),
			bName: raw256, b: landsIn(queueOf("json"), rawPublishWindow("json", 256))},
		{name: "P1-avro-async", format: "avro", target: 0.95,
			aName: async256, a: landsIn(queueOf("avro"), typedPublishAsync("avro", 256)),
			bName: raw256, b: landsIn(queueOf("avro"), rawPublishWindow("avro", 256))},
		{name: "P1-json-async", format: "json", target: 0.90,
			aName: async256, a: landsIn(queueOf("json"), typedPublishAsync("json", 256)),
			bName: raw256, b: landsIn(queueOf("json"), rawPublishWindow("json", 256))},
		{name: "P1-jsonref-async", format: formatJSONRef, target: 0.80,
			aName: async256 + " (runtime only)", a: landsIn(queueOf("json"), typedPublishAsync(formatJSONRef, 256)),
			bName: raw256, b: landsIn(queueOf("json"), rawPublishWindow("json", 256))},
		// P2 measures what pipelining the confirms buys, so its typed
		// side is Avro (the codec P1 shows costs least); P2-json is the
		// same with the JSON codec's cost in it.
		{name: "P2", format: "avro", target: 10, bDiv: 5,
			aName: "Publish, 32 goroutines", a: landsIn(queueOf("avro"), typedPublish("avro", 32)),
			bName: "raw, wait each confirm", b: landsIn(queueOf("avro"), rawPublishWaitEach("avro"))},
		{name: "P2-json", format: "json", bDiv: 5,
			aName: "Publish, 32 goroutines", a: landsIn(queueOf("json"), typedPublish("json", 32)),
			bName: "raw, wait each confirm", b: landsIn(queueOf("json"), rawPublishWaitEach("json"))},
		// P2-raw is P2's ceiling: raw amqp091-go in the typed side's
		// place, 32 goroutines on one confirm channel, each waiting for
		// its own confirm (at most 32 in flight where a window keeps 256).
		{name: "P2-raw", format: "avro", bDiv: 5,
			aName: raw32, a: landsIn(queueOf("avro"), rawPublishCallers("avro", 32)),
			bName: "raw, wait each confirm", b: landsIn(queueOf("avro"), rawPublishWaitEach("avro"))},
		// P32: the library's own cost with 32 synchronous callers, read
		// directly (no watermill or wait-each side in the ratio): the
		// generated Publish from 32 goroutines against raw amqp091-go
		// from 32 goroutines, each waiting for its own confirm. The 0.90
		// is the one X1-publish-of-raw32 has.
		{name: "P32-avro", format: "avro", target: 0.90,
			aName: "Publish, 32 goroutines", a: landsIn(queueOf("avro"), typedPublish("avro", 32)),
			bName: raw32, b: landsIn(queueOf("avro"), rawPublishCallers("avro", 32))},
		{name: "P32-json", format: "json", target: 0.90,
			aName: "Publish, 32 goroutines", a: landsIn(queueOf("json"), typedPublish("json", 32)),
			bName: raw32, b: landsIn(queueOf("json"), rawPublishCallers("json", 32))},
		{name: "C1-avro", format: "avro", target: 0.90,
			aName: consume, a: typedConsume("avro"),
			bName: rawConsume64, b: rawConsume("avro")},
		// The -ackeach rows: the same typed side against a raw consumer
		// that acks each delivery on its own (issue 23: "hold").
		{name: "C1-avro-ackeach", format: "avro", target: 1.00,
			aName: consume, a: typedConsume("avro"),
			bName: rawAckEach, b: rawConsumeAcking("avro", 1)},
		// M1: three no-op middlewares (runtime.WithMiddleware) around the
		// same typed consumer cost less than 2% of its throughput.
		// O1: pgstore's relay publishing the outbox's rows with confirms
		// (and deleting each after its confirm) against the same rows
		// relayed by hand: pgx reads 500, amqp091-go publishes them with
		// a confirm window of 256, pgx deletes them.
		{name: "O1-avro", format: "avro", target: 0.60, pg: true,
			aName: "pgstore.Relay, batch 500", a: landsIn(queueOf("avro"), relayRows("avro")),
			bName: "raw: pgx + confirm window 256", b: landsIn(queueOf("avro"), rawRelayRows("avro", 256))},
		{name: "O1-json", format: "json", target: 0.60, pg: true,
			aName: "pgstore.Relay, batch 500", a: landsIn(queueOf("json"), relayRows("json")),
			bName: "raw: pgx + confirm window 256", b: landsIn(queueOf("json"), rawRelayRows("json", 256))},
		// I1: handled msg/s with pgstore's inbox (the generated inbox:
		// queue, its handler taking the pgx.Tx) against the same SQL
		// written by hand with pgx in the handler (inbox.go).
		{name: "I1", format: "avro", target: 0.90, pg: true,
			aName: "generated inbox: queue, concurrency 8", a: inboxConsume(false),
			bName: "by hand: pgx tx in the handler", b: inboxConsume(true)},
		{name: "M1", format: "avro", target: 0.98,
			aName: "Consume, 3 no-op middlewares", a: typedConsume("avro", noopMiddlewares(3)...),
			bName: "Consume, no middleware", b: typedConsume("avro")},
		// C1-json's target is relative: C1-json-of-decoding-raw
		// (relatives), the raw consumer that decodes too.
		{name: "C1-json", format: "json",
			aName: consume, a: typedConsume("json"),
			bName: rawConsume64, b: rawConsume("json")},
		// C1-json-decoding-raw is what decoding costs a raw client: the
		// raw consumer of C1-json unmarshalling each body (encoding/json,
		// no check) against itself without; C1-json-of-decoding-raw
		// (relatives) is the typed consumer against the decoding one.
		{name: "C1-json-decoding-raw", format: "json",
			aName: "raw, json.Unmarshal each, multiple acks", a: rawConsumeDecoding(),
			bName: rawConsume64, b: rawConsume("json")},
		{name: "C1-json-ackeach", format: "json", target: 0.90,
			aName: consume, a: typedConsume("json"),
			bName: rawAckEach, b: rawConsumeAcking("json", 1)},
		{name: "C1-jsonref", format: formatJSONRef,
			aName: consume + " (runtime only)", a: typedConsume(formatJSONRef),
			bName: rawConsume64, b: rawConsume("json")},
		// R1 runs 10×n messages a side: its held retries starve the
		// prefetch only once a run lasts several hold times (500ms). Its
		// target is relative: R1-of-safe-raw (relatives).
		{name: "R1", format: "avro", mul: 10,
			aName: "healthy msg/s, 10% failing", a: typedRetrying(10),
			bName: "no failures", b: typedRetrying(0)},
		// R1-raw bounds R1 on the broker at hand: the same retries done
		// by hand with the least broker work (and unsafely), so its ratio
		// is the most any library can reach on this broker.
		{name: "R1-raw", format: "avro", mul: 10,
			aName: "raw, healthy msg/s, 10% failing", a: rawRetrying(10),
			bName: "raw, no failures", b: rawRetrying(0)},
		// R1-safe-raw is R1-raw under rule 1 (no original acked before
		// its copy's confirm, the runtime's ack slack of 64): the bound on
		// R1 for a library that keeps the contract.
		{name: "R1-safe-raw", format: "avro", mul: 10,
			aName: "raw, copies confirmed first, 10% failing", a: rawRetryingSafe(10),
			bName: "raw, no failures", b: rawRetrying(0)},
		// A1 shows what a delivery held unacked costs the broker: the
		// same single acks, with 256 deliveries held unacked below them
		// and with none.
		{name: "A1", format: "avro",
			aName: "raw, ack each, 256 held unacked", a: rawConsumeHolding("avro", 256),
			bName: "raw, ack each, none held", b: rawConsumeHolding("avro", 0)},
		// The quorum rows: P1, C1 and R1 on quorum queues (bench.q.avro,
		// bench.q.r1 with quorum rungs), the typed side through the
		// runtime with the generated Avro type.
		{name: "P1-quorum", format: formatAvroQuorum,
			aName: pub256, a: landsIn(queueQAvro, typedPublish(formatAvroQuorum, 256)),
			bName: raw256, b: landsIn(queueQAvro, rawPublishWindow(formatAvroQuorum, 256))},
		{name: "P1-quorum-async", format: formatAvroQuorum,
			aName: async256, a: landsIn(queueQAvro, typedPublishAsync(formatAvroQuorum, 256)),
			bName: raw256, b: landsIn(queueQAvro, rawPublishWindow(formatAvroQuorum, 256))},
		{name: "C1-quorum", format: formatAvroQuorum,
			aName: consume, a: typedConsume(formatAvroQuorum),
			bName: rawConsume64, b: rawConsume(formatAvroQuorum)},
		{name: "R1-quorum", format: formatAvroQuorum, mul: 10,
			aName: "healthy msg/s, 10% failing", a: typedRetryingOn(true, 10),
			bName: "no failures", b: typedRetryingOn(true, 0)},
		// RR1 (issue 21): request/reply round trips over direct reply-to,
		// the generated requester against one done by hand, both
		// answered by the same raw responder (request.go); 1 and 64
		// requests in flight. RR1-1 runs a fifth of --n (one at a time).
		{name: "RR1-1", format: "json", target: 0.90, aDiv: 5, bDiv: 5,
			aName: "RequestPriceOrder, 1 in flight", a: typedRequests(1),
			bName: "raw direct reply-to, 1 in flight", b: rawRequests(1)},
		{name: "RR1-64", format: "json", target: 0.90,
			aName: "RequestPriceOrder, 64 in flight", a: typedRequests(64),
			bName: "raw direct reply-to, 64 in flight", b: rawRequests(64)},
		{name: "X1-publish", format: "json", bDiv: 5,
			aName: "Publish, 32 goroutines", a: landsIn(queueOf("json"), typedPublish("json", 32)),
			bName: "watermill, ConfirmDelivery, 32 goroutines", b: landsIn(queueWatermill, watermillPublish(true, 32))},
		{name: "X1-publish-noconfirm", format: "json", bDiv: 1,
			aName: "Publish, 32 goroutines", a: landsIn(queueOf("json"), typedPublish("json", 32)),
			bName: "watermill, no confirms, 32 goroutines", b: landsIn(queueWatermill, watermillPublish(false, 32))},
		{name: "X1-consume", format: "json", target: 1.20,
			aName: consume, a: typedConsume("json"),
			bName: "watermill, PrefetchCount 256", b: watermillConsume(256)},
		{name: "X1-publish-async", format: "json", bDiv: 5,
			aName: async256, a: landsIn(queueOf("json"), typedPublishAsync("json", 256)),
			bName: "watermill, ConfirmDelivery, 32 goroutines", b: landsIn(queueWatermill, watermillPublish(true, 32))},
		// X1-publish-raw and X1-consume-raw are X1's ceilings on the
		// machine at hand: raw amqp091-go against watermill, so no
		// library over amqp091-go can do better than their ratio.
		{name: "X1-publish-raw", format: "json", bDiv: 5,
			aName: raw256, a: landsIn(queueOf("json"), rawPublishWindow("json", 256)),
			bName: "watermill, ConfirmDelivery, 32 goroutines", b: landsIn(queueWatermill, watermillPublish(true, 32))},
		// X1-publish-raw32 is X1-publish's ceiling with 32 synchronous
		// callers: raw amqp091-go, 32 goroutines each waiting for its
		// own confirm on one channel, against the same watermill side.
		{name: "X1-publish-raw32", format: "json", bDiv: 5,
			aName: raw32, a: landsIn(queueOf("json"), rawPublishCallers("json", 32)),
			bName: "watermill, ConfirmDelivery, 32 goroutines", b: landsIn(queueWatermill, watermillPublish(true, 32))},
		{name: "X1-consume-raw", format: "json",
			aName: rawConsume64, a: rawConsume("json"),
			bName: "watermill, PrefetchCount 256", b: watermillConsume(256)},
	}
}

// relative is a target on the ratio of two cases' median ratios, judged
// when both cases ran in the same run; without a target it is printed for
// reading, with its note.
type relative struct {
	name, of, over string
	target         float64
	note           string // why a relative without a target is printed
}

func relatives() []relative {
	return []relative{
		// R1's target (issue 38 item 7, issue 23's argument accepted):
		// R1 against the same retries done by hand under rule 1 (no
		// original acked before its copy's confirm), the bound for any
		// client that keeps the contract. What is left is the runtime's
		// own.
		{name: "R1-of-safe-raw", of: "R1", over: "R1-safe-raw", target: 1.00},
		// R1 against the retries done by hand without rule 1: issue 23's
		// "0.90 of R1-raw", which no client keeping rule 1 reaches (the
		// copy's confirm, a disk sync, decides its original's ack).
		{name: "R1-of-raw", of: "R1", over: "R1-raw", note: "R1-raw does not keep rule 1"},
		// C1-json's target: against a raw consumer that decodes too.
		{name: "C1-json-of-decoding-raw", of: "C1-json", over: "C1-json-decoding-raw", target: 0.95},
		{name: "X1-publish-of-raw", of: "X1-publish", over: "X1-publish-raw", target: 0.90},
		// X1-publish against its ceiling with 32 synchronous callers
		// (X1-publish-raw32): the target where 32 callers cannot reach a
		// window of 256.
		{name: "X1-publish-of-raw32", of: "X1-publish", over: "X1-publish-raw32", target: 0.90},
		// PublishBatch(256) against its ceiling, raw batches of 256: what
		// is left is the library's own (the encoding of a batch before it
		// is sent included).
		{name: "P1-avro-all-of-raw", of: "P1-avro-all", over: "P1-batch-raw", target: 0.90},
	}
}

// landsIn checks, after f, that every message f counted is in queue q,
// and no more, so a side that drops messages cannot look fast.
func landsIn(q string, f runFunc) runFunc {
	return func(ctx context.Context, e *env, n int) (time.Duration, int, error) {
		d, counted, err := f(ctx, e, n)
		if err != nil {
			return 0, 0, err
		}
		// A publish without confirms returns before the broker has
		// enqueued: give it 10s to catch up (not timed).
		deadline := time.Now().Add(10 * time.Second)
		for {
			st, err := e.ch.QueueDeclarePassive(q, true, false, false, false, nil)
			if err != nil {
				return 0, 0, fmt.Errorf("count %s: %w", q, err)
			}
			if st.Messages == counted {
				return d, counted, nil
			}
			if st.Messages > counted || time.Now().After(deadline) {
				return 0, 0, fmt.Errorf("published %d messages, %s holds %d", counted, q, st.Messages)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// typedPublish publishes n messages with the generated publisher from g
// goroutines, each waiting for its confirm.
func typedPublish(format string, g int) runFunc {
	return func(ctx context.Context, e *env, n int) (time.Duration, int, error) {
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, g)
		start := e.clockStart()
		for range g {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= int64(n) {
					if err := e.publishOne(ctx, format); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		d := time.Since(start)
		close(errs)
		if err := <-errs; err != nil {
			return 0, 0, err
		}
		return d, n, nil
	}
}

// typedPublishAsync publishes n messages from one goroutine with the
// generated publisher's async method, at most window pending confirms, the
// oldest waited for first: the raw window's shape with the typed API.
func typedPublishAsync(format string, window int) runFunc {
	return func(ctx context.Context, e *env, n int) (time.Duration, int, error) {
		pending := make([]*runtime.Pending, 0, window)
		start := e.clockStart()
		for range n {
			if len(pending) == window {
				if err := pending[0].Wait(ctx); err != nil {
					return 0, 0, err
				}
				pending = pending[1:]
			}
			pd, err := e.publishAsyncOne(ctx, format)
			if err != nil {
				return 0, 0, err
			}
			pending = append(pending, pd)
		}
		for _, pd := range pending {
			if err := pd.Wait(ctx); err != nil {
				return 0, 0, err
			}
		}
		return time.Since(start), n, nil
	}
}

// typedPublishAll publishes n messages with the generated publisher's
// batch method (the runtime's PublishBatch for the runtime-only formats),
// batch messages a call.
func typedPublishAll(format string, batch int) runFunc {
	return func(ctx context.Context, e *env, n int) (time.Duration, int, error) {
		start := e.clockStart()
		for done := 0; done < n; done += batch {
			if err := e.publishBatch(ctx, format, min(batch, n-done)); err != nil {
				return 0, 0, err
			}
		}
		return time.Since(start), n, nil
	}
}

// typedConsume fills the format's queue with n messages (not timed), then
// times the generated consumer (prefetch 256, concurrency 1, and mws)
// decoding and acking all of them.
func typedConsume(format string, mws ...runtime.Middleware) runFunc {
	return func(ctx context.Context, e *env, n int) (time.Duration, int, error) {
		q := e.queueOf(format)
		if err := e.fill(ctx, format, n); err != nil {
			return 0, 0, err
		}
		h := &countingHandler{n: int64(n), done: make(chan struct{})}
		start := e.clockStart()
		c, err := e.consume(ctx, format, h, mws...)
		if err != nil {
			return 0, 0, err
		}
		defer func() { _ = c.Close(context.Background()) }()
		select {
		case <-h.done:
		case <-ctx.Done():
			return 0, 0, fmt.Errorf("consume %s: %d of %d handled: %w", q, h.seen.Load(), n, ctx.Err())
		}
		return time.Since(start), n, nil
	}
}

// noopMiddlewares are k middlewares that call next and return its Ack.
func noopMiddlewares(k int) []runtime.Middleware {
	mws := make([]runtime.Middleware, k)
	for i := range mws {
		mws[i] = func(next runtime.HandlerFunc) runtime.HandlerFunc {
			return func(ctx context.Context, m *runtime.Incoming) runtime.Ack { return next(ctx, m) }
		}
	}
	return mws
}

// countingHandler accepts every message and closes done at the n-th. It
// serves the JSON, the Avro and the R1 queue.
type countingHandler struct {
	n       int64
	seen    atomic.Int64
	done    chan struct{}
	once    sync.Once
	failPct int // R1: this percentage of messages fail their first two attempts
	healthy atomic.Int64
}

func (h *countingHandler) count() {
	if h.seen.Add(1) == h.n {
		h.once.Do(func() { close(h.done) })
	}
}

func (h *countingHandler) HandleOrderJSON(_ context.Context, _ *runtime.Message[orders.OrderJSON]) runtime.Ack {
	h.count()
	return runtime.Accept()
}

func (h *countingHandler) HandleOrderAvro(_ context.Context, m *runtime.Message[orders.OrderAvro]) runtime.Ack {
	if h.failPct > 0 && m.Payload.Note == failNote && m.Envelope.Attempt < 3 {
		return runtime.Retry(errFailing)
	}
	if m.Payload.Note != failNote {
		h.count()
	}
	return runtime.Accept()
}

const failNote = "fail"

var errFailing = fmt.Errorf("bench: this message fails its first two attempts")

// typedRetrying fills the R1 queue with n messages of which failPct percent
// fail twice (waiting 500ms in memory, then 1s in the broker's rung, R1Policy)
// and times the healthy ones: the throughput is healthy messages handled per
// second until the last healthy one.
func typedRetrying(failPct int) runFunc { return typedRetryingOn(false, failPct) }

// typedRetryingOn is typedRetrying on the quorum queue bench.q.r1 with
// quorum.
func typedRetryingOn(quorum bool, failPct int) runFunc {
	type consumeFunc func(context.Context, *runtime.Connection, *countingHandler, ...runtime.ConsumeOption) (*runtime.Consumer, error)
	key, q := "r1", queueR1
	consume := consumeFunc(func(ctx context.Context, c *runtime.Connection, h *countingHandler, o ...runtime.ConsumeOption) (*runtime.Consumer, error) {
		return orders.ConsumeBenchR1(ctx, c, h, o...)
	})
	if quorum {
		key, q = "qr1", queueQR1
		consume = func(ctx context.Context, c *runtime.Connection, h *countingHandler, o ...runtime.ConsumeOption) (*runtime.Consumer, error) {
			return orders.ConsumeBenchQR1(ctx, c, h, o...)
		}
	}
	return func(ctx context.Context, e *env, n int) (time.Duration, int, error) {
		failing := 0
		msgs := make([]orders.OrderAvro, n)
		for i := range msgs {
			msgs[i] = e.avroValue
			if failPct > 0 && i%(100/failPct) == 0 {
				msgs[i].Note = failNote
				failing++
			}
		}
		for i := 0; i < n; i += 256 {
			if err := runtime.PublishBatch(ctx, e.conn, orders.TypeOfOrderAvro(), "bench", msgs[i:min(i+256, n)], runtime.WithRoutingKey(key)); err != nil {
				return 0, 0, err
			}
		}
		healthy := n - failing
		h := &countingHandler{n: int64(healthy), done: make(chan struct{}), failPct: failPct}
		start := e.clockStart()
		opts := []runtime.ConsumeOption{runtime.WithPrefetch(256)}
		if e.holdBudget >= 0 {
			opts = append(opts, runtime.WithHoldBudget(e.holdBudget))
		}
		if e.ackSlack >= 0 {
			opts = append(opts, runtime.WithAckSlack(e.ackSlack))
		}
		c, err := consume(ctx, e.conn, h, opts...)
		if err != nil {
			return 0, 0, err
		}
		defer func() {
			cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = c.Close(cctx)
		}()
		select {
		case <-h.done:
		case <-ctx.Done():
			return 0, 0, fmt.Errorf("consume %s: %d of %d healthy handled: %w", q, h.seen.Load(), healthy, ctx.Err())
		}
		return time.Since(start), healthy, nil
	}
}
