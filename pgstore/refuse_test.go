package pgstore_test

// What Publish refuses, PublishTx refuses, and the relay refuses on the
// row (issue 36, items 2 and 4): a short string over 255 bytes, a header
// of no AMQP type, a header frame over frame_max. One such row written
// into the table by other means than PublishTx is recorded as refused on
// its row and backed off; it never reaches the wire, where amqp091-go
// would close the connection it shares with the application's consumers.

import (
	"context"
	"errors"
	"github.com/acemq/acemq-go/runtime/wire"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/pgstore"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
	"github.com/jackc/pgx/v5"
	amqp "github.com/rabbitmq/amqp091-go"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// refusedShapes are messages Publish refuses, as publish options, and
// what each error says.
func refusedShapes(q string) map[string]struct {
	opts []runtime.PublishOption
	says string
} {
	long := strings.Repeat("k", 256)
	return map[string]struct {
		opts []runtime.PublishOption
		says string
	}{
		"routing key":    {[]runtime.PublishOption{runtime.WithRoutingKey(long)}, "the routing key is 256 bytes"},
		"correlation id": {[]runtime.PublishOption{runtime.WithRoutingKey(q), runtime.WithCorrelationID(long)}, "the correlation id is 256 bytes"},
		"header name":    {[]runtime.PublishOption{runtime.WithRoutingKey(q), runtime.WithHeaders(map[string]any{long: "v"})}, "is 256 bytes"},
		"nested name": {[]runtime.PublishOption{runtime.WithRoutingKey(q),
			runtime.WithHeaders(map[string]any{"t": amqp.Table{"u": []any{amqp.Table{long: int8(1)}}}})}, `(in header "t" > "u" > [0])`},
		"uint64 header": {[]runtime.PublishOption{runtime.WithRoutingKey(q), runtime.WithHeaders(map[string]any{"n": uint64(1)})}, "is a uint64"},
		"140 KB header": {[]runtime.PublishOption{runtime.WithRoutingKey(q),
			runtime.WithHeaders(map[string]any{"padding": strings.Repeat("p", 140_000)})}, "above the broker's frame_max 131072"},
	}
}

// TestPublishTxRefusesWhatPublishRefuses: each shape Publish refuses with
// ErrInvalidMessage, PublishTx refuses with the same words, nothing
// written.
func TestPublishTxRefusesWhatPublishRefuses(t *testing.T) {
	e := newOutboxEnv(t, "outbox_refuses")
	ctx := ctxFor(t, 60*time.Second)
	for name, shape := range refusedShapes(e.queue) {
		perr := runtime.Publish(ctx, e.c, eventType, "", event{Key: "a", Seq: 1}, shape.opts...)
		if !errors.Is(perr, runtime.ErrInvalidMessage) || !strings.Contains(perr.Error(), shape.says) {
			t.Errorf("%s: Publish = %v, want ErrInvalidMessage saying %q", name, perr, shape.says)
		}
		terr := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
			return pgstore.PublishTx(ctx, tx, e.ob, eventType, "", event{Key: "a", Seq: 1}, shape.opts...)
		})
		if !errors.Is(terr, runtime.ErrInvalidMessage) || !strings.Contains(terr.Error(), shape.says) {
			t.Errorf("%s: PublishTx = %v, want ErrInvalidMessage saying %q as Publish does", name, terr, shape.says)
		}
	}
	if n := e.rows(ctx); n != 0 {
		t.Errorf("the outbox holds %d rows, want 0", n)
	}
	if n := e.queued(); n != 0 {
		t.Errorf("%s holds %d messages, want 0", e.queue, n)
	}
}

