// Package prefixgen is generated from acemq.yaml (table_prefix: billing_,
// a queue with an inbox: and a publisher with an outbox:) and tested
// against PostgreSQL and the broker: its generated code refuses pgstore
// stores made with another table prefix.
package prefixgen

//go:generate go run github.com/acemq/acemq-go/cmd/acemq-gen -f acemq.yaml
