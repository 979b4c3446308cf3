-- Live contacts with the titles of their tags and lists (ids whose tag or list is unknown show as '#id').
CREATE OR REPLACE VIEW contact_tags_named AS
SELECT ct.contact_id, ct.tag_id, coalesce(t.title, '#' || ct.tag_id) AS tag_title, t.slug AS tag_slug
FROM contact_tags ct LEFT JOIN tags t ON t.id = ct.tag_id;

CREATE OR REPLACE VIEW contact_lists_named AS
SELECT cl.contact_id, cl.list_id, coalesce(l.title, '#' || cl.list_id) AS list_title, l.slug AS list_slug
FROM contact_lists cl LEFT JOIN lists l ON l.id = cl.list_id;

CREATE OR REPLACE VIEW contacts_current AS
WITH tg AS (
  SELECT contact_id, list(tag_title ORDER BY tag_title) AS tag_titles FROM contact_tags_named GROUP BY contact_id
), ls AS (
  SELECT contact_id, list(list_title ORDER BY list_title) AS list_titles FROM contact_lists_named GROUP BY contact_id
), live AS (
  -- Not `* EXCLUDE (...)`: the lake's contacts leave out _valid_from (the open version's start,
  -- which contacts_history carries), and the same view must bind over either.
  SELECT COLUMNS(col -> col NOT IN ('raw', '_fingerprint', '_deleted_at', '_valid_from')) FROM contacts WHERE _deleted_at IS NULL
)
SELECT c.*,
  coalesce(tg.tag_titles, []) AS tag_titles,
  coalesce(ls.list_titles, []) AS list_titles
FROM live c
LEFT JOIN tg ON tg.contact_id = c.id
LEFT JOIN ls ON ls.contact_id = c.id;

-- What every contact looked like at a moment: SELECT * FROM contacts_as_of(TIMESTAMPTZ '2026-01-01 00:00:00+00').
CREATE OR REPLACE MACRO contacts_as_of(at_time) AS TABLE
SELECT * FROM contacts_history
WHERE valid_from <= at_time AND (valid_to IS NULL OR valid_to > at_time);
