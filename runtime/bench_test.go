package runtime_test

// Benchmarks against the broker, each printed as a ratio to raw amqp091-go
// doing the same work on one channel in the same run:
//
//	go test -run '^$' -bench Publish ./runtime/
//
// BenchmarkX/raw is the baseline, BenchmarkX/runtime the runtime, whose line
// also carries raw-ns/op and the ratio runtime/raw.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// benchBody is the message both sides publish.
var benchBody = "order A-1 placed for customer C-9: " + strings.Repeat("x", 200)

// benchQueue declares a queue that keeps at most 10000 messages, so a long
// run does not fill the broker: what is left to compare is the client side.
// It is durable, as every queue the library declares: RabbitMQ 4.3 denies
// transient non-exclusive queues by default (deprecated feature
// transient_nonexcl_queues).
func benchQueue(b *testing.B) string {
	q := brokertest.Queue(b, "bench")
	_, ch := brokertest.Raw(b)
	if _, err := ch.QueueDeclare(q, true, false, false, false, amqp.Table{"x-max-length": int32(10000)}); err != nil {
		b.Fatalf("declare %s: %v", q, err)
	}
	return q
}

// rawMessage is what the runtime puts on the wire for benchBody: the same
// properties and envelope headers, a fresh id each time.
func rawMessage() amqp.Publishing {
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	now := time.Now().UTC()
	return amqp.Publishing{
		ContentType:  wire.ContentTypeText,
		Type:         textType.Name(),
		DeliveryMode: amqp.Persistent,
		MessageId:    hex.EncodeToString(id),
		Timestamp:    now,
		Headers: amqp.Table{
			wire.HeaderID:        hex.EncodeToString(id),
			wire.HeaderAttempt:   int64(1),
			wire.HeaderFirstSeen: now.Format("2006-01-02T15:04:05.000Z"),
			wire.HeaderOrigin:    "bench@localhost",
		},
		Body: []byte(benchBody),
	}
}

// publishBench is a publish benchmark's queue, the runtime's connection
// and a raw channel in confirm mode.
func publishBench(b *testing.B) (string, *runtime.Connection, *amqp.Channel) {
	q := benchQueue(b)
	c := dial(b)
	_, ch := brokertest.Raw(b)
	if err := ch.Confirm(false); err != nil {
		b.Fatal(err)
	}
	return q, c, ch
}

// inWindow publishes once an iteration with at most window outcomes
// pending, waiting for the oldest before a new one, and for all at the end.
func inWindow[P any](b *testing.B, window int, publish func() (P, error), wait func(P) error) {
	pending := make([]P, 0, window)
	for b.Loop() {
		if len(pending) == window {
			if err := wait(pending[0]); err != nil {
				b.Fatal(err)
			}
			pending = pending[1:]
		}
		p, err := publish()
		if err != nil {
			b.Fatal(err)
		}
		pending = append(pending, p)
	}
	for _, p := range pending {
		if err := wait(p); err != nil {
			b.Fatal(err)
		}
	}
}

// compare runs the baseline and then the runtime as sub-benchmarks of b, in
// the same run, and reports on the runtime's line the baseline's ns/op and
// the ratio. (testing.Benchmark cannot be called from inside a running
// benchmark: it waits for the lock the running one holds.)
func compare(b *testing.B, perOp int, rt, raw func(b *testing.B)) {
	var rawNs float64
	b.Run("raw", func(b *testing.B) {
		b.ReportAllocs()
		raw(b)
		rawNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(rawNs/float64(perOp), "ns/msg")
		b.ReportMetric(float64(perOp)*1e9/rawNs, "msg/s")
	})
	b.Run("runtime", func(b *testing.B) {
		b.ReportAllocs()
		rt(b)
		ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(ns/float64(perOp), "ns/msg")
		b.ReportMetric(float64(perOp)*1e9/ns, "msg/s")
		if rawNs > 0 {
			b.ReportMetric(rawNs, "raw-ns/op")
			b.ReportMetric(ns/rawNs, "runtime/raw")
		}
	})
}

// BenchmarkPublish: one confirmed publish at a time, runtime.Publish
// against amqp091 publish + wait for its confirm on one channel.
func BenchmarkPublish(b *testing.B) {
	q, c, ch := publishBench(b)
	ctx := context.Background()
	compare(b, 1,
		func(b *testing.B) {
			for b.Loop() {
				if err := runtime.Publish(ctx, c, textType, "", benchBody, runtime.WithRoutingKey(q)); err != nil {
					b.Fatal(err)
				}
			}
		},
		func(b *testing.B) {
			for b.Loop() {
				dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", q, true, false, rawMessage())
				if err != nil {
					b.Fatal(err)
				}
				if !dc.Wait() {
					b.Fatal("nacked")
				}
			}
		})
}

