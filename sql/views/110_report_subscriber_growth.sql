-- Live contacts created per day, week (from Monday) and month of the site (site_date), by their
-- current status: one row per period and status, gaps filled with zero, with the running total
-- per status. `crmsync report` draws it; `period` picks the granularity.
CREATE OR REPLACE VIEW subscriber_growth_by_period AS
WITH base AS (
  SELECT site_date(created_at) AS day, coalesce(status, 'unknown') AS status
  FROM contacts WHERE _deleted_at IS NULL AND created_at IS NOT NULL
), periods AS (
  SELECT 'day' AS period, day AS period_start, status FROM base
  UNION ALL SELECT 'week', CAST(date_trunc('week', day) AS DATE), status FROM base
  UNION ALL SELECT 'month', CAST(date_trunc('month', day) AS DATE), status FROM base
), counted AS (
  SELECT period, period_start, status, count(*) AS new_contacts FROM periods GROUP BY ALL
), grid AS (
  SELECT p.period, p.period_start, s.status
  FROM (SELECT DISTINCT period, period_start FROM counted) p
  CROSS JOIN (SELECT DISTINCT status FROM base) s
)
SELECT g.period, g.period_start, g.status,
  coalesce(c.new_contacts, 0) AS new_contacts,
  sum(coalesce(c.new_contacts, 0)) OVER (PARTITION BY g.period, g.status ORDER BY g.period_start) AS total_contacts
FROM grid g LEFT JOIN counted c USING (period, period_start, status)
ORDER BY g.period, g.period_start, g.status;
