-- Bookkeeping of contact scans (backfill and reconciliation sweeps), owned by src/sync.
-- _sync_scan_pages: pages of a scan already loaded, so a restarted scan refetches none of them.
-- _sweep_seen: contact ids a scan saw; live contacts absent from it are tombstone candidates.
CREATE TABLE IF NOT EXISTS _sync_scan_pages (
  scan_key VARCHAR NOT NULL,
  page INTEGER NOT NULL,
  row_count INTEGER NOT NULL,
  reported_total BIGINT,
  loaded_at TIMESTAMP NOT NULL,
  PRIMARY KEY (scan_key, page)
);

CREATE TABLE IF NOT EXISTS _sweep_seen (
  scan_key VARCHAR NOT NULL,
  id BIGINT NOT NULL
);
