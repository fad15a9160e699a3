package inboxgen

import (
	"context"
	"github.com/acemq/acemq-go/runtime/wire"
	"go/parser"
	"go/token"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/pgstore"
	"github.com/acemq/acemq-go/pgstore/internal/pgtest"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
	"github.com/jackc/pgx/v5"
	amqp "github.com/rabbitmq/amqp091-go"
)

// The generated consumer of the inbox queue: the handler takes the
// inbox's pgx.Tx, its effect commits with the id, and one id published
// twice (a duplicate publish) is handled once, the copy acked.
func TestGeneratedInbox(t *testing.T) {
	pool, _ := pgtest.Schema(t, "inboxgen")
	ctx := context.Background()
	if err := pgstore.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE ledger (payment_id text PRIMARY KEY, amount_cents bigint NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	inbox, err := pgstore.NewInbox(pool)
	if err != nil {
		t.Fatal(err)
	}
	u := acemqtest.VHost(t)
	conn, err := runtime.Dial(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.Declare(ctx, Topology()); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	cs, err := ConsumePaymentsReceived(ctx, conn, inbox, PaymentsReceivedHandlerFunc(
		func(ctx context.Context, tx pgx.Tx, m *runtime.Message[PaymentReceived]) runtime.Ack {
			calls.Add(1)
			if _, err := tx.Exec(ctx, `INSERT INTO ledger VALUES ($1, $2)`, m.Payload.PaymentID, m.Payload.AmountCents); err != nil {
				return runtime.Retry(err)
			}
			return runtime.Accept()
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	raw, err := amqp.Dial(u)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ch, err := raw.Channel()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := ch.PublishWithContext(ctx, "", "payments.received", false, false, amqp.Publishing{
			Type: "payment.received.v1", ContentType: "application/json", Headers: amqp.Table{wire.HeaderID: "pay-1"},
			Body: []byte(`{"payment_id": "P-1", "amount_cents": 1250}`)}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for s := inbox.Stats(); s.Handled+s.Duplicates < 2; s = inbox.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("settled %+v of 2 deliveries in 30s", s)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM ledger`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 1 || calls.Load() != 1 || inbox.Stats().Duplicates != 1 {
		t.Errorf("ledger rows %d, handler calls %d, Stats %+v; want 1, 1, one duplicate", rows, calls.Load(), inbox.Stats())
	}
	var expires time.Time
	if err := pool.QueryRow(ctx, `SELECT expires_at FROM acemq_inbox WHERE consumer = 'payments.received' AND message_id = 'pay-1'`).Scan(&expires); err != nil {
		t.Fatal(err)
	}
	if left := time.Until(expires); left < 71*time.Hour || left > 72*time.Hour {
		t.Errorf("the row expires in %v; want the manifest's retention, 72h", left)
	}
}

// The producer's side: the generated publisher given the same
// runtime.WithMessageID twice (a re-publish after a confirm that never
// came) delivers one id twice, and the inbox's handler runs once.
func TestGeneratedRepublishWithTheSameIDIsHandledOnce(t *testing.T) {
	pool, _ := pgtest.Schema(t, "inboxgen_republish")
	ctx := context.Background()
	if err := pgstore.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE ledger (payment_id text NOT NULL, amount_cents bigint NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	inbox, err := pgstore.NewInbox(pool)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := runtime.Dial(ctx, acemqtest.VHost(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.Declare(ctx, Topology()); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	cs, err := ConsumePaymentsReceived(ctx, conn, inbox, PaymentsReceivedHandlerFunc(
		func(ctx context.Context, tx pgx.Tx, m *runtime.Message[PaymentReceived]) runtime.Ack {
			calls.Add(1)
			if _, err := tx.Exec(ctx, `INSERT INTO ledger VALUES ($1, $2)`, m.Payload.PaymentID, m.Payload.AmountCents); err != nil {
				return runtime.Retry(err)
			}
			return runtime.Accept()
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	m := PaymentReceived{PaymentID: "P-9", AmountCents: 700}
	for range 2 { // the publish, then the producer's re-publish
		if err := NewPaymentsPublisher(conn).PublishPaymentReceived(ctx, m, runtime.WithMessageID("payment-received:"+m.PaymentID)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for s := inbox.Stats(); s.Handled+s.Duplicates < 2; s = inbox.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("settled %+v of 2 deliveries in 30s", s)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM ledger WHERE payment_id = 'P-9'`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 1 || calls.Load() != 1 || inbox.Stats().Duplicates != 1 {
		t.Errorf("ledger rows %d, handler calls %d, Stats %+v; want 1, 1, one duplicate", rows, calls.Load(), inbox.Stats())
	}
}

// Only the consumers of a queue with an inbox import pgstore and pgx: the
// other generated files do not.
func TestOnlyTheInboxConsumersImportPgx(t *testing.T) {
	for _, name := range []string{"checks.acemq.go", "codec.acemq.go", "messages.acemq.go", "policies.acemq.go", "publishers.acemq.go", "topology.acemq.go", "types.acemq.go", "consumers.acemq.go"} {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		has := false
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			has = has || p == "github.com/acemq/acemq-go/pgstore" || p == "github.com/jackc/pgx/v5"
		}
		if has != (name == "consumers.acemq.go") {
			t.Errorf("%s imports pgstore/pgx: %v", name, has)
		}
	}
}