// insertRow writes a copy of the outbox's only row with routing key key
// and ordering key ok into the table, as a tool writing rows itself would,
// bypassing PublishTx's checks; it returns the new row's id.
func insertRow(t *testing.T, ctx context.Context, e *outboxEnv, template int64, key, ok string) int64 {
	t.Helper()
	var id int64
	err := e.pool.QueryRow(ctx, `INSERT INTO acemq_outbox (shard, ordering_key, exchange, routing_key, mandatory, message_id,
    correlation_id, type, content_type, delivery_mode, msg_timestamp, header_table, body)
  SELECT shard, $3, exchange, $2, mandatory, message_id || '-bad', correlation_id, type, content_type, delivery_mode,
    msg_timestamp, header_table, body FROM acemq_outbox WHERE id = $1 RETURNING id`, template, key, ok).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestRelayRefusesAnOverlongRowOnItsRow: a row with a 256-byte routing key
// written into the table directly is refused on its row (attempts,
// last_error naming the field, acemq.outbox.refused), backed off, and
// holds back the later rows of its key while another key's row goes; the
// relay's connection, which a consumer shares, is never closed, so the
// message that consumer's handler holds is handled once.
func TestRelayRefusesAnOverlongRowOnItsRow(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	e := newOutboxEnv(t, "outbox_overlong")
	ob, err := pgstore.NewOutbox(e.c, pgstore.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	if err != nil {
		t.Fatal(err)
	}
	e.ob = ob
	ctx := ctxFor(t, 90*time.Second)

	// A consumer sharing the connection, its handler holding its message
	// while the relay meets the bad row.
	work := acemqtest.Queue(t, "outbox-work")
	if _, err := e.ch.QueueDeclare(work, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	var handled atomic.Int32
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	cs, err := runtime.Consume(ctx, e.c, runtime.ConsumerSpec{Queue: work, Routes: []runtime.Route{
		runtime.Handle(eventType, func(ctx context.Context, m *runtime.Message[event]) runtime.Ack {
			handled.Add(1)
			<-release
			return runtime.Accept()
		})}}, runtime.WithoutDeclare())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(context.Background()) })
	t.Cleanup(free) // before the Close above
	if err := runtime.Publish(ctx, e.c, eventType, "", event{Key: "job", Seq: 0}, runtime.WithRoutingKey(work)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for handled.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}

	// The template row (key k, seq 0) becomes the bad row's copy, then
	// is removed; k's seq 1 waits behind the bad row; "free" goes.
	e.write(ctx, event{Key: "k", Seq: 0}, runtime.WithOrderingKey("k"))
	var template int64
	if err := e.pool.QueryRow(ctx, "SELECT id FROM acemq_outbox").Scan(&template); err != nil {
		t.Fatal(err)
	}
	bad := insertRow(t, ctx, e, template, strings.Repeat("r", 256), "k")
	if _, err := e.pool.Exec(ctx, "DELETE FROM acemq_outbox WHERE id = $1", template); err != nil {
		t.Fatal(err)
	}
	e.write(ctx, event{Key: "k", Seq: 1}, runtime.WithOrderingKey("k"))
	e.write(ctx, event{Key: "free", Seq: 0}, runtime.WithOrderingKey("free"))
	started := time.Now()
	e.relay(pgstore.WithRelayBackoff(100*time.Millisecond, 400*time.Millisecond), pgstore.WithRelayPoll(100*time.Millisecond))

	if ev := decodeEvent(t, e.receive(1, 20*time.Second)[0]); ev.Key != "free" {
		t.Fatalf("got %+v, want the other key's row", ev)
	}
	e.waitFor(ctx, "the refusal recorded on the row", 20*time.Second,
		`SELECT attempts >= 2 AND last_error LIKE '%the routing key is 256 bytes%' FROM acemq_outbox WHERE id = $1`, bad)
	time.Sleep(2 * time.Second)
	var attempts int
	if err := e.pool.QueryRow(ctx, "SELECT attempts FROM acemq_outbox WHERE id = $1", bad).Scan(&attempts); err != nil {
		t.Fatal(err)
	}
	// Backed off: 100, 200, 400, 400 … ms, not tried again at once.
	if elapsed := time.Since(started); attempts > 2+int(elapsed/(300*time.Millisecond)) {
		t.Errorf("%d attempts in %s: the relay does not back off", attempts, elapsed.Round(time.Millisecond))
	}
	if n := e.rows(ctx); n != 2 {
		t.Errorf("the outbox holds %d rows, want 2 (the bad row and k's seq 1 behind it)", n)
	}
	free()
	if err := runtime.Publish(ctx, e.c, eventType, "", event{Key: "after", Seq: 0}, runtime.WithRoutingKey(work)); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(20 * time.Second)
	for handled.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	if n := handled.Load(); n != 2 {
		t.Errorf("the consumer sharing the relay's connection made %d handler calls, want 2 (its held message once, then the next): the connection was lost", n)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	if n := refusedCount(rm, "invalid"); n < 2 {
		t.Errorf("acemq.outbox.refused{reason=invalid} = %d, want the row's attempts", n)
	}
}

// refusedCount is acemq.outbox.refused's sum for reason.
func refusedCount(rm metricdata.ResourceMetrics, reason string) int64 {
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != pgstore.MetricOutboxRefused {
				continue
			}
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok {
				for _, dp := range sum.DataPoints {
					if v, ok := dp.Attributes.Value("acemq.outbox.reason"); ok && v.AsString() == reason {
						n += dp.Value
					}
				}
			}
		}
	}
	return n
}

// TestRelayNeverTrimsARow: a row whose headers do not fit frame_max (a
// 140 KB header, written into the table directly) is refused on its row,
// as Publish refuses such a message, never published without the header
// as the runtime's own copies are (x-acemq-dropped-headers).
func TestRelayNeverTrimsARow(t *testing.T) {
	e := newOutboxEnv(t, "outbox_notrim")
	ctx := ctxFor(t, 60*time.Second)
	e.write(ctx, event{Key: "big", Seq: 0})
	// A 140,000-byte string header appended to the row's header table.
	const name = "padding"
	big := append([]byte{byte(len(name))}, name...)
	big = append(big, 'S', 0, 0x02, 0x22, 0xe0) // 140,000
	big = append(big, strings.Repeat("p", 140_000)...)
	if _, err := e.pool.Exec(ctx, "UPDATE acemq_outbox SET header_table = header_table || $1", big); err != nil {
		t.Fatal(err)
	}
	e.write(ctx, event{Key: "small", Seq: 0})
	e.relay(pgstore.WithRelayBackoff(time.Hour, time.Hour))
	if ev := decodeEvent(t, e.receive(1, 20*time.Second)[0]); ev.Key != "small" {
		t.Fatalf("got %+v, want only the row that fits", ev)
	}
	e.waitFor(ctx, "the refusal recorded on the row", 20*time.Second,
		`SELECT attempts = 1 AND last_error LIKE '%above the broker''s frame_max 131072%' FROM acemq_outbox`)
	select {
	case d := <-e.got:
		t.Errorf("published: %s, headers %v", d.Body, d.Headers[wire.HeaderDropped])
	case <-time.After(time.Second):
	}
}
