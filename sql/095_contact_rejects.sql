-- Contact rows from listing pages that do not fit the tolerant schema (an id that is not an
-- integer, a count that is not a number, an object where text belongs...). The page load keeps
-- the other rows and records each rejected one here, named by its page and position, with every
-- reason and the record as sent, so the CRM's data can be fixed and the page synced again.
CREATE TABLE IF NOT EXISTS _contact_rejects (
  page        INTEGER NOT NULL,
  position    INTEGER NOT NULL,
  contact_id  VARCHAR,
  reason      VARCHAR NOT NULL,
  raw         JSON,
  _load_id    VARCHAR NOT NULL,
  _synced_at  TIMESTAMPTZ NOT NULL
);
