-- One row per webhook delivery id. The webhook ingest (migrations 020-029) may add columns and
-- its own tables; this is the shape DESIGN.md promises analysts.
CREATE TABLE IF NOT EXISTS webhook_events (
  delivery_id  VARCHAR PRIMARY KEY,
  event        VARCHAR,
  received_at  TIMESTAMPTZ,
  payload      JSON,
  status       VARCHAR,
  applied_at   TIMESTAMPTZ,
  error        VARCHAR,
  _load_id     VARCHAR,
  _synced_at   TIMESTAMPTZ
);
