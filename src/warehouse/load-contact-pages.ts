import type { DuckDBConnection } from '@duckdb/node-api';
import { CONTACT_BUCKET_SIZE, CONTACT_FIELD_NAMES } from './contact-columns.js';
import { contactReasonsSql, pageRowsSql, typedContactRowsSql } from './contact-page-sql.js';
import { WarehouseInputError, WarehousePageUnreadableError } from './errors.js';
import { appendStagedContacts, holdsIdFrom, mergeStagedContacts, type Stage } from './load-contacts.js';
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
  await typeContactPages(connection, pages, CHECKED, opts);
  try {
    return await inTransaction(connection, async () => loadChecked(connection, ctx, CHECKED, await checkTypedRows(connection, CHECKED.table)));
  } finally {
    await dropStages(connection);
  }
}

/** The typed and checked rows of `loadContactPages`, on the writer's connection. */
const CHECKED: Stage = { table: '_stage_contacts_checked', temp: true };

/**
 * What the load needs to know of a typed table, in one read (each statement costs a few
 * milliseconds of every load whatever its size): its rejects, fitting rows, their distinct ids,
 * the lowest, and the lake parts (id ranges) they fall in. Each row a cheap check could not pass
 * is given its `_reason` first. `checkTypedRows` gives it.
 */
export interface CheckedRows {
  readonly rejected: number;
  readonly fit: number;
  readonly ids: number;
  readonly minId: number;
  readonly parts: readonly number[];
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
 * of this instance, which a transaction here may read but not write) and `checkTypedRows`
 * checked there, reading them in place; the caller drops `table` after. Copied into a stage of
 * this connection first, they cost the writer's connection 165-195 ms per 100,000 rows
 * (bench/results/notes.md, "what is left").
 */
export async function loadTypedContactPages(connection: DuckDBConnection, table: string, checked: CheckedRows, ctx: LoadContext): Promise<ContactPagesStats> {
  try {
    return await inTransaction(connection, () => loadChecked(connection, ctx, { table, temp: false }, checked));
  } finally {
    await dropStages(connection);
  }
}

async function dropStages(connection: DuckDBConnection): Promise<void> {
  await run(connection, `DROP TABLE IF EXISTS ${CHECKED.table}; DROP TABLE IF EXISTS _stage_contacts; DROP TABLE IF EXISTS _stage_contact_raw`);
}

/**
 * Drops the rows a page's filters leave out, before any is rejected or loaded: past `first_rows`,
 * or with a readable id not above `min_id` (an unreadable id stays, to be rejected).
 */
const unaskedRowsSql = (table: string) => `DELETE FROM ${table} c USING _stage_contact_pages p
  WHERE c.seq = CAST(p.seq AS INTEGER) AND (c.position > CAST(p.first_rows AS BIGINT) OR c.id <= CAST(p.min_id AS BIGINT))`;

/** Sets `_reason` on the rows of `table` a cheap check could not pass (rare: none in most loads). */
async function giveReasons(connection: DuckDBConnection, table: string): Promise<void> {
  const suspect = `(SELECT seq, page, position, raw FROM ${table} WHERE _suspect)`;
  await run(
    connection,
    `UPDATE ${table} c SET _reason = s._reason FROM (${contactReasonsSql(suspect)}) s
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
 * Gives each row of the typed table `table` that a cheap check could not pass its `_reason`, and
 * reads what the load needs (`CheckedRows`). On the connection that typed them: for a table
 * typed aside, the typing lane's, off the writer's.
 */
export async function checkTypedRows(connection: DuckDBConnection, table: string): Promise<CheckedRows> {
  let counts = await readChecked(connection, table);
  if (Number(counts.suspect) > 0) {
    await giveReasons(connection, table);
    counts = await readChecked(connection, table);
  }
  return {
    rejected: Number(counts.rejected),
    fit: Number(counts.fit),
    ids: Number(counts.ids),
    minId: Number(counts.min_id),
    parts: (counts.parts as unknown[]).map(Number),
  };
}

async function readChecked(connection: DuckDBConnection, table: string): Promise<Record<string, unknown>> {
  return (
    await readRows(
      connection,
      `SELECT count(*) FILTER (WHERE _suspect AND _reason IS NULL) AS suspect, count(*) FILTER (WHERE _reason IS NOT NULL) AS rejected,
      count(*) FILTER (WHERE _reason IS NULL) AS fit, count(DISTINCT id) FILTER (WHERE _reason IS NULL) AS ids,
      coalesce(min(id) FILTER (WHERE _reason IS NULL), 0) AS min_id,
      coalesce(list(DISTINCT id // ${CONTACT_BUCKET_SIZE}) FILTER (WHERE _reason IS NULL), []) AS parts FROM ${table}`,
    )
  )[0]!;
}

/**
 * Loads the checked rows of `source`: the rejects go to `_contact_rejects`, and the stage the
 * append or merge reads is `source` itself when every row fits once (every statement after names
 * its columns), else a temp table of the rows that do (the last of an id's rows).
 */
async function loadChecked(connection: DuckDBConnection, ctx: LoadContext, source: Stage, counts: CheckedRows): Promise<ContactPagesStats> {
  const load = quoteLiteral(ctx.loadId);
  const at = timestampLiteral(ctx.syncedAt);
  const { rejected, ids: total } = counts;
  if (rejected > 0) {
    await run(connection, `INSERT INTO _contact_rejects SELECT page, position, json_extract_string(raw, '$.id'), _reason, raw, ${load}, ${at} FROM ${source.table} WHERE _reason IS NOT NULL`);
  }
  if (total === 0) return { inserted: 0, updated: 0, unchanged: 0, deleted: 0, rejected };
  // A page re-read within one batch carries the newer state: the last occurrence of an id wins.
  const latest = counts.fit > total ? ' QUALIFY row_number() OVER (PARTITION BY id ORDER BY seq DESC, position DESC) = 1' : '';
  let stage = source;
  if (rejected > 0 || latest !== '') {
    const cols = [...CONTACT_FIELD_NAMES, '_fingerprint'].map(quoteIdent).join(', ');
    await run(connection, `CREATE OR REPLACE TEMP TABLE _stage_contacts AS SELECT ${cols}, raw FROM ${source.table} WHERE _reason IS NULL${latest}`);
    stage = { table: '_stage_contacts', temp: true };
  }
  if (!(await holdsIdFrom(connection, counts.minId))) {
    // The common case: every row fits and every id is new.
    await appendStagedContacts(connection, ctx, new Set(counts.parts), stage);
    return { inserted: total, updated: 0, unchanged: 0, deleted: 0, rejected };
  }
  // The stage keeps each row's raw record, DuckDB's own parse: the diff takes it from there for
  // the rows that changed.
  const stats = await mergeStagedContacts(connection, total, ctx, 'in-stage', stage);
  return { ...stats, rejected };
}
