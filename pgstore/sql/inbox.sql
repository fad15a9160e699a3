-- The inbox: one row per (consumer, message id) handled, written in the
-- handler's own transaction. A second delivery of the same id finds the
-- row and is acknowledged without running the handler. A row expires at
-- its consumer's retention (7 days by default) and is then deleted in
-- small batches (Inbox.Cleanup).
CREATE TABLE IF NOT EXISTS {{prefix}}inbox (
    consumer    text        NOT NULL,
    message_id  text        NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (consumer, message_id)
);
CREATE INDEX IF NOT EXISTS {{prefix}}inbox_expires_at
    ON {{prefix}}inbox (expires_at);
