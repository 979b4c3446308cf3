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
 * 10,000 ids per range keeps a million contacts in 100 files a table. A scan publishes each range
 * once its pages are all loaded, so what is left for the end of a scan is the last range or two:
 * with 50,000 the last range of a 100k backfill was half the lake, written after its last page
 * (bench/results/notes.md, "smaller lake buckets"). A lake written with another size is rewritten
 * in this one at its next publish (publish-lake.ts).
 */
export const CONTACT_BUCKET_SIZE = 10_000;
