-- contacts_history becomes a view: the closed versions stay in a table (_contacts_history_closed,
-- the same columns), and each live contact's open version is read from `contacts` itself: its
-- typed columns, `_valid_from` (new here: when the version began) and its `_load_id`/`_synced_at`
-- (the load that opened the version: only a tombstone writes those without opening a version, and
-- it closes the version first). A new contact is then written once, not twice (bench/results/notes.md,
-- "What the history's copy of each new contact costs"). Readers see the same rows as before.
ALTER TABLE contacts ADD COLUMN _valid_from TIMESTAMPTZ;

-- Only an open version that is the contact's row (same fingerprint, load and time: crmsync always
-- wrote them together) moves; any other stays in the table as it is, so no row changes (an open
-- version left there is not closed by later loads: no crmsync wrote one).
UPDATE contacts SET _valid_from = h.valid_from
FROM contacts_history h
WHERE h.id = contacts.id AND h.valid_to IS NULL AND contacts._deleted_at IS NULL
  AND h._fingerprint = contacts._fingerprint AND h._load_id = contacts._load_id AND h._synced_at = contacts._synced_at;

DELETE FROM contacts_history
WHERE valid_to IS NULL AND id IN (SELECT id FROM contacts WHERE _valid_from IS NOT NULL);

ALTER TABLE contacts_history RENAME TO _contacts_history_closed;

-- Every version of a contact; the current one has valid_to NULL (only live contacts have one;
-- valid_to takes its type, TIMESTAMPTZ, from the closed versions).
CREATE VIEW contacts_history AS
SELECT
  id, user_id, hash, email, first_name, last_name, full_name, status, contact_type, phone,
  address_line_1, address_line_2, city, state, postal_code, country, date_of_birth, photo,
  company_id, total_points, life_time_value, tag_ids, list_ids, custom_values, created_at,
  updated_at, _fingerprint, valid_from, valid_to, _load_id, _synced_at
FROM _contacts_history_closed
UNION ALL
SELECT
  id, user_id, hash, email, first_name, last_name, full_name, status, contact_type, phone,
  address_line_1, address_line_2, city, state, postal_code, country, date_of_birth, photo,
  company_id, total_points, life_time_value, tag_ids, list_ids, custom_values, created_at,
  updated_at, _fingerprint, _valid_from AS valid_from, NULL AS valid_to,
  _load_id, _synced_at
FROM contacts
WHERE _deleted_at IS NULL AND _valid_from IS NOT NULL;
