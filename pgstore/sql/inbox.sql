-- The inbox: one row per (consumer, message id) handled, written in the
-- handler's own transaction. A second delivery of the same id finds the
-- row and is acknowledged without running the handler. Rows older than
-- their consumer's retention are deleted in small batches.
CREATE TABLE IF NOT EXISTS {{prefix}}inbox (
    consumer    text        NOT NULL,
    message_id  text        NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer, message_id)
);
CREATE INDEX IF NOT EXISTS {{prefix}}inbox_consumer_received_at
    ON {{prefix}}inbox (consumer, received_at);
