import type { DuckDBConnection } from '@duckdb/node-api';
import { CONTACT_BUCKET_SIZE, CONTACT_FIELD_NAMES } from './contact-columns.js';
import { contactReasonsSql, pageRowsSql, typedContactRowsSql } from './contact-page-sql.js';
import { WarehouseInputError, WarehousePageUnreadableError } from './errors.js';
import { appendStagedContacts, holdsIdFrom, mergeStagedContacts } from './load-contacts.js';
import { quoteIdent, quoteLiteral } from './quote.js';
import { timestampLiteral } from './sql-expr.js';
import { inTransaction, readRows, run } from './sql-run.js';
import { stageColumns } from './stage-columns.js';
import { stageContactRows } from './stage-contact-rows.js';
import type { LoadContext, LoadStats } from './types.js';

/** One listing response of `GET /subscribers`, as the CRM sent it. */
export interface ContactPage {
  /** The page number requested: rejected rows are named by it. */
  page: number;
  /** The response body, unparsed. */
  body: string;
  /**
   * Load only the rows with an id above this (an incremental read of rows past those held, or
   * past the sweep's cursor). Rows whose id cannot be read are kept, so they are rejected.
   */
  minId?: number;
  /** Load only the page's first rows (the updated-first scan: the rows changed since its watermark). */
  firstRows?: number;
  /** Where each row starts and ends in `body` (`RawPage.rowSpans`): the rows are taken by these, not by parsing the body. */
  rowSpans?: readonly number[];
}

export interface ContactPagesStats extends LoadStats {
  /** Rows that did not fit the schema, recorded in `_contact_rejects` with the reason. */
  rejected: number;
}

export const MAX_PAGE_BYTES = 64 << 20;
export const MAX_PAGES_PER_LOAD = 5_000;
export const MAX_LOAD_BYTES = 512 << 20;

/**
 * Loads contact listing pages as the CRM sent them: DuckDB parses the bodies and applies the
 * tolerant schema (`contact-page-sql.ts`), so no contact is parsed, checked or serialized in
 * JavaScript. Rows that do not fit go to `_contact_rejects` (page, position, id as sent, every
 * reason, the record) and the others load; a later page wins over an earlier one for the same id.
 * Then as `loadContacts`: an append when every id is above the highest held, else the
 * fingerprinted merge, history and memberships, in one transaction with the rejects.
 */
export async function loadContactPages(connection: DuckDBConnection, pages: readonly ContactPage[], ctx: LoadContext, opts: { siteTimeZone: string }): Promise<ContactPagesStats> {
  await typeContactPages(connection, pages, { table: '_stage_contacts_checked', temp: true }, opts);
  return loadCheckedStage(connection, ctx);
}

/**
 * The first half of `loadContactPages`, which reads only the pages: stages them on `connection`
 * and creates the table `into` (`_stage_contacts_checked` as a temp table, or a table of another
 * catalog for `loadTypedContactPages` on another connection) holding each row typed and checked, the
 * rows a page's filters leave out already dropped. A body DuckDB cannot read is a
 * WarehousePageUnreadableError naming the pages, not quoting them.
 */
export async function typeContactPages(connection: DuckDBConnection, pages: readonly ContactPage[], into: { table: string; temp?: boolean }, opts: { siteTimeZone: string }): Promise<void> {
  checkPages(pages);
  const numbered = pages.map((p, seq) => ({ seq, ...p }));
  const filtered = pages.some((p) => p.minId !== undefined || p.firstRows !== undefined);
  const columns = filtered ? ['seq', 'page', 'body', 'min_id', 'first_rows'] : ['seq', 'page', 'body'];
  const num = (n: number | undefined) => (n === undefined ? null : String(n));
  // A page with row spans is staged as its rows; its body stays in JavaScript.
  await stageColumns(connection, '_stage_contact_pages', columns, numbered, (p) => [String(p.seq), String(p.page), p.rowSpans ? null : p.body, num(p.minId), num(p.firstRows)]);
  await stageContactRows(
    connection,
    '_stage_contact_rows',
    numbered.flatMap((p) => (p.rowSpans ? [{ seq: p.seq, page: p.page, body: p.body, spans: p.rowSpans }] : [])),
  );
  try {
    await connection.run(`CREATE OR REPLACE ${into.temp ? 'TEMP TABLE' : 'TABLE'} ${into.table} AS ${typedContactRowsSql(`(${pageRowsSql('_stage_contact_pages', '_stage_contact_rows')})`, opts.siteTimeZone)};
      ${filtered ? `${unaskedRowsSql(into.table)};` : ''}
      DROP TABLE _stage_contact_pages; DROP TABLE _stage_contact_rows`);
  } catch (err) {
    await run(connection, 'DROP TABLE IF EXISTS _stage_contact_pages; DROP TABLE IF EXISTS _stage_contact_rows');
    if (!/Malformed JSON/i.test(String(err))) throw err;
    // DuckDB's message quotes the body; contact data stays out of errors.
    const numbers = pages.map((p) => p.page);
    throw new WarehousePageUnreadableError(
      `A contact page among pages ${Math.min(...numbers)}-${Math.max(...numbers)} is not readable JSON; the CRM sent a body that is not a listing, fetch those pages again or report it with the body.`,
    );
  }
}

