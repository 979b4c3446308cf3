-- Reverse sync (push): one row per pushed key and source, updated after every attempt.
-- `fingerprint` is the content of the last attempt (or rejection); `pushed_fingerprint` the
-- content last accepted by the CRM, which the planner compares with the source;
-- `source_fingerprint` the raw source row of that success, so an unchanged source costs no request.
CREATE TABLE IF NOT EXISTS _push_ledger (
  source VARCHAR NOT NULL,
  push_key VARCHAR NOT NULL,
  email VARCHAR NOT NULL,
  outcome VARCHAR NOT NULL,
  fingerprint VARCHAR,
  pushed_fingerprint VARCHAR,
  source_fingerprint VARCHAR,
  contact_id BIGINT,
  action_type VARCHAR,
  http_status INTEGER,
  error_code VARCHAR,
  error_field VARCHAR,
  error_message VARCHAR,
  retryable BOOLEAN,
  attempts INTEGER NOT NULL DEFAULT 0,
  failures INTEGER NOT NULL DEFAULT 0,
  run_id VARCHAR,
  first_seen_at TIMESTAMP NOT NULL,
  last_attempt_at TIMESTAMP,
  succeeded_at TIMESTAMP,
  updated_at TIMESTAMP NOT NULL,
  PRIMARY KEY (source, push_key)
);
