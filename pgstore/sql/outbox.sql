-- The transactional outbox: one row per message written in a caller's
-- transaction (PublishTx) and not yet confirmed by the broker. A relay
-- publishes the rows with confirms and deletes each only after its
-- confirm; a row the broker refused stays, with its attempts, last error
-- and the time before which it is not tried again. shard (0-15) is the
-- ordering key's (or, without one, the message id's): one relay at a time
-- holds a shard, so the rows of one key go out from one relay, in id
-- order, which PublishTx's per-key lock makes their commit order.
-- header_table is the message's headers as AMQP encodes a field table on
-- the wire (its entries, byte for byte as amqp091-go writes them), so a
-- relayed message carries exactly the headers Publish would have sent;
-- headers (jsonb) holds the headers of rows written before that column
-- existed, and is NULL in every later row (Migrate converts old rows).
CREATE TABLE IF NOT EXISTS {{prefix}}outbox (
    id             bigserial   PRIMARY KEY,
    shard          smallint    NOT NULL,
    ordering_key   text,
    exchange       text        NOT NULL,
    routing_key    text        NOT NULL,
    mandatory      boolean     NOT NULL,
    message_id     text        NOT NULL,
    correlation_id text        NOT NULL,
    type           text        NOT NULL,
    content_type   text        NOT NULL,
    delivery_mode  smallint    NOT NULL,
    msg_timestamp  timestamptz NOT NULL,
    headers        jsonb,
    header_table   bytea,
    body           bytea       NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    attempts       integer     NOT NULL DEFAULT 0,
    last_error     text,
    not_before     timestamptz
);
-- The rows of a key held back behind one the broker refused.
CREATE INDEX IF NOT EXISTS {{prefix}}outbox_failed_key
    ON {{prefix}}outbox (ordering_key, id) WHERE attempts > 0;
-- A table created before header_table existed.
ALTER TABLE {{prefix}}outbox ADD COLUMN IF NOT EXISTS header_table bytea;
ALTER TABLE {{prefix}}outbox ALTER COLUMN headers DROP NOT NULL;
