-- Members per tag and list now, and at the end of the previous contacts sync (the second latest
-- succeeded `contacts` run in `_sync_runs`), counted from contacts_history (live versions now;
-- versions valid at that moment then), so no extra bookkeeping is needed. `previous_members` and
-- `change` are NULL until there have been two contact syncs. `crm_subscribers` is the count the
-- CRM itself reports on the tag or list (its subscribersCount).
CREATE OR REPLACE VIEW tag_list_member_counts AS
WITH prev AS (
  SELECT finished_at AS prev_at FROM _sync_runs
  WHERE stream = 'contacts' AND status = 'succeeded' AND finished_at IS NOT NULL
  ORDER BY finished_at DESC LIMIT 1 OFFSET 1
), versions AS (
  SELECT h.tag_ids, h.list_ids, h.valid_to IS NULL AS is_current,
    coalesce(h.valid_from <= p.prev_at AND (h.valid_to IS NULL OR h.valid_to > p.prev_at), false) AS was_current
  FROM contacts_history h LEFT JOIN prev p ON true
  WHERE h.valid_to IS NULL OR (h.valid_from <= p.prev_at AND h.valid_to > p.prev_at)
), members AS (
  SELECT 'tag' AS kind, unnest(tag_ids) AS id, is_current, was_current FROM versions
  UNION ALL
  SELECT 'list' AS kind, unnest(list_ids) AS id, is_current, was_current FROM versions
), counted AS (
  SELECT kind, id, count(*) FILTER (WHERE is_current) AS members, count(*) FILTER (WHERE was_current) AS previous_members
  FROM members GROUP BY ALL
), named AS (
  SELECT 'tag' AS kind, id, title, subscribers_count FROM tags WHERE _deleted_at IS NULL
  UNION ALL
  SELECT 'list' AS kind, id, title, subscribers_count FROM lists WHERE _deleted_at IS NULL
)
SELECT kind, id, coalesce(n.title, '#' || id) AS title,
  coalesce(c.members, 0) AS members,
  CASE WHEN (SELECT count(*) FROM prev) > 0 THEN coalesce(c.previous_members, 0) END AS previous_members,
  CASE WHEN (SELECT count(*) FROM prev) > 0 THEN coalesce(c.members, 0) - coalesce(c.previous_members, 0) END AS change,
  n.subscribers_count AS crm_subscribers,
  (SELECT prev_at FROM prev) AS previous_sync_at
FROM named n FULL JOIN counted c USING (kind, id)
WHERE n.id IS NOT NULL OR c.members > 0 OR c.previous_members > 0
ORDER BY kind DESC, members DESC, id;