// BenchmarkPublishAll: a batch of 100, pipelined, runtime.PublishBatch against
// amqp091 publishing all 100 and then waiting for every confirm.
func BenchmarkPublishAll(b *testing.B) {
	const batch = 100
	q, c, ch := publishBench(b)
	ctx := context.Background()
	bodies := make([]string, batch)
	for i := range bodies {
		bodies[i] = benchBody
	}
	compare(b, batch,
		func(b *testing.B) {
			for b.Loop() {
				if err := runtime.PublishBatch(ctx, c, textType, "", bodies, runtime.WithRoutingKey(q)); err != nil {
					b.Fatal(err)
				}
			}
		},
		func(b *testing.B) {
			dcs := make([]*amqp.DeferredConfirmation, batch)
			for b.Loop() {
				for i := range dcs {
					dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", q, true, false, rawMessage())
					if err != nil {
						b.Fatal(err)
					}
					dcs[i] = dc
				}
				for _, dc := range dcs {
					if !dc.Wait() {
						b.Fatal("nacked")
					}
				}
			}
		})
}

// BenchmarkPublishAsync: a window of 256, runtime.PublishAsync (the oldest
// Pending waited for once 256 are pending) against amqp091's
// DeferredConfirmation in the same window on one channel: the shape of
// acemqbench's P1-*-async rows, with the text codec, so that what is timed
// is the runtime's publish path and amqp091-go's frames.
func BenchmarkPublishAsync(b *testing.B) {
	const window = 256
	q, c, ch := publishBench(b)
	ctx := context.Background()
	key := runtime.WithRoutingKey(q)
	compare(b, 1,
		func(b *testing.B) {
			inWindow(b, window,
				func() (*runtime.Pending, error) {
					return runtime.PublishAsync(ctx, c, textType, "", benchBody, key)
				},
				func(pd *runtime.Pending) error { return pd.Wait(ctx) })
		},
		func(b *testing.B) {
			inWindow(b, window,
				func() (*amqp.DeferredConfirmation, error) {
					return ch.PublishWithDeferredConfirmWithContext(ctx, "", q, true, false, rawMessage())
				},
				func(dc *amqp.DeferredConfirmation) error {
					if !dc.Wait() {
						return errors.New("nacked")
					}
					return nil
				})
		})
}

// BenchmarkReplay moves 1000 dead letters to their queue per op: the
// runtime's Replay against a raw loop of basic.get, publish with a confirm,
// ack, on one channel. Filling the source is outside the timer.
func BenchmarkReplay(b *testing.B) {
	const perOp = 1000
	c := dial(b)
	q := brokertest.Queue(b, "bench-replay")
	dlq := wire.DeadLetterQueue(q)
	_, ch := brokertest.Raw(b)
	for _, name := range []string{q, dlq} {
		if _, err := ch.QueueDeclare(name, true, false, false, false, nil); err != nil { // durable: see benchQueue
			b.Fatalf("declare %s: %v", name, err)
		}
	}
	refill := func(b *testing.B) {
		b.StopTimer()
		defer b.StartTimer()
		if _, err := ch.QueuePurge(q, false); err != nil {
			b.Fatal(err)
		}
		fill(b, dlq, q, perOp)
	}
	compare(b, perOp, func(b *testing.B) {
		for b.Loop() {
			refill(b)
			res, err := c.Replay(context.Background(), dlq, runtime.ReplayOptions{})
			if err != nil || res.Moved != perOp {
				b.Fatalf("Replay: %v %v", res, err)
			}
		}
	}, func(b *testing.B) {
		if err := ch.Confirm(false); err != nil {
			b.Fatal(err)
		}
		_, get := brokertest.Raw(b)
		for b.Loop() {
			refill(b)
			for {
				d, ok, err := get.Get(dlq, false)
				if err != nil {
					b.Fatal(err)
				}
				if !ok {
					break
				}
				dc, err := ch.PublishWithDeferredConfirm("", q, true, false, amqp.Publishing{
					Headers: d.Headers, ContentType: d.ContentType, Type: d.Type, MessageId: d.MessageId,
					DeliveryMode: amqp.Persistent, Body: d.Body})
				if err != nil || !dc.Wait() {
					b.Fatalf("publish: %v", err)
				}
				if err := d.Ack(false); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
