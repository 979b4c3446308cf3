-- The push's times were plain TIMESTAMP holding UTC wall times, unlike every other time in the
-- warehouse (TIMESTAMPTZ): a reader whose session is in another zone compared them with now()
-- as local times, and `updated_at > now() - INTERVAL 1 HOUR` missed rows. Each becomes the
-- instant it always meant. The tables are copied, not altered in place: DuckDB cannot replay an
-- `ALTER COLUMN ... TYPE ... USING` from its write-ahead log, so a crash before the next
-- checkpoint would have left a file that does not open. (push_dead_letters is made again after
-- the migrations, as every view is.)
CREATE TABLE _push_ledger_instants (
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
  first_seen_at TIMESTAMPTZ NOT NULL,
  last_attempt_at TIMESTAMPTZ,
  succeeded_at TIMESTAMPTZ,
  updated_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (source, push_key)
);
INSERT INTO _push_ledger_instants
SELECT source, push_key, email, outcome, fingerprint, pushed_fingerprint, source_fingerprint, contact_id, action_type,
       http_status, error_code, error_field, error_message, retryable, attempts, failures, run_id,
       timezone('UTC', first_seen_at), timezone('UTC', last_attempt_at), timezone('UTC', succeeded_at), timezone('UTC', updated_at)
FROM _push_ledger;
DROP TABLE _push_ledger;
ALTER TABLE _push_ledger_instants RENAME TO _push_ledger;

CREATE TABLE _push_runs_instants (
  run_id VARCHAR PRIMARY KEY,
  source VARCHAR NOT NULL,
  status VARCHAR NOT NULL,
  started_at TIMESTAMPTZ NOT NULL,
  finished_at TIMESTAMPTZ,
  rows_read INTEGER NOT NULL DEFAULT 0,
  planned_new INTEGER NOT NULL DEFAULT 0,
  planned_changed INTEGER NOT NULL DEFAULT 0,
  planned_retry INTEGER NOT NULL DEFAULT 0,
  unchanged INTEGER NOT NULL DEFAULT 0,
  invalid INTEGER NOT NULL DEFAULT 0,
  sent INTEGER NOT NULL DEFAULT 0,
  succeeded INTEGER NOT NULL DEFAULT 0,
  failed INTEGER NOT NULL DEFAULT 0,
  skipped INTEGER NOT NULL DEFAULT 0,
  error VARCHAR
);
INSERT INTO _push_runs_instants
SELECT run_id, source, status, timezone('UTC', started_at), timezone('UTC', finished_at), rows_read, planned_new, planned_changed,
       planned_retry, unchanged, invalid, sent, succeeded, failed, skipped, error
FROM _push_runs;
DROP TABLE _push_runs;
ALTER TABLE _push_runs_instants RENAME TO _push_runs;
