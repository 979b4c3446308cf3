-- Small streams, re-read whole each run. Rows absent from a complete read get _deleted_at.

CREATE TABLE tags (
  id                 BIGINT PRIMARY KEY,
  title              VARCHAR,
  slug               VARCHAR,
  description        VARCHAR,
  total_count        BIGINT,
  subscribers_count  BIGINT,
  created_at         TIMESTAMPTZ,
  updated_at         TIMESTAMPTZ,
  raw                JSON,
  _fingerprint       VARCHAR NOT NULL,
  _load_id           VARCHAR NOT NULL,
  _synced_at         TIMESTAMPTZ NOT NULL,
  _deleted_at        TIMESTAMPTZ
);

CREATE TABLE lists (
  id                 BIGINT PRIMARY KEY,
  title              VARCHAR,
  slug               VARCHAR,
  description        VARCHAR,
  is_public          BOOLEAN,
  total_count        BIGINT,
  subscribers_count  BIGINT,
  created_at         TIMESTAMPTZ,
  updated_at         TIMESTAMPTZ,
  raw                JSON,
  _fingerprint       VARCHAR NOT NULL,
  _load_id           VARCHAR NOT NULL,
  _synced_at         TIMESTAMPTZ NOT NULL,
  _deleted_at        TIMESTAMPTZ
);

CREATE TABLE companies (
  id                BIGINT PRIMARY KEY,
  name              VARCHAR,
  industry          VARCHAR,
  website           VARCHAR,
  email             VARCHAR,
  phone             VARCHAR,
  type              VARCHAR,
  owner_id          BIGINT,
  employees_number  BIGINT,
  status            VARCHAR,
  city              VARCHAR,
  country           VARCHAR,
  created_at        TIMESTAMPTZ,
  updated_at        TIMESTAMPTZ,
  raw               JSON,
  _fingerprint      VARCHAR NOT NULL,
  _load_id          VARCHAR NOT NULL,
  _synced_at        TIMESTAMPTZ NOT NULL,
  _deleted_at       TIMESTAMPTZ
);

CREATE TABLE custom_fields (
  slug          VARCHAR PRIMARY KEY,
  label         VARCHAR,
  type          VARCHAR,
  field_key     VARCHAR,
  options       VARCHAR[],
  raw           JSON,
  _fingerprint  VARCHAR NOT NULL,
  _load_id      VARCHAR NOT NULL,
  _synced_at    TIMESTAMPTZ NOT NULL,
  _deleted_at   TIMESTAMPTZ
);

CREATE TABLE campaigns (
  id                BIGINT PRIMARY KEY,
  title             VARCHAR,
  slug              VARCHAR,
  status            VARCHAR,
  email_subject     VARCHAR,
  email_pre_header  VARCHAR,
  recipients_count  BIGINT,
  scheduled_at      TIMESTAMPTZ,
  design_template   VARCHAR,
  created_at        TIMESTAMPTZ,
  updated_at        TIMESTAMPTZ,
  stats             JSON,
  raw               JSON,
  _fingerprint      VARCHAR NOT NULL,
  _load_id          VARCHAR NOT NULL,
  _synced_at        TIMESTAMPTZ NOT NULL,
  _deleted_at       TIMESTAMPTZ
);

CREATE TABLE funnels (
  id                 BIGINT PRIMARY KEY,
  title              VARCHAR,
  trigger_name       VARCHAR,
  status             VARCHAR,
  subscribers_count  BIGINT,
  created_at         TIMESTAMPTZ,
  updated_at         TIMESTAMPTZ,
  raw                JSON,
  _fingerprint       VARCHAR NOT NULL,
  _load_id           VARCHAR NOT NULL,
  _synced_at         TIMESTAMPTZ NOT NULL,
  _deleted_at        TIMESTAMPTZ
);

-- One row per (funnel, contact) enrolment; `metrics` holds the per-step benchmark rows.
CREATE TABLE funnel_subscribers (
  id                   BIGINT NOT NULL,
  funnel_id            BIGINT NOT NULL,
  subscriber_id        BIGINT NOT NULL,
  status               VARCHAR,
  last_sequence_id     BIGINT,
  next_sequence_id     BIGINT,
  next_execution_time  TIMESTAMPTZ,
  created_at           TIMESTAMPTZ,
  updated_at           TIMESTAMPTZ,
  metrics              JSON,
  raw                  JSON,
  _fingerprint         VARCHAR NOT NULL,
  _load_id             VARCHAR NOT NULL,
  _synced_at           TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (funnel_id, id)
);
