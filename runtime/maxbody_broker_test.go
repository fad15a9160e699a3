package runtime_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	acemq "github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

type bigDoc struct {
	Pad string `json:"pad"`
}

// Five 8 MiB bodies against the default 1 MiB limit: each is parked unread
// with the reason, the handler never runs, the heap stays within a few
// bodies (prefetch 1: the live heap, /gc/heap/live), and what the process allocates per message is what
// amqp091 costs to receive it (measured in the same run by getting the
// same bodies with plain amqp091) plus at most two bodies for the copy to
// q.parked — nothing for decoding. Not parallel: it measures the heap of the
// whole test binary.
func TestConsumerMaxBodySizeParksUnreadWithBoundedMemory(t *testing.T) {
	const size, n = 8 << 20, 5
	ctx := ctxFor(t, 120*time.Second)
	c := dial(t)
	q, base := brokertest.Queue(t, "maxbody"), brokertest.Queue(t, "maxbase")
	declare(t, c, acemq.NewTopology().Queue(acemq.Queue{Name: q}).Queue(acemq.Queue{Name: base}))
	body := []byte(`{"pad":"` + strings.Repeat("x", size-10) + `"}`)
	for range n {
		rawPublish(t, q, amqp.Publishing{Type: "big.doc", ContentType: wire.ContentTypeJSON, Body: body})
		rawPublish(t, base, amqp.Publishing{Type: "big.doc", ContentType: wire.ContentTypeJSON, Body: body})
	}
	body = nil
	// A tight GC pace, so the peak heap reflects what is live rather than
	// how much garbage the default pace lets pile up.
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	// The baseline: receiving the same bodies with plain amqp091.
	runtime.GC()
	var b0, b1 runtime.MemStats
	runtime.ReadMemStats(&b0)
	if got := drain(t, base, n, 60*time.Second); len(got) != n {
		t.Fatalf("baseline: got %d of %d", len(got), n)
	}
	runtime.ReadMemStats(&b1)
	baseline := float64(b1.TotalAlloc-b0.TotalAlloc) / n
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	// The peak of the live heap (what the last GC found reachable), not
	// of HeapAlloc: HeapAlloc also counts the garbage of amqp091's frame
	// assembly that the next GC has not collected yet, and how much of it
	// a 5 ms sample catches is the GC's timing, not the consumer's.
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		for {
			metrics.Read(live)
			if v := live[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	var handled atomic.Int32
	mt := acemq.NewJSONType[bigDoc]("big.doc", `{"type":"object","properties":{"pad":{"type":"string"}}}`)
	cs, err := acemq.Consume(ctx, c, acemq.ConsumerSpec{Queue: q, Routes: []acemq.Route{
		acemq.Handle(mt, func(context.Context, *acemq.Message[bigDoc]) acemq.Ack { handled.Add(1); return acemq.Accept() }),
	}}, acemq.WithPrefetch(1))
	if err != nil {
		t.Fatal(err)
	}
	waitDepth(t, wire.ParkedQueue(q), n, 60*time.Second)
	close(stop)
	<-sampled
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	_ = cs.Close(ctx)

	if h := handled.Load(); h != 0 {
		t.Fatalf("the handler ran %d times for bodies over the limit", h)
	}
	perMessage := float64(after.TotalAlloc-before.TotalAlloc) / n
	t.Logf("per 8 MiB message: %.1f MiB allocated by the consumer, %.1f MiB by plain amqp091 receiving it (x-baseline %.2f); peak live heap %.1f MiB (%.1f MiB before)",
		perMessage/(1<<20), baseline/(1<<20), perMessage/baseline, float64(peak.Load())/(1<<20), float64(before.HeapAlloc)/(1<<20))
	if perMessage > baseline+2*size {
		t.Fatalf("%.1f MiB allocated per 8 MiB message, want under the baseline's %.1f MiB + 2 bodies: the body was read",
			perMessage/(1<<20), baseline/(1<<20))
	}
	if p := peak.Load(); p > before.HeapAlloc+6*size {
		t.Fatalf("peak live heap %d MiB, want under %d MiB (before + 6 bodies)", p>>20, (before.HeapAlloc+6*size)>>20)
	}
	d := getOne(t, wire.ParkedQueue(q), wait)
	want := fmt.Sprintf("could not be decoded: acemq: body too large: the body is %d bytes, over the consumer's limit of 1048576 bytes (WithMaxBodySize); it was not read", size)
	if got := headerString(t, d, "x-acemq-error"); got != want || len(d.Body) != size {
		t.Fatalf("parked: x-acemq-error %q (want %q), body %d bytes", got, want, len(d.Body))
	}
}
