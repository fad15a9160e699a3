package runtime_test

import (
	"context"
	"encoding/binary"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	"github.com/acemq/acemq-go/runtime/internal/confluenttest"
	"github.com/acemq/acemq-go/runtime/registry"
	amqp "github.com/rabbitmq/amqp091-go"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

const (
	outageV1 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}`
	outageV2 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},
		{"name":"currency","type":"string","default":"EUR"}]}`
)

type outageOrderV1 struct {
	ID string `avro:"id"`
}

type outageOrderV2 struct {
	ID       string `avro:"id"`
	Currency string `avro:"currency"`
}

func httpReg(t *testing.T, url string) *registry.HTTP {
	t.Helper()
	r, err := registry.NewHTTP(registry.HTTPConfig{URL: url, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The registry goes away under a running consumer with 100 messages in
// flight: none is parked, the outage is counted, and all 100 are handled
// once the registry is back, with nothing done by hand.
func TestRegistryOutageParksNothingAndRecovers(t *testing.T) {
	t.Parallel()
	ctx := ctxFor(t, 90*time.Second)
	srv := confluenttest.Start(t)
	pubReg := httpReg(t, srv.URL)
	if _, err := pubReg.Register(ctx, "outage-orders", outageV1); err != nil { // the v1 producer's id, cached
		t.Fatal(err)
	}
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	pub := dial(t, runtime.WithSchemaRegistry(pubReg))
	sub := dial(t, runtime.WithSchemaRegistry(httpReg(t, srv.URL)), runtime.WithMeterProvider(mp))

	q := brokertest.Queue(t, "regdown")
	// A quorum queue with a delivery limit of 2: a consumer that waited the
	// outage out by nacking would have the broker dead-letter the messages
	// (on RabbitMQ 4, where every requeue counts) within two tries.
	declare(t, pub, runtime.NewTopology().Queue(runtime.Queue{Name: q, Type: runtime.Quorum, DeadLetter: true, DeliveryLimit: 2}))
	v1 := runtime.NewAvroType[outageOrderV1]("outage.order", "outage-orders", outageV1)
	v2 := runtime.NewAvroType[outageOrderV2]("outage.order", "outage-orders", outageV2)
	var mu sync.Mutex
	handled := map[string]string{}
	redelivered := 0
	if _, err := runtime.Consume(ctx, sub, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
		runtime.Handle(v2, func(ctx context.Context, m *runtime.Message[outageOrderV2]) runtime.Ack {
			mu.Lock()
			handled[m.Payload.ID] = m.Payload.Currency
			if m.Redelivered {
				redelivered++
			}
			mu.Unlock()
			return runtime.Accept()
		}),
	}}, runtime.WithPrefetch(100), runtime.WithConcurrency(4)); err != nil {
		t.Fatal(err)
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(handled) }

	srv.Stop() // connection refused from now on
	msgs := make([]outageOrderV1, 100)
	for i := range msgs {
		msgs[i] = outageOrderV1{ID: "A-" + string(rune('0'+i/10)) + string(rune('0'+i%10))}
	}
	if err := runtime.PublishBatch(ctx, pub, v1, "", msgs, runtime.WithRoutingKey(q)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(wait)
	for unavailable(t, reader) < 100 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if n := unavailable(t, reader); n < 100 {
		t.Fatalf("%s = %v after the outage began, want ≥ 100 (one per message at least)", wire.MetricRegistryUnavailable, n)
	}
	// Counted for the queue, by the conventions' attribute names.
	if pts, m := points(t, reader, wire.MetricRegistryUnavailable); len(pts) != 1 || pts[queueKey(q)] < 100 || m.Unit != "{lookup}" {
		t.Errorf("%s points %v (unit %q), want only {%s} ≥ 100, unit {lookup}", wire.MetricRegistryUnavailable, pts, m.Unit, queueKey(q))
	}
	time.Sleep(2 * time.Second) // an outage long enough for several tries each
	if n := count(); n != 0 {
		t.Fatalf("%d messages handled while the registry was down", n)
	}
	if d := depth(t, wire.ParkedQueue(q)); d != 0 {
		t.Fatalf("%s holds %d during the outage, want 0", wire.ParkedQueue(q), d)
	}

	srv.Restart()
	deadline = time.Now().Add(45 * time.Second)
	for count() < 100 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(handled) != 100 {
		t.Fatalf("%d of 100 handled after the registry came back", len(handled))
	}
	if redelivered != 0 {
		t.Fatalf("%d messages came back redelivered: the outage was waited out by nacking, which spends a quorum queue's delivery limit", redelivered)
	}
	for id, cur := range handled {
		if cur != "EUR" {
			t.Fatalf("%s decoded with currency %q, want the v2 default EUR", id, cur)
		}
	}
	for _, name := range []string{wire.ParkedQueue(q), wire.DeadLetterQueue(q)} {
		if d := depth(t, name); d != 0 {
			t.Fatalf("%s holds %d, want 0", name, d)
		}
	}
}

// A writer id the registry answers 404 for is the body's fault: parked, the
// reason naming the id.
func TestRegistryUnknownWriterIDIsParked(t *testing.T) {
	t.Parallel()
	ctx := ctxFor(t, 30*time.Second)
	srv := confluenttest.Start(t)
	sub := dial(t, runtime.WithSchemaRegistry(httpReg(t, srv.URL)))
	q := brokertest.Queue(t, "reg404")
	declare(t, sub, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
	v2 := runtime.NewAvroType[outageOrderV2]("outage.order", "outage-orders", outageV2)
	if _, err := runtime.Consume(ctx, sub, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
		runtime.Handle(v2, func(context.Context, *runtime.Message[outageOrderV2]) runtime.Ack { return runtime.Accept() }),
	}}); err != nil {
		t.Fatal(err)
	}
	body := []byte{0, 0, 0, 0, 0, 2, 'x'}
	binary.BigEndian.PutUint32(body[1:5], 4242)
	rawPublish(t, q, amqp.Publishing{Type: "outage.order", ContentType: wire.ContentTypeAvro, Body: body})
	d := getOne(t, wire.ParkedQueue(q), wait)
	want := "could not be decoded: look up the writer schema: schema id 4242: schema registry " + srv.URL +
		": HTTP 404, error code 40403: Schema 4242 not found (acemq: schema not found)"
	if got := headerString(t, d, "x-acemq-error"); got != want {
		t.Fatalf("x-acemq-error:\n got %q\nwant %q", got, want)
	}
}

// A hold is bounded: past its longest hold (1s here, 10 minutes by
// default) the delivery is nacked back once and held again, so nothing is
// held near the broker's consumer timeout. Close returns held deliveries to
// their queue at once: nothing is lost, nothing parked.
func TestRegistryOutageHoldIsBoundedAndCloseReturnsHeld(t *testing.T) {
	t.Parallel()
	ctx := ctxFor(t, 60*time.Second)
	srv := confluenttest.Start(t)
	pubReg := httpReg(t, srv.URL)
	if _, err := pubReg.Register(ctx, "outage-orders", outageV1); err != nil {
		t.Fatal(err)
	}
	pub := dial(t, runtime.WithSchemaRegistry(pubReg))
	v1 := runtime.NewAvroType[outageOrderV1]("outage.order", "outage-orders", outageV1)
	v2 := runtime.NewAvroType[outageOrderV2]("outage.order", "outage-orders", outageV2)
	waits := runtime.WithRegistryWaitsForTest(100*time.Millisecond, 200*time.Millisecond, time.Second)

	t.Run("bounded", func(t *testing.T) {
		q := brokertest.Queue(t, "reghold")
		declare(t, pub, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
		sub := dial(t, runtime.WithSchemaRegistry(httpReg(t, srv.URL)))
		got := make(chan bool, 1)
		if _, err := runtime.Consume(ctx, sub, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
			runtime.Handle(v2, func(_ context.Context, m *runtime.Message[outageOrderV2]) runtime.Ack {
				got <- m.Redelivered
				return runtime.Accept()
			}),
		}}, waits); err != nil {
			t.Fatal(err)
		}
		srv.Stop()
		if err := runtime.Publish(ctx, pub, v1, "", outageOrderV1{ID: "A-1"}, runtime.WithRoutingKey(q)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2500 * time.Millisecond) // more than two holds
		srv.Restart()
		select {
		case redelivered := <-got:
			if !redelivered {
				t.Fatal("handled without having been nacked back: the hold was not bounded")
			}
		case <-time.After(wait):
			t.Fatal("not handled after the registry came back")
		}
		if d := depth(t, wire.ParkedQueue(q)); d != 0 {
			t.Fatalf("%s holds %d, want 0", wire.ParkedQueue(q), d)
		}
	})

	t.Run("close", func(t *testing.T) {
		q := brokertest.Queue(t, "regclose")
		declare(t, pub, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
		sub := dial(t, runtime.WithSchemaRegistry(httpReg(t, srv.URL)), runtime.WithMeterProvider(mp))
		cs, err := runtime.Consume(ctx, sub, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
			runtime.Handle(v2, func(context.Context, *runtime.Message[outageOrderV2]) runtime.Ack { return runtime.Accept() }),
		}}, runtime.WithRegistryWaitsForTest(time.Minute, time.Minute, time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		srv.Stop()
		defer srv.Restart()
		if err := runtime.PublishBatch(ctx, pub, v1, "", []outageOrderV1{{ID: "A"}, {ID: "B"}, {ID: "C"}}, runtime.WithRoutingKey(q)); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(wait)
		for unavailable(t, reader) < 3 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		start := time.Now()
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := cs.Close(cctx); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("Close took %v with deliveries held for a minute: it waited for them", took)
		}
		waitDepth(t, q, 3, wait)
		if d := depth(t, wire.ParkedQueue(q)); d != 0 {
			t.Fatalf("%s holds %d, want 0", wire.ParkedQueue(q), d)
		}
	})
}

