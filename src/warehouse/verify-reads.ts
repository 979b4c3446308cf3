import { CONTACT_COLUMNS } from './contact-columns.js';
import { ENTITY_SPECS, FUNNEL_SUBSCRIBER_SPEC, type ColumnType, type RowSpec } from './entity-specs.js';
import { quoteIdent } from './quote.js';
import type { EntityTable } from './types.js';

/** What `crmsync verify` needs of a warehouse session: read-only SQL. */
export interface VerifyReader {
  query(sql: string, params?: readonly unknown[]): Promise<Record<string, unknown>[]>;
}

/** A warehouse row with every typed column in a comparable form (see `comparableSelect`). */
export type WarehouseRow = Record<string, unknown>;

/**
 * Each typed column as verify compares it: timestamps as epoch milliseconds (no session time
 * zone involved), dates as YYYY-MM-DD, JSON as text, id lists as sorted comma-joined text.
 */
function comparableSelect(columns: readonly (readonly [string, ColumnType | 'BIGINT[]'])[]): string {
  return columns
    .map(([name, type]) => {
      const c = quoteIdent(name);
      switch (type) {
        case 'TIMESTAMPTZ':
          return `epoch_ms(${c}) AS ${c}`;
        case 'DATE':
          return `strftime(${c}, '%Y-%m-%d') AS ${c}`;
        case 'JSON':
          return `CAST(${c} AS VARCHAR) AS ${c}`;
        case 'BIGINT[]':
          return `array_to_string(list_sort(list_distinct(${c})), ',') AS ${c}`;
        case 'VARCHAR[]':
          return `CAST(to_json(${c}) AS VARCHAR) AS ${c}`;
        default:
          return c;
      }
    })
    .join(', ');
}

/** Live (not tombstoned) contacts, every typed column, in id order. */
export async function readLiveContacts(w: VerifyReader): Promise<WarehouseRow[]> {
  return w.query(`SELECT ${comparableSelect(CONTACT_COLUMNS)} FROM contacts WHERE _deleted_at IS NULL ORDER BY id`);
}

/** Ids of contacts the warehouse holds as deleted in the CRM. */
export async function readTombstonedContactIds(w: VerifyReader): Promise<number[]> {
  const rows = await w.query('SELECT id FROM contacts WHERE _deleted_at IS NOT NULL ORDER BY id');
  return rows.map((r) => Number(r.id));
}

/** Every row of `contact_tags` or `contact_lists` as [contact id, tag or list id]. */
export async function readMemberships(w: VerifyReader, kind: 'tags' | 'lists'): Promise<Array<[number, number]>> {
  const [table, col] = kind === 'tags' ? ['contact_tags', 'tag_id'] : ['contact_lists', 'list_id'];
  const rows = await w.query(`SELECT contact_id, ${quoteIdent(col)} AS ref FROM ${quoteIdent(table)} ORDER BY contact_id, ref`);
  return rows.map((r) => [Number(r.contact_id), Number(r.ref)]);
}

/** Live rows of a small stream's table, typed columns in comparable form. */
export async function readEntityRows(w: VerifyReader, table: EntityTable): Promise<WarehouseRow[]> {
  return readSpecRows(w, ENTITY_SPECS[table]);
}

/** Every funnel subscriber row (absent ones are deleted, not tombstoned). */
export async function readFunnelSubscriberRows(w: VerifyReader): Promise<WarehouseRow[]> {
  return readSpecRows(w, FUNNEL_SUBSCRIBER_SPEC);
}

async function readSpecRows(w: VerifyReader, spec: RowSpec): Promise<WarehouseRow[]> {
  const live = spec.absent === 'tombstone' ? ' WHERE _deleted_at IS NULL' : '';
  const order = spec.key.map(quoteIdent).join(', ');
  return w.query(`SELECT ${comparableSelect(spec.columns)} FROM ${quoteIdent(spec.table)}${live} ORDER BY ${order}`);
}
