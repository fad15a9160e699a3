package pgstore_test

import (
	"context"
	"log"

	"github.com/acemq/acemq-go/pgstore"
	"github.com/acemq/acemq-go/runtime"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

type orderPlaced struct {
	OrderID string `json:"order_id"`
}

var orderPlacedType = runtime.NewJSONType[orderPlaced]("shop.order.placed.v1", `{"type": "object", "required": ["order_id"]}`)

// A message written in the caller's transaction: published by the relay
// if, and only if, the transaction commits; an invalid one fails here.
func ExamplePublishTx() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://postgres@127.0.0.1:5432/test")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	conn, err := runtime.Dial(ctx, "amqp://guest:guest@localhost:5672/")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)
	ob, err := pgstore.NewOutbox(conn)
	if err != nil {
		log.Fatal(err)
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE orders SET state = 'placed' WHERE id = $1`, "A-1001"); err != nil {
			return err
		}
		return pgstore.PublishTx(ctx, tx, ob, orderPlacedType, "shop", orderPlaced{OrderID: "A-1001"},
			runtime.WithRoutingKey("order.placed"), runtime.WithOrderingKey("A-1001"))
	})
	if err != nil {
		log.Fatal(err)
	}
}

// The relay runs beside the service (as many as wanted: they share the
// outbox's shards) until ctx ends.
func ExampleRelay_Run() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://postgres@127.0.0.1:5432/test")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	conn, err := runtime.Dial(ctx, "amqp://guest:guest@localhost:5672/")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := pgstore.Migrate(ctx, pool); err != nil {
		log.Fatal(err)
	}
	ob, err := pgstore.NewOutbox(conn, pgstore.WithPrefix("acemq_"))
	if err != nil {
		log.Fatal(err)
	}
	if err := pgstore.NewRelay(ob, pool, pgstore.WithRelayBatch(500)).Run(ctx); err != nil {
		log.Fatal(err) // the table is missing: run Migrate, or apply `acemq sql outbox`
	}
}
