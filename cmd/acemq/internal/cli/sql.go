package cli

import (
	"fmt"
	"strings"

	"github.com/acemq/acemq-go/pgstore"
	"github.com/spf13/cobra"
)

func (e *env) sqlCommand() *cobra.Command {
	var prefix string
	cmd := &cobra.Command{
		Use:   "sql (" + strings.Join(pgstore.Stores(), "|") + ")...",
		Short: "print the DDL of pgstore's tables (the inbox, the outbox) for a migration tool",
		Long: `sql prints the SQL that pgstore.Migrate runs for each store named: the
tables, indexes and what they need, named with --prefix (default ` + pgstore.DefaultPrefix + `), for teams
that apply their schema with a migration tool (goose, atlas, plain SQL files)
rather than with Migrate. Every statement is idempotent (IF NOT EXISTS).
Needs no broker and no database.`,
		Example: `  acemq sql outbox > migrations/0007_acemq_outbox.sql
  acemq sql inbox outbox --prefix billing_`,
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return bad("sql: name a store: %s", strings.Join(pgstore.Stores(), ", "))
			}
			for i, store := range args {
				q, err := pgstore.SQL(store, pgstore.WithPrefix(prefix))
				if err != nil { // an unknown store or an invalid prefix
					return bad("sql: %w", err)
				}
				if i > 0 {
					fmt.Fprintln(e.stdout)
				}
				fmt.Fprint(e.stdout, q)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&prefix, "prefix", pgstore.DefaultPrefix, "the tables' prefix, as pgstore.WithPrefix")
	return cmd
}
