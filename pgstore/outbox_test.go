package pgstore_test

import (
	"context"
	"errors"
	"github.com/acemq/acemq-go/runtime/wire"
	"log/slog"
	"maps"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/pgstore"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
	"github.com/jackc/pgx/v5"
	amqp "github.com/rabbitmq/amqp091-go"
)

func TestPublishTxValidatesInTheCallersTransaction(t *testing.T) {
	e := newOutboxEnv(t, "outbox_invalid")
	ctx := ctxFor(t, 30*time.Second)
	tx, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	err = pgstore.PublishTx(ctx, tx, e.ob, eventType, "", event{Key: "", Seq: -1}, runtime.WithRoutingKey(e.queue))
	if !errors.Is(err, runtime.ErrInvalidMessage) {
		t.Fatalf("PublishTx of an invalid event: %v; want ErrInvalidMessage", err)
	}
	var se *runtime.SchemaError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "publish test.outbox.event.v1") {
		t.Errorf("error %q: want the SchemaError Publish returns, naming the type", err)
	}
	// The transaction is still usable: the caller decides.
	if err := pgstore.PublishTx(ctx, tx, e.ob, eventType, "", event{Key: "a", Seq: 1}, runtime.WithRoutingKey(e.queue)); err != nil {
		t.Fatalf("PublishTx after the invalid one, in the same transaction: %v", err)
	}
	var inTx int
	if err := tx.QueryRow(ctx, "SELECT count(*) FROM acemq_outbox").Scan(&inTx); err != nil || inTx != 1 {
		t.Fatalf("rows seen in the transaction: %d, %v; want 1 (the valid one)", inTx, err)
	}
	if n := e.rows(ctx); n != 0 {
		t.Errorf("rows outside the uncommitted transaction: %d, want 0", n)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n := e.rows(ctx); n != 0 {
		t.Errorf("rows after rollback: %d, want 0", n)
	}
}

// The relay sends what Publish would have sent: every property and header
// but the ones that are the message's own (id, times, trace).
func TestRelayedMessageIsThePublishersMessage(t *testing.T) {
	e := newOutboxEnv(t, "outbox_wire")
	ctx := ctxFor(t, 60*time.Second)
	headers := map[string]any{"tenant": "acme", "n32": int32(7), "n64": int64(1) << 40, "flag": true,
		"ratio": 0.25, "at": time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "raw": []byte{0, 1, 2},
		"nested": amqp.Table{"a": int16(3), "list": []any{"x", int8(-1)}}}
	opts := []runtime.PublishOption{runtime.WithRoutingKey(e.queue), runtime.WithHeaders(headers), runtime.WithCorrelationID("corr-1")}
	if err := runtime.Publish(ctx, e.c, eventType, "", event{Key: "k", Seq: 1}, opts...); err != nil {
		t.Fatal(err)
	}
	direct := e.receive(1, 20*time.Second)[0]
	e.write(ctx, event{Key: "k", Seq: 1}, runtime.WithHeaders(headers), runtime.WithCorrelationID("corr-1"))
	e.relay()
	relayed := e.receive(1, 20*time.Second)[0]
	if relayed.MessageId == direct.MessageId || relayed.Headers[wire.HeaderID] != relayed.MessageId {
		t.Errorf("ids: relayed %q (header %v), direct %q; want a fresh x-acemq-id, equal to message_id", relayed.MessageId, relayed.Headers[wire.HeaderID], direct.MessageId)
	}
	own := []string{wire.HeaderID, wire.HeaderFirstSeen, "traceparent", "tracestate"}
	strip := func(d amqp.Delivery) amqp.Delivery {
		d.Headers = maps.Clone(d.Headers)
		for _, k := range own {
			delete(d.Headers, k)
		}
		d.MessageId, d.Timestamp, d.DeliveryTag, d.ConsumerTag, d.Acknowledger = "", time.Time{}, 0, "", nil
		return d
	}
	if a, b := strip(relayed), strip(direct); !reflect.DeepEqual(a, b) {
		t.Errorf("relayed message differs from the directly published one:\nrelayed %+v\ndirect  %+v", a, b)
	}
	e.waitRows(ctx, 0, 20*time.Second)
}

// confirmProbe is a log handler that, on the relay's "confirmed" line (the
// confirms are in, the delete is next), counts the rows still in the
// outbox and the messages already in the queue.
type confirmProbe struct {
	slog.Handler
	e              *outboxEnv
	rowsAtConfirm  atomic.Int64
	queuedAtConfim atomic.Int64
	seen           atomic.Int64
}

