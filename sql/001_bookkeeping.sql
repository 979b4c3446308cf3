-- Bookkeeping tables (dlt-style `_` prefix). `_migrations` itself is created by the migrator.

CREATE TABLE _sync_state (
  stream      VARCHAR PRIMARY KEY,
  state       JSON NOT NULL,
  updated_at  TIMESTAMPTZ NOT NULL
);

-- One row per run and stream.
CREATE TABLE _sync_runs (
  run_id       VARCHAR NOT NULL,
  stream       VARCHAR NOT NULL,
  mode         VARCHAR NOT NULL,
  started_at   TIMESTAMPTZ NOT NULL,
  finished_at  TIMESTAMPTZ,
  status       VARCHAR NOT NULL,
  pages        BIGINT NOT NULL DEFAULT 0,
  requests     BIGINT NOT NULL DEFAULT 0,
  inserted     BIGINT NOT NULL DEFAULT 0,
  updated      BIGINT NOT NULL DEFAULT 0,
  unchanged    BIGINT NOT NULL DEFAULT 0,
  deleted      BIGINT NOT NULL DEFAULT 0,
  error        VARCHAR,
  _load_id     VARCHAR,
  _synced_at   TIMESTAMPTZ,
  PRIMARY KEY (run_id, stream)
);

-- Lake partitions written since the last publish (table, partition key); cleared by publishLake.
CREATE TABLE _lake_dirty (
  table_name  VARCHAR NOT NULL,
  part        VARCHAR NOT NULL,
  PRIMARY KEY (table_name, part)
);