/**
 * The second half: loads the rows `typeContactPages` put in `table` (a table of another catalog
 * of this instance, which a transaction here may read but not write), and drops it.
 */
export async function loadTypedContactPages(connection: DuckDBConnection, table: string, ctx: LoadContext): Promise<ContactPagesStats> {
  await run(connection, `CREATE OR REPLACE TEMP TABLE _stage_contacts_checked AS SELECT * FROM ${table}; DROP TABLE ${table}`);
  return loadCheckedStage(connection, ctx);
}

async function loadCheckedStage(connection: DuckDBConnection, ctx: LoadContext): Promise<ContactPagesStats> {
  try {
    return await inTransaction(connection, () => loadChecked(connection, ctx));
  } finally {
    await run(connection, 'DROP TABLE IF EXISTS _stage_contacts_checked; DROP TABLE IF EXISTS _stage_contacts; DROP TABLE IF EXISTS _stage_contact_raw');
  }
}

/**
 * Drops the rows a page's filters leave out, before any is rejected or loaded: past `first_rows`,
 * or with a readable id not above `min_id` (an unreadable id stays, to be rejected).
 */
const unaskedRowsSql = (table: string) => `DELETE FROM ${table} c USING _stage_contact_pages p
  WHERE c.seq = CAST(p.seq AS INTEGER) AND (c.position > CAST(p.first_rows AS BIGINT) OR c.id <= CAST(p.min_id AS BIGINT))`;

/** Sets `_reason` on the checked rows a cheap check could not pass (rare: none in most loads). */
async function giveReasons(connection: DuckDBConnection): Promise<void> {
  const suspect = '(SELECT seq, page, position, raw FROM _stage_contacts_checked WHERE _suspect)';
  await run(
    connection,
    `UPDATE _stage_contacts_checked c SET _reason = s._reason FROM (${contactReasonsSql(suspect)}) s
    WHERE c._suspect AND c.seq = s.seq AND c.position = s.position AND s._reason IS NOT NULL`,
  );
}

function checkPages(pages: readonly ContactPage[]): void {
  if (pages.length > MAX_PAGES_PER_LOAD) throw new WarehouseInputError(`loadContactPages got ${pages.length} pages; load at most ${MAX_PAGES_PER_LOAD} per call (split the batch).`);
  let bytes = 0;
  for (const p of pages) {
    bytes += p.body.length;
    if (!Number.isSafeInteger(p.page)) throw new WarehouseInputError(`Page number ${String(p.page)} is not an integer; pass the page number that was requested.`);
    for (const [k, n] of [
      ['minId', p.minId],
      ['firstRows', p.firstRows],
    ] as const) {
      if (n !== undefined && !Number.isSafeInteger(n)) throw new WarehouseInputError(`${k} ${String(n)} of contact page ${p.page} is not an integer; pass a whole number or leave it out.`);
    }
    if (p.rowSpans && !spansFit(p.rowSpans, p.body.length))
      throw new WarehouseInputError(`The row spans of contact page ${p.page} do not fit its body; pass the rowSpans the scan of that body gave, or none.`);
    if (p.body.length > MAX_PAGE_BYTES) throw new WarehouseInputError(`Contact page ${p.page} is ${p.body.length} bytes; the limit is ${MAX_PAGE_BYTES} (request fewer contacts per page).`);
  }
  if (bytes > MAX_LOAD_BYTES) throw new WarehouseInputError(`loadContactPages got ${bytes} bytes of pages; load at most ${MAX_LOAD_BYTES} per call (split the batch).`);
}