func (p *confirmProbe) Enabled(context.Context, slog.Level) bool { return true }
func (p *confirmProbe) Handle(ctx context.Context, r slog.Record) error {
	if r.Message != "acemq: outbox confirmed" || p.seen.Add(1) > 1 {
		return nil
	}
	var n int64
	_ = p.e.pool.QueryRow(ctx, "SELECT count(*) FROM acemq_outbox").Scan(&n)
	p.rowsAtConfirm.Store(n)
	if conn, err := amqp.Dial(acemqtest.URL()); err == nil {
		defer conn.Close()
		if ch, err := conn.Channel(); err == nil {
			if q, err := ch.QueueDeclarePassive(p.e.queue, true, false, false, false, nil); err == nil {
				p.queuedAtConfim.Store(int64(q.Messages))
			}
		}
	}
	return nil
}

// The rows are in the table when the broker's confirms come in, and gone
// after; a row the broker refuses stays, with its error.
func TestRelayDeletesOnlyAfterTheConfirm(t *testing.T) {
	e := newOutboxEnv(t, "outbox_confirm")
	ctx := ctxFor(t, 60*time.Second)
	const n = 20
	for i := range n {
		e.write(ctx, event{Key: "k", Seq: i}, runtime.WithOrderingKey(""))
	}
	// Two rows the broker refuses: no queue for the routing key, no such
	// exchange.
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		if err := pgstore.PublishTx(ctx, tx, e.ob, eventType, "", event{Key: "lost", Seq: 0}, runtime.WithRoutingKey(e.queue+".nosuch")); err != nil {
			return err
		}
		return pgstore.PublishTx(ctx, tx, e.ob, eventType, e.queue+".nosuch-exchange", event{Key: "lost", Seq: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	probe := &confirmProbe{Handler: quiet().Handler(), e: e}
	e.relay(pgstore.WithRelayLogger(slog.New(probe)), pgstore.WithRelayBackoff(time.Hour, time.Hour))
	e.waitRows(ctx, 2, 30*time.Second)
	e.waitFor(ctx, "both refusals recorded", 30*time.Second, "SELECT count(*) = 2 FROM acemq_outbox WHERE attempts > 0")
	if got := probe.rowsAtConfirm.Load(); got != n+2 {
		t.Errorf("rows in the outbox when the confirms came in: %d, want %d (none deleted before its confirm)", got, n+2)
	}
	type failed struct {
		attempts int
		lastErr  *string
	}
	rows, err := e.pool.Query(ctx, "SELECT attempts, last_error FROM acemq_outbox ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (failed, error) {
		var f failed
		return f, r.Scan(&f.attempts, &f.lastErr)
	})
	if err != nil {
		t.Fatal(err)
	}
	text := func(i int) string {
		if i >= len(got) || got[i].lastErr == nil {
			return ""
		}
		return *got[i].lastErr
	}
	if len(got) != 2 || got[0].attempts != 1 || !strings.Contains(text(0), "unroutable") ||
		got[1].attempts != 1 || !strings.Contains(text(1), "exchange not found") {
		t.Errorf("refused rows: %d; want 2 with attempts 1, an unroutable and an exchange-not-found error", len(got))
		for i, f := range got {
			t.Logf("row %d: attempts %d, last error %q", i, f.attempts, text(i))
		}
	}
	if got := probe.queuedAtConfim.Load(); got != n {
		t.Errorf("messages in %s when the confirms came in: %d, want %d", e.queue, got, n)
	}
	if got := e.queued(); got != n {
		t.Errorf("messages in %s: %d, want %d (each once)", e.queue, got, n)
	}
}

// PublishTx takes the producer's id (runtime.WithMessageID) and refuses
// x-acemq-id among the headers, in the caller's transaction, as Publish
// does; the relayed message carries the id in x-acemq-id and message_id.
func TestPublishTxTakesTheProducersID(t *testing.T) {
	e := newOutboxEnv(t, "outbox_msgid")
	ctx := ctxFor(t, 60*time.Second)
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		return pgstore.PublishTx(ctx, tx, e.ob, eventType, "", event{Key: "k", Seq: 1},
			runtime.WithRoutingKey(e.queue), runtime.WithHeaders(map[string]any{wire.HeaderID: "forged"}))
	})
	if !errors.Is(err, runtime.ErrInvalidMessage) || !strings.Contains(err.Error(), wire.HeaderID) {
		t.Fatalf("PublishTx with x-acemq-id among the headers: %v; want an error matching ErrInvalidMessage naming %s", err, wire.HeaderID)
	}
	if n := e.rows(ctx); n != 0 {
		t.Fatalf("rows after the refused write: %d, want 0", n)
	}
	e.write(ctx, event{Key: "k", Seq: 1}, runtime.WithMessageID("order-k:1"))
	e.relay()
	d := e.receive(1, 20*time.Second)[0]
	if d.MessageId != "order-k:1" || d.Headers[wire.HeaderID] != "order-k:1" {
		t.Errorf("relayed message_id %q, x-acemq-id %v; want both order-k:1", d.MessageId, d.Headers[wire.HeaderID])
	}
	e.waitRows(ctx, 0, 20*time.Second)
}
