-- Webhook delivery queue (issue 12). The dispatcher fans every outbox event out to its
-- subscribed endpoints here, in the transaction that stamps the outbox row dispatched; an
-- endpoint's lane sends its rows and deletes them in the transaction that records the
-- attempts. A row is therefore an event whose first attempt to that endpoint is not recorded
-- yet (or whose retry workflow is being started); the payload stays in the outbox row.
CREATE TABLE webhook_queue (
    endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    outbox_seq  BIGINT NOT NULL REFERENCES outbox (seq),
    PRIMARY KEY (endpoint_id, outbox_seq)
);

-- New outbox rows wake the dispatcher (LISTEN webhook_outbox) at commit; it polls only as a
-- fallback. One notification per statement, and Postgres folds identical notifications of one
-- transaction into one.
CREATE FUNCTION webhook_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('webhook_outbox', '');
    RETURN NULL;
END;
$$;

CREATE TRIGGER outbox_notify AFTER INSERT ON outbox
    FOR EACH STATEMENT EXECUTE FUNCTION webhook_outbox_notify();
