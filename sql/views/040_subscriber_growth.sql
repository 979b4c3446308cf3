-- Contacts created per day of the site (site_date), from the contacts themselves, so it needs no
-- report, with the running total and how many of the day's contacts are subscribed now.
CREATE OR REPLACE VIEW subscriber_growth AS
SELECT day, new_contacts, new_subscribed,
  sum(new_contacts) OVER (ORDER BY day) AS total_contacts
FROM (
  SELECT site_date(created_at) AS day,
    count(*) AS new_contacts,
    count(*) FILTER (WHERE status = 'subscribed') AS new_subscribed
  FROM contacts WHERE _deleted_at IS NULL AND created_at IS NOT NULL
  GROUP BY 1
)
ORDER BY day;
