package pgstore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/acemq/acemq-go/runtime"
	"github.com/jackc/pgx/v5"
)

// Shards is how many parts the outbox's rows are split into by ordering
// key: each relay holds some of them (at most one relay a shard), so up
// to Shards relays share the work, and the rows of one key always go out
// through one relay.
const Shards = 16

// Outbox is a transactional outbox: the connection whose codecs encode
// what is written (its schema registry, its WithOrigin) and which a relay
// publishes on, and the table, <prefix>outbox.
type Outbox struct {
	c      *runtime.Connection
	cfg    config
	table  string // quoted
	name   string // the table's name, and its LISTEN/NOTIFY channel
	insert string
}

// NewOutbox returns the outbox of c in the table <prefix>outbox
// (WithPrefix; default acemq_outbox), which Migrate creates. It fails
// only on an invalid prefix.
func NewOutbox(c *runtime.Connection, opts ...Option) (*Outbox, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, errors.New("pgstore: NewOutbox: nil connection")
	}
	ob := &Outbox{c: c, cfg: cfg, table: cfg.table("outbox"), name: cfg.prefix + "outbox"}
	ob.insert = `WITH l AS MATERIALIZED (SELECT pg_advisory_xact_lock($1) WHERE $2::text IS NOT NULL),
ins AS (INSERT INTO ` + ob.table + ` (shard, ordering_key, exchange, routing_key, mandatory, message_id,
    correlation_id, type, content_type, delivery_mode, msg_timestamp, header_table, body)
  SELECT $3, $2, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14
  FROM (SELECT count(*) FROM l) AS locked
  RETURNING tableoid, shard)
SELECT pg_notify(` + quoteLiteral(ob.name) + `, tableoid::text || ':' || shard) FROM ins`
	return ob, nil
}

// Prefix is the prefix of the outbox's table (WithPrefix), which a
// generated Publish...Tx method checks against its manifest's
// table_prefix.
func (ob *Outbox) Prefix() string { return ob.cfg.prefix }

// quoteLiteral quotes s as an SQL string literal (s is a checked prefix
// and a fixed suffix: no quote in it, but quoted as if there were).
func quoteLiteral(s string) string {
	b := []byte{'\''}
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			b = append(b, '\'')
		}
		b = append(b, s[i])
	}
	return string(append(b, '\''))
}

// PublishTx writes v, a message of type mt for exchange, to the outbox in
// tx, the caller's transaction: the row is the message exactly as
// runtime.Publish on the outbox's connection would send it (body, type,
// content type, correlation id, x-acemq-id, attempt, first seen, origin,
// schema fingerprint, the options' routing key and headers, the trace
// context of ctx), and a relay publishes it once tx has committed. Nothing
// is sent now; rolling tx back leaves nothing to send.
//
// runtime.WithMessageID gives the row the producer's own x-acemq-id (a
// write retried after an ambiguous failure keeps its identity, and the
// consumer's inbox absorbs the copy); x-acemq-id among runtime.WithHeaders
// is refused, as Publish refuses it.
//
// v is encoded and validated at once: a value that breaks its schema
// returns the error Publish would (matching runtime.ErrInvalidMessage),
// and nothing is written, so the caller's transaction decides what to do
// with it. Messages of one ordering key (runtime.WithOrderingKey, else
// the correlation id) are published in the order their transactions
// commit: writing one takes a transaction-scoped lock on the key, so two
// transactions writing rows of one key run one after the other from that
// point (write the keys of a transaction in one order everywhere, or
// expect PostgreSQL's deadlock error, 40P01, to be retried).
func PublishTx[T any](ctx context.Context, tx pgx.Tx, ob *Outbox, mt *runtime.MessageType[T], exchange string, v T, opts ...runtime.PublishOption) error {
	o, err := runtime.NewOutgoing(ctx, ob.c, mt, exchange, v, opts...)
	if err != nil {
		return err
	}
	return ob.write(ctx, tx, o)
}

// write inserts o in tx.
func (ob *Outbox) write(ctx context.Context, tx pgx.Tx, o runtime.Outgoing) error {
	headers, err := encodeTable(o.Msg.Headers)
	if err != nil {
		return fmt.Errorf("pgstore: outbox %s: message %s: %w", ob.name, o.Msg.MessageId, err)
	}
	var key *string
	shardOf := o.Msg.MessageId
	if o.OrderingKey != "" {
		key, shardOf = &o.OrderingKey, o.OrderingKey
	}
	m := o.Msg
	_, err = tx.Exec(ctx, ob.insert, ob.lockKey(o.OrderingKey), key, shard(shardOf),
		o.Exchange, o.RoutingKey, o.Mandatory, m.MessageId, m.CorrelationId, m.Type, m.ContentType,
		int16(m.DeliveryMode), m.Timestamp, headers, m.Body)
	if err != nil {
		return fmt.Errorf("pgstore: outbox %s: write message %s: %w", ob.name, m.MessageId, err)
	}
	return nil
}

// shard is the shard of a key: FNV-1a, modulo Shards.
func shard(key string) int16 {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int16(h.Sum32() % Shards)
}

// lockKey is the advisory lock a writer of key takes in its transaction.
func (ob *Outbox) lockKey(key string) int64 {
	h := fnv.New64a()
	h.Write([]byte("acemq-outbox:" + ob.table + ":" + key))
	return int64(h.Sum64())
}
