import { CONTACT_BUCKET_SIZE } from './contact-columns.js';
import { quoteIdent } from './quote.js';
import { REPORT_TABLES } from './report-snapshots.js';

/**
 * How each table is laid out in the lake:
 * - `bucket`: hive partitions `id_bucket=N/` by id range; a publish rewrites the ranges loads
 *   touched (recorded in `_lake_dirty`) and hard-links the others from the previous generation.
 * - `append`: one new file per publish with the new snapshots; compacted into one file when a
 *   table would exceed MAX_APPEND_FILES.
 * - `whole`: small tables, rewritten as one file when their content hash changed.
 */
export type LakeLayout = { kind: 'bucket'; column: string; size: number } | { kind: 'append'; column: string } | { kind: 'whole' };

export const MAX_APPEND_FILES = 16;
export const BUCKET_COLUMN = 'id_bucket';

const bucket = (column: string): LakeLayout => ({ kind: 'bucket', column, size: CONTACT_BUCKET_SIZE });

export const LAKE_TABLES: Record<string, LakeLayout> = {
  contacts: bucket('id'),
  contacts_history: bucket('id'),
  contact_tags: bucket('contact_id'),
  contact_lists: bucket('contact_id'),
  tags: { kind: 'whole' },
  lists: { kind: 'whole' },
  companies: { kind: 'whole' },
  custom_fields: { kind: 'whole' },
  campaigns: { kind: 'whole' },
  funnels: { kind: 'whole' },
  funnel_subscribers: { kind: 'whole' },
  webhook_events: { kind: 'whole' },
  // Published so the catalog's webhook_dead_letters_open (the report, analysts) sees them too.
  webhook_dead_letters: { kind: 'whole' },
  // Webhook event tables: rewritten whole while small; an append layout keyed on a load sequence is the next step.
  email_events: { kind: 'whole' },
  commerce_events: { kind: 'whole' },
  _sync_state: { kind: 'whole' },
  _sync_runs: { kind: 'whole' },
  // Published by `crmsync push` after each run, so push_dead_letters reads in the catalog.
  _push_ledger: { kind: 'whole' },
  ...Object.fromEntries(REPORT_TABLES.map((t) => [t, { kind: 'append', column: 'snapshot_id' } as LakeLayout])),
  report_automation_step_rows: { kind: 'append', column: 'snapshot_id' },
  report_daily_counts: { kind: 'append', column: 'snapshot_id' },
};

/**
 * Warehouse columns a table's lake files leave out: `contacts._valid_from` is the start of the
 * open version, which the lake carries in `contacts_history` already; leaving it out keeps the
 * lake's `contacts` as it was (its buckets published before the column existed stay readable
 * beside new ones: readers take a bucketed table's schema from one of its files).
 */
export const LAKE_OMITTED_COLUMNS: Readonly<Record<string, readonly string[]>> = { contacts: ['_valid_from'] };

/** The rows of `table` as its lake files hold them. */
export function lakeSelectSql(table: string): string {
  const omitted = LAKE_OMITTED_COLUMNS[table] ?? [];
  return `SELECT *${omitted.length > 0 ? ` EXCLUDE (${omitted.map(quoteIdent).join(', ')})` : ''} FROM ${quoteIdent(table)}`;
}

/** Where generations of each table live; `<lake>/<table>` is a symlink to the current one. */
export const GENERATIONS_DIR = '_generations';
export const MANIFEST_FILE = '_manifest.json';

/** The contact tables, laid out by id bucket. */
export const BUCKETED_LAKE_TABLES: readonly string[] = Object.keys(LAKE_TABLES).filter((t) => LAKE_TABLES[t]!.kind === 'bucket');

/** The catalog DuckDB file readers open, by default inside the lake (see write-lake-catalog.ts). */
export const CATALOG_FILE = 'catalog.duckdb';
