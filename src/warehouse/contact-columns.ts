/** Typed columns of `contacts` (and, without raw, of `contacts_history`), in table order. */
export const CONTACT_COLUMNS = [
  ['id', 'BIGINT'],
  ['user_id', 'BIGINT'],
  ['hash', 'VARCHAR'],
  ['email', 'VARCHAR'],
  ['first_name', 'VARCHAR'],
  ['last_name', 'VARCHAR'],
  ['full_name', 'VARCHAR'],
  ['status', 'VARCHAR'],
  ['contact_type', 'VARCHAR'],
  ['phone', 'VARCHAR'],
  ['address_line_1', 'VARCHAR'],
  ['address_line_2', 'VARCHAR'],
  ['city', 'VARCHAR'],
  ['state', 'VARCHAR'],
  ['postal_code', 'VARCHAR'],
  ['country', 'VARCHAR'],
  ['date_of_birth', 'DATE'],
  ['photo', 'VARCHAR'],
  ['company_id', 'BIGINT'],
  ['total_points', 'DOUBLE'],
  ['life_time_value', 'DOUBLE'],
  ['tag_ids', 'BIGINT[]'],
  ['list_ids', 'BIGINT[]'],
  ['custom_values', 'JSON'],
  ['created_at', 'TIMESTAMPTZ'],
  ['updated_at', 'TIMESTAMPTZ'],
] as const;

export const CONTACT_FIELD_NAMES: readonly string[] = CONTACT_COLUMNS.map(([n]) => n);

/**
 * Contacts are partitioned in the lake by id range: a load rewrites only the ranges it touched.
 * 25,000 ids per range keeps a million contacts in 40 files a table. A scan publishes each range
 * once its pages are all loaded, so the end of a scan has the last range left: with 50,000 that
 * was half the lake of a 100k backfill, written after its last page. 10,000 left less still, but
 * slowed a CPU-bound backfill more than that saved: each publish links every other range's files
 * into its generation, and a small range's COPY reads more rows of other ranges around its own
 * (bench/results/notes.md, "smaller lake buckets"). A lake written with another size is rewritten
 * in this one at its next publish (publish-lake.ts).
 */
export const CONTACT_BUCKET_SIZE = 25_000;
