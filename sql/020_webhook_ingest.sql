-- Webhook ingest (src/webhooks). webhook_events itself is created in 005; these columns say which
-- webhook sent a delivery, when the event happened, whether its name is one the spec lists, and
-- where it sits in the receiver's spool.
ALTER TABLE webhook_events ADD COLUMN IF NOT EXISTS webhook_id BIGINT;
ALTER TABLE webhook_events ADD COLUMN IF NOT EXISTS event_at TIMESTAMPTZ;
ALTER TABLE webhook_events ADD COLUMN IF NOT EXISTS known_event BOOLEAN;
ALTER TABLE webhook_events ADD COLUMN IF NOT EXISTS spool_seq BIGINT;

-- One row per email.* delivery.
CREATE TABLE IF NOT EXISTS email_events (
  delivery_id  VARCHAR PRIMARY KEY,
  event        VARCHAR NOT NULL,
  email_id     BIGINT,
  contact_id   BIGINT,
  campaign_id  BIGINT,
  subject      VARCHAR,
  url          VARCHAR,
  occurred_at  TIMESTAMPTZ,
  opened_at    TIMESTAMPTZ,
  data         JSON,
  _load_id     VARCHAR,
  _synced_at   TIMESTAMPTZ
);

-- One row per commerce.* delivery; the payload shape is not specified, so `data` keeps it whole.
CREATE TABLE IF NOT EXISTS commerce_events (
  delivery_id  VARCHAR PRIMARY KEY,
  event        VARCHAR NOT NULL,
  contact_id   BIGINT,
  order_id     VARCHAR,
  amount       DOUBLE,
  currency     VARCHAR,
  occurred_at  TIMESTAMPTZ,
  data         JSON,
  _load_id     VARCHAR,
  _synced_at   TIMESTAMPTZ
);

-- The applier's durable offset in a spool, written in the same transaction as the events it
-- covers, so a crash between apply and commit re-applies (idempotently) instead of skipping.
CREATE TABLE IF NOT EXISTS _webhook_applier (
  spool_id     VARCHAR PRIMARY KEY,
  applied_seq  BIGINT NOT NULL,
  updated_at   TIMESTAMPTZ NOT NULL
);

-- Newest event applied per contact: an older delivery arriving late never overwrites it.
CREATE TABLE IF NOT EXISTS _webhook_contact_events (
  contact_id        BIGINT PRIMARY KEY,
  last_event_at     TIMESTAMPTZ NOT NULL,
  last_delivery_id  VARCHAR NOT NULL,
  deleted_event_at  TIMESTAMPTZ
);
