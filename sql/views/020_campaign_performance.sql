-- One row per live campaign with its counters (from with[]=stats) and rates. The real CRM names
-- the counters sent, views, clicks and unsubscribers; the other spellings are the written interface's.
CREATE OR REPLACE VIEW campaign_performance AS
WITH s AS (
  SELECT id, title, status, email_subject, recipients_count, scheduled_at, created_at,
    TRY_CAST(stats->>'sent' AS BIGINT) AS sent,
    TRY_CAST(coalesce(stats->>'opens', stats->>'open', stats->>'views') AS BIGINT) AS opens,
    TRY_CAST(coalesce(stats->>'clicks', stats->>'click') AS BIGINT) AS clicks,
    TRY_CAST(coalesce(stats->>'unsubscribes', stats->>'unsubscribers', stats->>'unsubscribed', stats->>'unsubscribe') AS BIGINT) AS unsubscribes,
    TRY_CAST(coalesce(stats->>'bounces', stats->>'bounced') AS BIGINT) AS bounces,
    TRY_CAST(stats->>'revenue' AS DOUBLE) AS revenue,
    _synced_at
  FROM campaigns WHERE _deleted_at IS NULL
)
SELECT *,
  round(opens / nullif(coalesce(sent, recipients_count), 0), 4) AS open_rate,
  round(clicks / nullif(coalesce(sent, recipients_count), 0), 4) AS click_rate,
  round(clicks / nullif(opens, 0), 4) AS click_to_open_rate,
  round(unsubscribes / nullif(coalesce(sent, recipients_count), 0), 4) AS unsubscribe_rate
FROM s;
