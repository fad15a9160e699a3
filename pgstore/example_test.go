package pgstore_test

import (
	"context"
	"log"
	"net/http"

	"github.com/acemq/acemq-go/pgstore"
	"github.com/acemq/acemq-go/runtime"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// An inbox without generated code: Migrate creates the table once, and the
// handler does its work in the transaction the inbox gives it. A second
// delivery of the same x-acemq-id is acknowledged without calling it.
func ExampleInbox_Process() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://postgres@127.0.0.1:5432/test")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	if err := pgstore.Migrate(ctx, pool); err != nil {
		log.Fatal(err)
	}
	inbox, err := pgstore.NewInbox(pool)
	if err != nil {
		log.Fatal(err)
	}
	handle := func(ctx context.Context, m *runtime.Message[payment]) runtime.Ack {
		return inbox.Process(ctx, "payments", m.Envelope.ID, func(ctx context.Context, tx pgx.Tx) runtime.Ack {
			if _, err := tx.Exec(ctx, `UPDATE accounts SET balance = balance - 100 WHERE id = $1`, m.Payload.ID); err != nil {
				return runtime.Retry(err)
			}
			return runtime.Accept() // committed, then acknowledged
		})
	}
	_ = runtime.Handle(paymentType, handle)
}

// The inbox's DDL, for a migration tool (what `acemq sql inbox` prints).
func ExampleSQL() {
	ddl, err := pgstore.SQL("inbox", pgstore.WithPrefix("billing_"))
	if err != nil {
		log.Fatal(err)
	}
	_ = ddl
}

// The inbox beside the connection and its consumer in a readiness probe:
// 503 while the database does not answer, as while the broker does not.
func ExampleInbox_Check() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://postgres@127.0.0.1:5432/test")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	inbox, err := pgstore.NewInbox(pool)
	if err != nil {
		log.Fatal(err)
	}
	var conn *runtime.Connection   // runtime.Dial's
	var payments *runtime.Consumer // a Consume… with inbox.Middleware
	http.Handle("/readyz", runtime.HealthHandler(conn, payments, inbox.Check()))
}
