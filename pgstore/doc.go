// Package pgstore keeps a consumer's inbox and a service's transactional
// outbox in PostgreSQL (through pgx), so that a message's effect happens
// once: the inbox records (consumer, message id) in the handler's own
// transaction and absorbs a second delivery of the same id; the outbox
// writes what is to be published in the caller's transaction, and a relay
// publishes it with confirms.
//
// The outbox: NewOutbox binds a runtime connection (whose codecs encode,
// whose publish path the relay uses) to the table <prefix>outbox;
// PublishTx encodes, validates and writes a message in the caller's
// pgx.Tx (generated code: <Publisher>Outbox.Publish<Message>Tx, from a
// manifest publisher with outbox: true); NewRelay(...).Run publishes the
// rows with confirms, deleting each only after its confirm, sharing the
// table's Shards among relays, a key's rows in commit order.
//
// The tables are created by Migrate (for teams without a migration tool)
// or from the SQL that SQL returns and `acemq sql inbox|outbox` prints
// (for teams with one). Every table is named with a prefix ("acemq_" by
// default, WithPrefix to change it) in the connection's search_path.
//
// It is a module of its own (github.com/acemq/acemq-go/pgstore), so a
// service that does not use it does not get pgx. docs/exactly-once.md is
// the tutorial; docs/operations.md has the runbook.
package pgstore
