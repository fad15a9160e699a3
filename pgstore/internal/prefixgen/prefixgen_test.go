package prefixgen

import (
	"context"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/pgstore"
	"github.com/acemq/acemq-go/pgstore/internal/pgtest"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
	"github.com/jackc/pgx/v5"
)

type handler struct{}

func (handler) HandlePaymentReceived(context.Context, pgx.Tx, *runtime.Message[PaymentReceived]) runtime.Ack {
	return runtime.Accept()
}

// The manifest's table_prefix: in the generated code: an inbox or an
// outbox on pgstore's default tables is refused, naming the table and the
// fix; made with pgstore.WithPrefix(TablePrefix) they write billing_inbox
// and billing_outbox.
func TestTablePrefix(t *testing.T) {
	pool, _ := pgtest.Schema(t, "prefixgen")
	ctx := context.Background()
	if err := pgstore.Migrate(ctx, pool, pgstore.WithPrefix(TablePrefix)); err != nil {
		t.Fatal(err)
	}
	conn := acemqtest.Dial(t)
	if err := conn.Declare(ctx, Topology()); err != nil {
		t.Fatal(err)
	}

	plain, err := pgstore.NewInbox(pool)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ConsumeBillingPayments(ctx, conn, plain, handler{}); err == nil ||
		err.Error() != "ConsumeBillingPayments: the inbox is not on the manifest's table billing_inbox: make it with pgstore.WithPrefix(TablePrefix)" {
		t.Errorf("Consume with a default inbox: %v; want it refused", err)
	}
	inbox, err := pgstore.NewInbox(pool, pgstore.WithPrefix(TablePrefix))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := ConsumeBillingPayments(ctx, conn, inbox, handler{})
	if err != nil {
		t.Fatalf("Consume with the manifest's prefix: %v", err)
	}
	_ = cs.Close(ctx)

	m := PaymentReceived{PaymentID: "P-1", AmountCents: 100}
	plainOb, err := pgstore.NewOutbox(conn)
	if err != nil {
		t.Fatal(err)
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return NewBillingOutbox(plainOb).PublishPaymentReceivedTx(ctx, tx, m) })
	if err == nil || !strings.Contains(err.Error(), "the outbox is not on the manifest's table billing_outbox") {
		t.Errorf("PublishTx on a default outbox: %v; want it refused", err)
	}
	ob, err := pgstore.NewOutbox(conn, pgstore.WithPrefix(TablePrefix))
	if err != nil {
		t.Fatal(err)
	}
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return NewBillingOutbox(ob).PublishPaymentReceivedTx(ctx, tx, m) }); err != nil {
		t.Fatalf("PublishTx with the manifest's prefix: %v", err)
	}
	var rows int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM billing_outbox").Scan(&rows); err != nil || rows != 1 {
		t.Errorf("billing_outbox holds %d rows (%v); want 1", rows, err)
	}
}