/** Start and end pairs in order, inside a body of `length`, each row at least `{}`. */
function spansFit(spans: readonly number[], length: number): boolean {
  if (spans.length % 2 !== 0) return false;
  let last = 0;
  for (let k = 0; k < spans.length; k += 2) {
    const [a, b] = [spans[k]!, spans[k + 1]!];
    if (!Number.isSafeInteger(a) || !Number.isSafeInteger(b) || a < last || b < a + 2 || b > length) return false;
    last = b;
  }
  return true;
}

/**
 * `_stage_contacts`: when `allFit` (no reject, no id twice), the checked rows themselves (every
 * statement after names its columns), renamed instead of copied with their raw records; else the
 * rows `select` picks.
 */
async function stageFitting(connection: DuckDBConnection, allFit: boolean, select: string): Promise<void> {
  if (allFit) await run(connection, 'DROP TABLE IF EXISTS _stage_contacts; ALTER TABLE _stage_contacts_checked RENAME TO _stage_contacts');
  else await run(connection, `CREATE OR REPLACE TEMP TABLE _stage_contacts AS ${select}`);
}

/**
 * The checked rows' figures in one read (each statement costs a few milliseconds of every load
 * whatever its size): rows not yet given a reason that a cheap check could not pass, rejects,
 * fitting rows, their distinct ids, the lowest, and the lake parts (id ranges) they fall in.
 */
async function readChecked(connection: DuckDBConnection): Promise<Record<string, unknown>> {
  return (
    await readRows(
      connection,
      `SELECT count(*) FILTER (WHERE _suspect AND _reason IS NULL) AS suspect, count(*) FILTER (WHERE _reason IS NOT NULL) AS rejected,
      count(*) FILTER (WHERE _reason IS NULL) AS fit, count(DISTINCT id) FILTER (WHERE _reason IS NULL) AS ids,
      coalesce(min(id) FILTER (WHERE _reason IS NULL), 0) AS min_id,
      coalesce(list(DISTINCT id // ${CONTACT_BUCKET_SIZE}) FILTER (WHERE _reason IS NULL), []) AS parts FROM _stage_contacts_checked`,
    )
  )[0]!;
}

async function loadChecked(connection: DuckDBConnection, ctx: LoadContext): Promise<ContactPagesStats> {
  const load = quoteLiteral(ctx.loadId);
  const at = timestampLiteral(ctx.syncedAt);
  let counts = await readChecked(connection);
  if (Number(counts.suspect) > 0) {
    await giveReasons(connection);
    counts = await readChecked(connection);
  }
  const rejected = Number(counts.rejected);
  if (rejected > 0) {
    await run(connection, `INSERT INTO _contact_rejects SELECT page, position, json_extract_string(raw, '$.id'), _reason, raw, ${load}, ${at} FROM _stage_contacts_checked WHERE _reason IS NOT NULL`);
  }
  const total = Number(counts.ids);
  if (total === 0) return { inserted: 0, updated: 0, unchanged: 0, deleted: 0, rejected };
  // A page re-read within one batch carries the newer state: the last occurrence of an id wins.
  const latest = Number(counts.fit) > total ? ' QUALIFY row_number() OVER (PARTITION BY id ORDER BY seq DESC, position DESC) = 1' : '';
  const fits = (where = '') => `_reason IS NULL${where}${latest}`;
  const cols = [...CONTACT_FIELD_NAMES, '_fingerprint'].map(quoteIdent).join(', ');
  if (!(await holdsIdFrom(connection, Number(counts.min_id)))) {
    // The common case: every row fits and every id is new.
    await stageFitting(connection, rejected === 0 && latest === '', `SELECT ${cols}, raw FROM _stage_contacts_checked WHERE ${fits()}`);
    // The fitting rows' ids are the stage's, whichever way it was made.
    await appendStagedContacts(connection, ctx, new Set((counts.parts as unknown[]).map(Number)));
    return { inserted: total, updated: 0, unchanged: 0, deleted: 0, rejected };
  }
  // The stage keeps each row's raw record, DuckDB's own parse: the diff takes it from there for
  // the rows that changed. Every row fitting once, the checked rows are the stage, not a copy.
  await stageFitting(connection, rejected === 0 && latest === '', `SELECT ${cols}, raw FROM _stage_contacts_checked WHERE ${fits()}`);
  const stats = await mergeStagedContacts(connection, total, ctx, 'in-stage');
  return { ...stats, rejected };
}
