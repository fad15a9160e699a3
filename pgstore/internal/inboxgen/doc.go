// Package inboxgen is generated from acemq.yaml (a queue with an inbox:
// and one without) and tested against the broker and PostgreSQL: the
// generated handler of the inbox queue takes pgstore's pgx.Tx.
package inboxgen

//go:generate go run github.com/acemq/acemq-go/cmd/acemq-gen -f acemq.yaml