// unavailable is the acemq.registry.unavailable count, 0 before its first
// data point.
func unavailable(t *testing.T, reader *sdkmetric.ManualReader) float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("collect metrics: %v", err)
	}
	var sum float64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if d, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == wire.MetricRegistryUnavailable {
				for _, p := range d.DataPoints {
					sum += float64(p.Value)
				}
			}
		}
	}
	return sum
}

// A manifest registry that cannot open (a credential missing from the
// environment) fails Consume at its start, not every message later.
func TestConsumeFailsOnARegistryThatCannotOpen(t *testing.T) {
	t.Parallel()
	ctx := ctxFor(t, 30*time.Second)
	c := dial(t)
	q := brokertest.Queue(t, "regopen")
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
	reg := registry.OpenLazy(registry.Config{URL: "https://registry.example:8081", TokenEnv: "ACEMQ_TEST_NO_SUCH_TOKEN"})
	mt := runtime.NewAvroType[outageOrderV2]("outage.order", "outage-orders", outageV2, runtime.WithSchemaRegistry(reg))
	_, err := runtime.Consume(ctx, c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
		runtime.Handle(mt, func(context.Context, *runtime.Message[outageOrderV2]) runtime.Ack { return runtime.Accept() }),
	}})
	want := "schema registry https://registry.example:8081: the environment variable ACEMQ_TEST_NO_SUCH_TOKEN is empty or unset"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Consume: %v, want an error containing %q", err, want)
	}
}
