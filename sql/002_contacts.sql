-- Contacts: one row per contact id (no PRIMARY KEY index: loads merge through a hash join,
-- which is faster than ART-index upserts at a million rows; uniqueness is kept by the merge).
CREATE TABLE contacts (
  id               BIGINT NOT NULL,
  user_id          BIGINT,
  hash             VARCHAR,
  email            VARCHAR,
  first_name       VARCHAR,
  last_name        VARCHAR,
  full_name        VARCHAR,
  status           VARCHAR,
  contact_type     VARCHAR,
  phone            VARCHAR,
  address_line_1   VARCHAR,
  address_line_2   VARCHAR,
  city             VARCHAR,
  state            VARCHAR,
  postal_code      VARCHAR,
  country          VARCHAR,
  date_of_birth    DATE,
  photo            VARCHAR,
  company_id       BIGINT,
  total_points     DOUBLE,
  life_time_value  DOUBLE,
  tag_ids          BIGINT[],
  list_ids         BIGINT[],
  custom_values    JSON,
  created_at       TIMESTAMPTZ,
  updated_at       TIMESTAMPTZ,
  raw              JSON,
  _fingerprint     VARCHAR NOT NULL,
  _load_id         VARCHAR NOT NULL,
  _synced_at       TIMESTAMPTZ NOT NULL,
  _deleted_at      TIMESTAMPTZ
);

-- Every version of a contact; the current one has valid_to NULL. A tombstone closes the
-- current version. `raw` is kept on contacts only (history holds the normalized fields).
CREATE TABLE contacts_history (
  id               BIGINT NOT NULL,
  user_id          BIGINT,
  hash             VARCHAR,
  email            VARCHAR,
  first_name       VARCHAR,
  last_name        VARCHAR,
  full_name        VARCHAR,
  status           VARCHAR,
  contact_type     VARCHAR,
  phone            VARCHAR,
  address_line_1   VARCHAR,
  address_line_2   VARCHAR,
  city             VARCHAR,
  state            VARCHAR,
  postal_code      VARCHAR,
  country          VARCHAR,
  date_of_birth    DATE,
  photo            VARCHAR,
  company_id       BIGINT,
  total_points     DOUBLE,
  life_time_value  DOUBLE,
  tag_ids          BIGINT[],
  list_ids         BIGINT[],
  custom_values    JSON,
  created_at       TIMESTAMPTZ,
  updated_at       TIMESTAMPTZ,
  _fingerprint     VARCHAR NOT NULL,
  valid_from       TIMESTAMPTZ NOT NULL,
  valid_to         TIMESTAMPTZ,
  _load_id         VARCHAR NOT NULL,
  _synced_at       TIMESTAMPTZ NOT NULL
);

CREATE TABLE contact_tags (
  contact_id  BIGINT NOT NULL,
  tag_id      BIGINT NOT NULL,
  _load_id    VARCHAR NOT NULL,
  _synced_at  TIMESTAMPTZ NOT NULL
);

CREATE TABLE contact_lists (
  contact_id  BIGINT NOT NULL,
  list_id     BIGINT NOT NULL,
  _load_id    VARCHAR NOT NULL,
  _synced_at  TIMESTAMPTZ NOT NULL
);
