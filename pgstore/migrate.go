package pgstore

import (
	"context"
	"embed"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed sql/*.sql
var ddl embed.FS

// DB is what Migrate and the stores need of a database: *pgxpool.Pool
// and *pgx.Conn have it.
type DB interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Stores lists the stores whose tables SQL and Migrate know: "inbox",
// "outbox".
func Stores() []string {
	entries, _ := ddl.ReadDir("sql")
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".sql"))
	}
	slices.Sort(out)
	return out
}

// SQL is the DDL of one store ("inbox" or "outbox") with the tables
// named by the options' prefix: what Migrate runs, for a migration tool
// (goose, atlas, plain SQL files). Every statement is idempotent (IF NOT
// EXISTS).
func SQL(store string, opts ...Option) (string, error) {
	c, err := newConfig(opts)
	if err != nil {
		return "", err
	}
	return c.sql(store)
}

func (c config) sql(store string) (string, error) {
	b, err := ddl.ReadFile("sql/" + store + ".sql")
	if err != nil {
		return "", fmt.Errorf("pgstore: no store %q (want one of %s)", store, strings.Join(Stores(), ", "))
	}
	return strings.ReplaceAll(string(b), "{{prefix}}", c.prefix), nil
}

// Migrate creates every store's tables and indexes that do not exist yet,
// in one transaction under an advisory lock (several processes starting
// at once migrate one after the other). It is safe to run at every start.
func Migrate(ctx context.Context, db DB, opts ...Option) error {
	c, err := newConfig(opts)
	if err != nil {
		return err
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", "acemq-pgstore:"+c.prefix); err != nil {
		return fmt.Errorf("pgstore: migrate: lock: %w", err)
	}
	for _, store := range Stores() {
		q, err := c.sql(store)
		if err != nil {
			return err
		}
		// No arguments: the simple protocol, several statements at once.
		if _, err := tx.Exec(ctx, q, pgx.QueryExecModeSimpleProtocol); err != nil {
			return fmt.Errorf("pgstore: migrate %s: %w", store, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("pgstore: migrate: commit: %w", err)
	}
	return nil
}
