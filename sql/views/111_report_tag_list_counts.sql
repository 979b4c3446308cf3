-- Members per tag and list now, and at the end of the previous contacts sync (the second latest
-- succeeded `contacts` run in `_sync_runs`), counted from contacts_history, so no extra bookkeeping
-- is needed. Now: the live versions. Then: each contact's latest version loaded by that moment
-- (`_synced_at`, our clock, like the run's `finished_at`), unless it was deleted by then. Not
-- `valid_from`: that is the CRM's `updated_at`, whole seconds in another clock, so an edit made in
-- the second a sync finished would count as held before it. `previous_members` and `change` are
-- NULL until there have been two contact syncs. `crm_subscribers` is the count the CRM itself
-- reports on the tag or list (its subscribersCount).
CREATE OR REPLACE VIEW tag_list_member_counts AS
WITH prev AS (
  SELECT finished_at AS prev_at FROM _sync_runs
  WHERE stream = 'contacts' AND status = 'succeeded' AND finished_at IS NOT NULL
  ORDER BY finished_at DESC LIMIT 1 OFFSET 1
), now_held AS (
  SELECT tag_ids, list_ids FROM contacts_history WHERE valid_to IS NULL
), then_held AS (
  SELECT arg_max(h.tag_ids, h._synced_at) AS tag_ids, arg_max(h.list_ids, h._synced_at) AS list_ids
  FROM contacts_history h JOIN prev p ON h._synced_at <= p.prev_at
  LEFT JOIN contacts c ON c.id = h.id
  WHERE c._deleted_at IS NULL OR c._deleted_at > p.prev_at
  GROUP BY h.id
), members AS (
  SELECT 'tag' AS kind, unnest(tag_ids) AS id, true AS is_current, false AS was_current FROM now_held
  UNION ALL
  SELECT 'list' AS kind, unnest(list_ids) AS id, true AS is_current, false AS was_current FROM now_held
  UNION ALL
  SELECT 'tag' AS kind, unnest(tag_ids) AS id, false AS is_current, true AS was_current FROM then_held
  UNION ALL
  SELECT 'list' AS kind, unnest(list_ids) AS id, false AS is_current, true AS was_current FROM then_held
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
