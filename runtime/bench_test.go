package runtime_test

// Benchmarks against the broker, each printed as a ratio to raw amqp091-go
// doing the same work on one channel in the same run:
//
//	go test -run '^$' -bench Publish ./runtime/
//
// ns/op is the runtime's; raw-ns/op the baseline's; runtime/raw the ratio.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/internal/brokertest"
	"github.com/acemq/acemq-go/runtime"
	amqp "github.com/rabbitmq/amqp091-go"
)

// benchBody is the message both sides publish.
var benchBody = "order A-1 placed for customer C-9: " + strings.Repeat("x", 200)

// benchQueue declares a queue that keeps at most 10000 messages, so a long
// run does not fill the broker.
func benchQueue(b *testing.B) string {
	q := brokertest.Queue(b, "bench")
	rawQueue(b, q, amqp.Table{"x-max-length": int32(10000)})
	return q
}

// rawMessage is what the runtime puts on the wire for benchBody: the same
// properties and envelope headers, a fresh id each time.
func rawMessage() amqp.Publishing {
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	now := time.Now().UTC()
	return amqp.Publishing{
		ContentType:  runtime.ContentTypeText,
		Type:         textType.Name(),
		DeliveryMode: amqp.Persistent,
		MessageId:    hex.EncodeToString(id),
		Timestamp:    now,
		Headers: amqp.Table{
			runtime.HeaderID:        hex.EncodeToString(id),
			runtime.HeaderAttempt:   int64(1),
			runtime.HeaderFirstSeen: now.Format("2006-01-02T15:04:05.000Z"),
			runtime.HeaderOrigin:    "bench@localhost",
		},
		Body: []byte(benchBody),
	}
}

// compare runs the runtime's and the baseline's benchmarks once, in the same
// run, and reports both and their ratio on b.
func compare(b *testing.B, once *sync.Once, results *[2]testing.BenchmarkResult, perOp int,
	rt, raw func(b *testing.B)) {
	once.Do(func() {
		results[0] = testing.Benchmark(rt)
		results[1] = testing.Benchmark(raw)
	})
	r, w := results[0], results[1]
	if r.N == 0 || w.N == 0 {
		b.Fatalf("a side failed: runtime %d ops, raw %d ops", r.N, w.N)
	}
	b.ReportMetric(float64(r.NsPerOp())/float64(perOp), "ns/msg")
	b.ReportMetric(float64(r.NsPerOp()), "ns/op")
	b.ReportMetric(float64(w.NsPerOp()), "raw-ns/op")
	b.ReportMetric(float64(r.NsPerOp())/float64(w.NsPerOp()), "runtime/raw")
	b.ReportMetric(float64(r.AllocedBytesPerOp()), "B/op")
	b.ReportMetric(float64(r.AllocsPerOp()), "allocs/op")
}

var (
	publishOnce    sync.Once
	publishResults [2]testing.BenchmarkResult
)

// BenchmarkPublish: one confirmed publish at a time, runtime.Publish
// against amqp091 publish + wait for its confirm on one channel.
func BenchmarkPublish(b *testing.B) {
	q := benchQueue(b)
	c := dial(b)
	_, ch := brokertest.Raw(b)
	if err := ch.Confirm(false); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	compare(b, &publishOnce, &publishResults, 1,
		func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := runtime.Publish(ctx, c, textType, "", benchBody, runtime.WithRoutingKey(q)); err != nil {
					b.Fatal(err)
				}
			}
		},
		func(b *testing.B) {
			b.ReportAllocs()
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

var (
	publishAllOnce    sync.Once
	publishAllResults [2]testing.BenchmarkResult
)

// BenchmarkPublishAll: a batch of 100, pipelined, runtime.PublishAll against
// amqp091 publishing all 100 and then waiting for every confirm.
func BenchmarkPublishAll(b *testing.B) {
	const batch = 100
	q := benchQueue(b)
	c := dial(b)
	_, ch := brokertest.Raw(b)
	if err := ch.Confirm(false); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	bodies := make([]string, batch)
	for i := range bodies {
		bodies[i] = benchBody
	}
	compare(b, &publishAllOnce, &publishAllResults, batch,
		func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := runtime.PublishAll(ctx, c, textType, "", bodies, runtime.WithRoutingKey(q)); err != nil {
					b.Fatal(err)
				}
			}
		},
		func(b *testing.B) {
			b.ReportAllocs()
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
