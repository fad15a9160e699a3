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
// An outbox created by an earlier version gets its header_table column,
// and its rows' headers are converted from jsonb into it (a relay reads
// an unconverted row as before, so a migration tool applying SQL's DDL
// alone loses nothing).
//
// Upgrading: a relay of this version reads the rows of either form; a
// relay of an earlier version cannot read the rows this version's
// PublishTx writes (their headers column is NULL): upgrade the relays
// with or before the writers.
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
	if err := c.convertHeaders(ctx, tx); err != nil {
		return fmt.Errorf("pgstore: migrate outbox: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("pgstore: migrate: commit: %w", err)
	}
	return nil
}

// convertHeaders moves the headers of the outbox's rows written before
// header_table existed from jsonb into it, as PublishTx now writes them.
// A row whose jsonb cannot be read is left as it is (the relay refuses it
// on its row, saying why).
func (c config) convertHeaders(ctx context.Context, tx pgx.Tx) error {
	t := c.table("outbox")
	rows, err := tx.Query(ctx, `SELECT id, headers FROM `+t+` WHERE header_table IS NULL AND headers IS NOT NULL ORDER BY id FOR UPDATE`)
	if err != nil {
		return err
	}
	type row struct {
		id    int64
		table []byte
	}
	var conv []row
	for rows.Next() {
		var id int64
		var js []byte
		if err := rows.Scan(&id, &js); err != nil {
			rows.Close()
			return err
		}
		h, err := decodeHeaders(js)
		if err != nil {
			continue
		}
		b, err := encodeTable(h)
		if err != nil {
			continue
		}
		conv = append(conv, row{id, b})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, r := range conv {
		if _, err := tx.Exec(ctx, `UPDATE `+t+` SET header_table = $2, headers = NULL WHERE id = $1`, r.id, r.table); err != nil {
			return err
		}
	}
	return nil
}
