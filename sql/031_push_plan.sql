-- Reverse sync (push): the rows a run will send, numbered, so that workflow history carries only
-- the run id and sequence cursors. Rows of a finished run are deleted.
CREATE TABLE IF NOT EXISTS _push_plan (
  run_id VARCHAR NOT NULL,
  seq INTEGER NOT NULL,
  source VARCHAR NOT NULL,
  push_key VARCHAR NOT NULL,
  row_number INTEGER NOT NULL,
  action VARCHAR NOT NULL,
  fingerprint VARCHAR NOT NULL,
  source_fingerprint VARCHAR NOT NULL,
  body VARCHAR NOT NULL,
  PRIMARY KEY (run_id, seq)
);

CREATE TABLE IF NOT EXISTS _push_runs (
  run_id VARCHAR PRIMARY KEY,
  source VARCHAR NOT NULL,
  status VARCHAR NOT NULL,
  started_at TIMESTAMP NOT NULL,
  finished_at TIMESTAMP,
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
