-- Sync health from `_sync_runs`: every run of every stream with its duration and volume, each
-- stream's freshness, and the failed runs with their messages.
CREATE OR REPLACE VIEW sync_run_health AS
SELECT run_id, stream, mode, status, started_at, finished_at,
  round(epoch(finished_at) - epoch(started_at), 3) AS duration_s,
  inserted + updated + unchanged AS rows_read,
  inserted, updated, unchanged, deleted, pages, requests, error
FROM _sync_runs
ORDER BY started_at, stream;

CREATE OR REPLACE VIEW sync_stream_freshness AS
SELECT stream,
  max(finished_at) FILTER (WHERE status = 'succeeded') AS last_success_at,
  max(started_at) AS last_run_at,
  arg_max(status, started_at) AS last_status,
  count(*) AS runs,
  count(*) FILTER (WHERE status = 'failed') AS failed_runs
FROM _sync_runs
GROUP BY stream
ORDER BY stream;

CREATE OR REPLACE VIEW sync_failures AS
SELECT run_id, stream, mode, started_at, finished_at, error
FROM _sync_runs WHERE status = 'failed'
ORDER BY started_at DESC, stream;
