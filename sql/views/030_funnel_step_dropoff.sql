-- Each funnel step of the latest automation step report per funnel: how many reached it, how
-- many dropped since the previous step, and the share of the entrants (the root row) left.
CREATE OR REPLACE VIEW funnel_step_dropoff AS
WITH latest AS (
  SELECT funnel_id, max(snapshot_at) AS snapshot_at FROM report_automation_step_rows GROUP BY funnel_id
), steps AS (
  SELECT r.* FROM report_automation_step_rows r JOIN latest USING (funnel_id, snapshot_at)
)
SELECT s.funnel_id, f.title AS funnel_title, s.snapshot_at, s.sequence_id, s.label, s.type,
  s.count AS reached, s.previous_step_count,
  coalesce(s.drop_count, s.previous_step_count - s.count) AS dropped,
  s.drop_percent,
  round(100.0 * s.count / nullif(first_value(s.count) OVER (PARTITION BY s.funnel_id ORDER BY s.sequence_id = 0 DESC, s.sequence_id), 0), 2) AS percent_of_entrants
FROM steps s LEFT JOIN funnels f ON f.id = s.funnel_id
ORDER BY s.funnel_id, s.sequence_id = 0 DESC, s.sequence_id;
