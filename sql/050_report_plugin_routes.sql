-- Reports of CRMs that have the plugin's report routes instead of the interface's (fluentcrm-2.9):
-- dashboard-stats and the email series have no table of their own; every daily or monthly series
-- (the plugin's subscribers and email-* reports, the interface's subscriber growth) is also
-- flattened into report_daily_counts, one row per key. The plugin's /funnels/{id}/report lands in
-- report_automation_steps and report_automation_step_rows, like the interface's step report.

CREATE TABLE report_dashboard_stats (
  snapshot_id  VARCHAR NOT NULL,
  snapshot_at  TIMESTAMPTZ NOT NULL,
  report       VARCHAR NOT NULL,
  params       JSON,
  data         JSON,
  _load_id     VARCHAR NOT NULL,
  _synced_at   TIMESTAMPTZ NOT NULL
);

CREATE TABLE report_email_activity (
  snapshot_id  VARCHAR NOT NULL,
  snapshot_at  TIMESTAMPTZ NOT NULL,
  report       VARCHAR NOT NULL,
  params       JSON,
  data         JSON,
  _load_id     VARCHAR NOT NULL,
  _synced_at   TIMESTAMPTZ NOT NULL
);

CREATE TABLE report_daily_counts (
  snapshot_id  VARCHAR NOT NULL,
  snapshot_at  TIMESTAMPTZ NOT NULL,
  -- subscribers, email_sents, email_opens, email_clicks (plugin) or subscriber_growth (interface)
  report       VARCHAR NOT NULL,
  -- the key as the CRM sent it (YYYY-MM-DD, or "Nov 2025" for monthly series)
  period_key   VARCHAR NOT NULL,
  -- first day of the period
  day          DATE,
  period       VARCHAR NOT NULL,
  count        BIGINT,
  _load_id     VARCHAR NOT NULL,
  _synced_at   TIMESTAMPTZ NOT NULL
);
