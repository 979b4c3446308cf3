-- Report snapshots: one row per snapshot, with its time, parameters and the response as `data`.
-- `report_other` keeps snapshots of reports without a table of their own (its `report` column says which).

CREATE TABLE report_overview (
  snapshot_id  VARCHAR NOT NULL,
  snapshot_at  TIMESTAMPTZ NOT NULL,
  report       VARCHAR NOT NULL,
  params       JSON,
  data         JSON,
  _load_id     VARCHAR NOT NULL,
  _synced_at   TIMESTAMPTZ NOT NULL
);

CREATE TABLE report_subscriber_growth (
  snapshot_id  VARCHAR NOT NULL,
  snapshot_at  TIMESTAMPTZ NOT NULL,
  report       VARCHAR NOT NULL,
  params       JSON,
  data         JSON,
  _load_id     VARCHAR NOT NULL,
  _synced_at   TIMESTAMPTZ NOT NULL
);

CREATE TABLE report_campaign_email_stats (
  snapshot_id  VARCHAR NOT NULL,
  snapshot_at  TIMESTAMPTZ NOT NULL,
  report       VARCHAR NOT NULL,
  params       JSON,
  data         JSON,
  _load_id     VARCHAR NOT NULL,
  _synced_at   TIMESTAMPTZ NOT NULL
);

CREATE TABLE report_funnel_conversion_stats (
  snapshot_id  VARCHAR NOT NULL,
  snapshot_at  TIMESTAMPTZ NOT NULL,
  report       VARCHAR NOT NULL,
  params       JSON,
  data         JSON,
  _load_id     VARCHAR NOT NULL,
  _synced_at   TIMESTAMPTZ NOT NULL
);

CREATE TABLE report_automation_steps (
  snapshot_id  VARCHAR NOT NULL,
  snapshot_at  TIMESTAMPTZ NOT NULL,
  report       VARCHAR NOT NULL,
  params       JSON,
  data         JSON,
  _load_id     VARCHAR NOT NULL,
  _synced_at   TIMESTAMPTZ NOT NULL
);

CREATE TABLE report_other (
  snapshot_id  VARCHAR NOT NULL,
  snapshot_at  TIMESTAMPTZ NOT NULL,
  report       VARCHAR NOT NULL,
  params       JSON,
  data         JSON,
  _load_id     VARCHAR NOT NULL,
  _synced_at   TIMESTAMPTZ NOT NULL
);

-- The automation step report flattened: one row per step of each snapshot.
CREATE TABLE report_automation_step_rows (
  snapshot_id          VARCHAR NOT NULL,
  snapshot_at          TIMESTAMPTZ NOT NULL,
  funnel_id            BIGINT,
  sequence_id          BIGINT,
  label                VARCHAR,
  type                 VARCHAR,
  count                BIGINT,
  percent              DOUBLE,
  percent_text         DOUBLE,
  previous_step_count  BIGINT,
  drop_count           BIGINT,
  drop_percent         DOUBLE,
  _load_id             VARCHAR NOT NULL,
  _synced_at           TIMESTAMPTZ NOT NULL
);
