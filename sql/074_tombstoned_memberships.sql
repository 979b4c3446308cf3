-- Memberships of tombstoned contacts: a delete now removes them with the tombstone (contact_tags
-- and contact_lists hold current memberships only); this clears those earlier deletes left behind,
-- and marks their lake partitions (contact id // 50000, as CONTACT_BUCKET_SIZE) for republishing.
INSERT OR IGNORE INTO _lake_dirty
SELECT t.name, b.part
FROM (
  SELECT DISTINCT CAST(m.contact_id // 50000 AS VARCHAR) AS part
  FROM (SELECT contact_id FROM contact_tags UNION ALL SELECT contact_id FROM contact_lists) m
  JOIN contacts c ON c.id = m.contact_id
  WHERE c._deleted_at IS NOT NULL
) b
CROSS JOIN (VALUES ('contact_tags'), ('contact_lists')) t(name);

DELETE FROM contact_tags WHERE contact_id IN (SELECT id FROM contacts WHERE _deleted_at IS NOT NULL);
DELETE FROM contact_lists WHERE contact_id IN (SELECT id FROM contacts WHERE _deleted_at IS NOT NULL);
