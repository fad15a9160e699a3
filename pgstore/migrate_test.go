package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/pgstore"
	"github.com/acemq/acemq-go/pgstore/internal/pgtest"
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
