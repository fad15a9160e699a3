// Package pgtest gives pgstore's tests a real PostgreSQL: its URL
// (ACEMQ_TEST_PG_URL, default postgres://postgres@127.0.0.1:5432/test),
// a reachability check with the broker tests' rule (Require: skips under
// -short without dialling, fails under CI=true, skips elsewhere with a
// hint) and a schema of the test's own (Schema), dropped at cleanup.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultURL is used when ACEMQ_TEST_PG_URL is not set: the machine's
// PostgreSQL, trust auth, database test.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// URL is the database the tests use: ACEMQ_TEST_PG_URL, or DefaultURL.
func URL() string {
	if u := os.Getenv("ACEMQ_TEST_PG_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// Require returns URL once PostgreSQL answers on its port. Under -short
// the test is skipped without trying; under CI=true a database that does
// not answer fails the test; elsewhere the test is skipped with a hint.
func Require(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("needs PostgreSQL: skipped under -short (the quick test)")
	}
	u := URL()
	parsed, err := url.Parse(u)
	if err != nil {
		tb.Fatalf("ACEMQ_TEST_PG_URL: %v", err)
	}
	host := parsed.Host
	if parsed.Port() == "" {
		host = net.JoinHostPort(parsed.Hostname(), "5432")
	}
	conn, err := net.DialTimeout("tcp", host, 3*time.Second)
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("no PostgreSQL at %s (CI=true: a missing database fails): %v", parsed.Redacted(), err)
		}
		tb.Skipf("no PostgreSQL at %s (start it: see docs/development.md, or set ACEMQ_TEST_PG_URL): %v", parsed.Redacted(), err)
	}
	conn.Close()
	return u
}

// Name is a unique schema name: "test_<prefix>_<8 hex digits>".
func Name(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "test_" + prefix + "_" + hex.EncodeToString(b)
}

// Schema creates a schema of the test's own and returns a pool whose
// connections have it as their search_path, and its name. At cleanup the
// pool is closed and the schema dropped with everything in it.
func Schema(tb testing.TB, prefix string) (*pgxpool.Pool, string) {
	tb.Helper()
	u := Require(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	schema := Name(prefix)
	admin, err := pgx.Connect(ctx, u)
	if err != nil {
		tb.Fatalf("connect %s: %v", u, err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		tb.Fatalf("create schema %s: %v", schema, err)
	}
	tb.Cleanup(func() { dropSchema(tb, u, schema) })
	pool := Pool(tb, schema)
	return pool, schema
}

// Pool opens another pool on schema (as Schema's), closed at cleanup; its
// sessions' application_name is the schema's name.
func Pool(tb testing.TB, schema string) *pgxpool.Pool {
	tb.Helper()
	return PoolAt(tb, URL(), schema)
}

// PoolAt is Pool through another URL of the test database (a Proxy's).
func PoolAt(tb testing.TB, u, schema string) *pgxpool.Pool {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(u)
	if err != nil {
		tb.Fatalf("ACEMQ_TEST_PG_URL: %v", err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	// pg_stat_activity tells the test's own sessions by it.
	cfg.ConnConfig.RuntimeParams["application_name"] = schema
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("pool: %v", err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

func dropSchema(tb testing.TB, u, schema string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		tb.Errorf("drop schema %s: %v", schema, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
		tb.Errorf("drop schema %s: %v", schema, err)
	}
}
