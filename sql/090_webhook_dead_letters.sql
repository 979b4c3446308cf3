-- Webhook deliveries the applier could not apply for a reason that will not change by waiting
-- (an unreadable body, a record the CRM refuses, an error applying it alone). The applier records
-- one here with the reason and moves on; `crmsync webhooks dead-letters --retry` applies them
-- again (the body is kept, since the spool may have pruned it by then).
CREATE TABLE IF NOT EXISTS webhook_dead_letters (
  delivery_id     VARCHAR PRIMARY KEY,
  spool_seq       BIGINT,
  webhook_id      BIGINT,
  event           VARCHAR NOT NULL,
  known_event     BOOLEAN,
  received_at     TIMESTAMPTZ,
  reason          VARCHAR NOT NULL,
  error           VARCHAR,
  body            BLOB,
  first_failed_at TIMESTAMPTZ NOT NULL,
  last_failed_at  TIMESTAMPTZ NOT NULL,
  attempts        INTEGER NOT NULL,
  resolved_at     TIMESTAMPTZ
);
