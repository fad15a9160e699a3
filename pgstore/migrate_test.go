package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/pgstore"
	"github.com/acemq/acemq-go/pgstore/internal/pgtest"
	"github.com/acemq/acemq-go/runtime/acemqtest"
	amqp "github.com/rabbitmq/amqp091-go"
)

func TestMigrateCreatesTablesAndIsIdempotent(t *testing.T) {
	pool, schema := pgtest.Schema(t, "migrate")
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if err := pgstore.Migrate(ctx, pool, pgstore.WithPrefix("svc_")); err != nil {
			t.Fatalf("Migrate #%d: %v", i+1, err)
		}
	}
	for _, store := range pgstore.Stores() {
		var n int
		err := pool.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2`,
			schema, "svc_"+store).Scan(&n)
		if err != nil || n != 1 {
			t.Errorf("table svc_%s in %s: count %d, %v; want 1", store, schema, n, err)
		}
	}
}

func TestSQLNamesTablesWithThePrefix(t *testing.T) {
	q, err := pgstore.SQL("inbox", pgstore.WithPrefix("billing_"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(q, "CREATE TABLE IF NOT EXISTS billing_inbox (") || strings.Contains(q, "{{") {
		t.Errorf("SQL(inbox, billing_):\n%s", q)
	}
	if _, err := pgstore.SQL("inbox", pgstore.WithPrefix("Bad-Prefix")); !errors.Is(err, pgstore.ErrInvalidPrefix) {
		t.Errorf("prefix Bad-Prefix: err %v; want ErrInvalidPrefix", err)
	}
	if _, err := pgstore.SQL("nosuch"); err == nil || !strings.Contains(err.Error(), `no store "nosuch"`) {
		t.Errorf("store nosuch: err %v", err)
	}
}

// oldOutbox is the outbox's DDL before header_table (issue 36, item 3):
// the headers as jsonb, NOT NULL.
const oldOutbox = `CREATE TABLE acemq_outbox (
    id bigserial PRIMARY KEY, shard smallint NOT NULL, ordering_key text, exchange text NOT NULL,
    routing_key text NOT NULL, mandatory boolean NOT NULL, message_id text NOT NULL,
    correlation_id text NOT NULL, type text NOT NULL, content_type text NOT NULL,
    delivery_mode smallint NOT NULL, msg_timestamp timestamptz NOT NULL, headers jsonb NOT NULL,
    body bytea NOT NULL, created_at timestamptz NOT NULL DEFAULT now(), attempts integer NOT NULL DEFAULT 0,
    last_error text, not_before timestamptz)`

// TestMigrateConvertsOldOutboxRows: an outbox made before header_table,
// with a row waiting, is migrated: the column added, the row's jsonb
// headers converted into it (headers NULL), and read back as they were; a
// row an older writer adds afterwards (jsonb, no header_table) is read
// back too.
func TestMigrateConvertsOldOutboxRows(t *testing.T) {
	pool, _ := pgtest.Schema(t, "migrate_old")
	ctx := context.Background()
	if _, err := pool.Exec(ctx, oldOutbox); err != nil {
		t.Fatal(err)
	}
	insert := `INSERT INTO acemq_outbox (shard, exchange, routing_key, mandatory, message_id, correlation_id, type,
  content_type, delivery_mode, msg_timestamp, headers, body)
  VALUES (0, '', 'q', true, $1, '', 't', 'text/plain', 2, now(), $2, '\x00')`
	js := `{"x-acemq-id": "id-1", "n": {"int64": "7"}, "at": {"time": "2026-01-02T03:04:05Z"}, "t": {"table": {"b": {"bool": true}}}}`
	if _, err := pool.Exec(ctx, insert, "id-1", js); err != nil {
		t.Fatal(err)
	}
	if err := pgstore.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	var table []byte
	var legacy *string
	if err := pool.QueryRow(ctx, "SELECT header_table, headers::text FROM acemq_outbox WHERE message_id = 'id-1'").Scan(&table, &legacy); err != nil {
		t.Fatal(err)
	}
	if table == nil || legacy != nil {
		t.Fatalf("after Migrate: header_table %x, headers %v; want the table, headers NULL", table, legacy)
	}
	want := amqp.Table{"x-acemq-id": "id-1", "n": int64(7), "at": time.Unix(1767323045, 0), "t": amqp.Table{"b": true}}
	ob, err := pgstore.NewOutbox(acemqtest.Dial(t))
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgstore.RowHeadersForTest(ctx, pool, ob)
	if err != nil {
		t.Fatal(err)
	}
	if wireForm(got) != wireForm(want) {
		t.Errorf("converted headers %v, want %v", got, want)
	}
	// An older writer's row after the migration.
	if _, err := pool.Exec(ctx, "DELETE FROM acemq_outbox"); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, insert, "id-2", js); err != nil {
		t.Fatal(err)
	}
	if got, err = pgstore.RowHeadersForTest(ctx, pool, ob); err != nil || wireForm(got) != wireForm(want) {
		t.Errorf("an older writer's row read back as %v, %v; want %v", got, err, want)
	}
	if err := pgstore.Migrate(ctx, pool); err != nil {
		t.Fatalf("Migrate again: %v", err)
	}
}
