package consume

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
)

// allocTextType is the text type of the consume path's allocation tests.
var allocTextType = testTextType("acemq.alloc.consume")

// allocConsumer is a consumer of one text route and a session of it, as
// Consume makes them but without a broker: the session is marked dead, so
// that its acks are dropped where they would be written (readyAcks) and
// everything before that runs as on a live one.
func allocConsumer(t testing.TB, h core.Handler[string]) (*Consumer, *session) {
	t.Helper()
	cfg := testConfig(Config{Prefetch: 256, Concurrency: 1, MaxBody: core.DefaultMaxBodySize}, nil)
	cs, err := newConsumer(ConsumerSpec{Queue: "orders.new", Routes: []core.Route{core.Handle(allocTextType, h)}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cs.handlerCtx = context.Background()
	s := &session{acks: newAckBatch(cfg), log: cs.log}
	// Neither a full batch nor the timer flushes what the test settles.
	s.acks.size, s.acks.delay = 1<<30, time.Hour
	s.dead.Store(true)
	return cs, s
}

// allocDelivery is a delivery as the runtime's publish leaves it: its
// envelope headers, one application header, a correlation id.
func allocDelivery(tag uint64) amqp.Delivery {
	return amqp.Delivery{
		Headers: amqp.Table{
			wire.HeaderID: "id-1", wire.HeaderAttempt: int64(1), wire.HeaderFirstSeen: "2026-12-03T06:00:00.123Z",
			wire.HeaderOrigin: "svc@host", "tenant": "t-1",
		},
		ContentType: wire.ContentTypeText, MessageId: "id-1", CorrelationId: "conv-1", Type: allocTextType.Name(),
		RoutingKey: "orders.new", DeliveryTag: tag, Body: []byte("order A-1 placed"),
	}
}

// A delivery decoded ahead and handled costs five allocations on the
// consumer's side (issue 23, the consume path; there were twelve): its
// delivery struct (the decode's and the handler's contexts inside it),
// the decoded value with its Message and the handler's call in one, the
// text body's string, and the application headers' map (two: the map and
// its group). Without application headers (as the runtime publishes)
// four: the map is empty. What amqp091-go allocates to read it is not
// counted here.
func TestConsumeDeliveryAllocations(t *testing.T) {
	var got *core.Message[string]
	var info core.DecodeInfo
	cs, s := allocConsumer(t, func(ctx context.Context, m *core.Message[string]) core.Ack {
		got, info = m, core.DecodeInfoOf(ctx)
		return core.Accept()
	})
	const runs = 2000
	ds := make([]amqp.Delivery, runs+2) // made before: not counted
	for i := range ds {
		ds[i] = allocDelivery(uint64(i + 1))
	}
	tag := uint64(0)
	run := func() {
		tag++
		s.take(tag)
		dv := &delivery{cs: cs, s: s, d: ds[tag-1]}
		cs.decodeAhead(dv)
		dv.process()
	}
	run()
	if got == nil || got.Payload != "order A-1 placed" || got.Envelope.ID != "id-1" || got.Envelope.CorrelationID != "conv-1" ||
		got.RoutingKey != "orders.new" || len(got.Headers) != 1 || got.Headers["tenant"] != "t-1" {
		t.Fatalf("the handler got %+v", got)
	}
	if info.MaxBody != core.DefaultMaxBodySize {
		t.Errorf("the handler's context carries decode info %+v, want the consumer's body limit %d", info, core.DefaultMaxBodySize)
	}
	if n := testing.AllocsPerRun(runs, run); n > 5 {
		t.Errorf("a delivery decoded ahead and handled: %v allocations, want at most 5", n)
	}
	// As the runtime publishes them: x-acemq-* headers only. The
	// handler's map is empty: no storage for it.
	for i := range ds {
		for k := range ds[i].Headers {
			if !strings.HasPrefix(k, core.InternalPrefix) {
				delete(ds[i].Headers, k)
			}
		}
	}
	tag = 0
	if n := testing.AllocsPerRun(runs, run); n > 4 {
		t.Errorf("a delivery without application headers: %v allocations, want at most 4", n)
	}
	if got.Headers == nil || len(got.Headers) != 0 {
		t.Errorf("without application headers the handler got Headers %#v, want an empty map", got.Headers)
	}
	s.mu.Lock()
	ready := len(s.acks.ready)
	s.mu.Unlock()
	if ready != 2*runs+3 { // the first run, and each AllocsPerRun's runs+1
		t.Errorf("%d acks ready, want %d (every delivery accepted)", ready, 2*runs+3)
	}
}

// A delivery's decode contexts carry its decode info without boxing it,
// and a context derived from the handler's (a middleware's WithValue)
// still does.
func TestInfoCtxCarriesTheDecodeInfo(t *testing.T) {
	type key struct{}
	var c core.InfoCtx
	want := core.DecodeInfo{Fingerprint: "fp", MaxBody: 7, CheckRequester: true}
	ctx := c.Of(context.WithValue(context.Background(), key{}, "parent's"), want)
	if got := core.DecodeInfoOf(ctx); got != want {
		t.Errorf("core.DecodeInfoOf(core.InfoCtx) = %+v, want %+v", got, want)
	}
	if got := core.DecodeInfoOf(context.WithValue(ctx, key{}, "child's")); got != want {
		t.Errorf("through a child context: %+v, want %+v", got, want)
	}
	if got := ctx.Value(key{}); got != "parent's" {
		t.Errorf("the parent's value: %v, want parent's", got)
	}
	if n := testing.AllocsPerRun(1000, func() { _ = core.DecodeInfoOf(ctx) }); n != 0 {
		t.Errorf("decodeInfoOf: %v allocations, want 0", n)
	}
	if got := core.DecodeInfoOf(core.WithDecodeInfo(context.Background(), want)); got != want {
		t.Errorf("withDecodeInfo: %+v, want %+v", got, want)
	}
}

// BenchmarkConsumeDeliveryGlue: the consumer's own work for one delivery
// decoded ahead and handled (taken, decoded, its envelope and span, the
// handler, its ack batched), without the broker, amqp091-go's reading or
// the hand-off between the goroutines: the part of the consume path that
// is the runtime's alone, by CPU and allocations.
//
//	go test -run '^$' -bench ConsumeDeliveryGlue -benchmem ./runtime/
func BenchmarkConsumeDeliveryGlue(b *testing.B) {
	// headers=envelope: as the runtime publishes (x-acemq-* only);
	// headers=app: one application header besides.
	for _, app := range []bool{false, true} {
		name := "headers=envelope"
		if app {
			name = "headers=app"
		}
		b.Run(name, func(b *testing.B) { benchDeliveryGlue(b, app) })
	}
}

func benchDeliveryGlue(b *testing.B, app bool) {
	cs, s := allocConsumer(b, func(context.Context, *core.Message[string]) core.Ack { return core.Accept() })
	ds := make([]amqp.Delivery, 4096)
	for i := range ds {
		ds[i] = allocDelivery(uint64(i + 1))
		if !app {
			delete(ds[i].Headers, "tenant")
		}
	}
	b.ReportAllocs()
	tag := uint64(0)
	for b.Loop() {
		tag++
		d := ds[tag%uint64(len(ds))]
		d.DeliveryTag = tag
		s.take(tag)
		dv := &delivery{cs: cs, s: s, d: d}
		cs.decodeAhead(dv)
		dv.process()
		if tag%64 == 0 {
			s.mu.Lock()
			s.acks.ready = s.acks.ready[:0]
			s.mu.Unlock()
		}
	}
}
