import { BIGINT, DuckDBDataChunk, VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { readRows, run, withRecordInCommit } from './sql-run.js';

/** A write scope's connection: the scan log is written in the same scope as the load it records. */
type ScanScope = { readonly connection: DuckDBConnection };

/** DuckDB's most rows per data chunk. */
const CHUNK_ROWS = 2048;

function checkedId(id: number): bigint {
  if (!Number.isSafeInteger(id)) throw new TypeError(`contact id must be a safe integer, got ${String(id)}`);
  return BigInt(id);
}

export interface ScannedPageRecord {
  scanKey: string;
  page: number;
  ids: readonly number[];
  reportedTotal: number | undefined;
  at: Date;
}

/**
 * Records that these pages of scans were loaded, with the ids each held: two statements however
 * many pages (a statement per page added up in a backfill: bench/results/notes.md, "page log").
 * Same write scope as the load.
 */
export async function recordScannedPages(w: ScanScope, pages: readonly ScannedPageRecord[]): Promise<void> {
  if (pages.length === 0) return;
  const byScan = new Map<string, number[]>();
  for (const p of pages) {
    const ids = byScan.get(p.scanKey) ?? [];
    for (const id of p.ids) ids.push(id);
    byScan.set(p.scanKey, ids);
  }
  // Through the appender: a literal id list makes DuckDB parse and bind thousands of constants.
  const appender = await w.connection.createAppender('_sweep_seen');
  try {
    for (const [scanKey, ids] of byScan) {
      for (let start = 0; start < ids.length; start += CHUNK_ROWS) {
        const part = ids.slice(start, start + CHUNK_ROWS);
        const chunk = DuckDBDataChunk.create([VARCHAR, BIGINT], part.length);
        chunk.setColumns([part.map(() => scanKey), part.map(checkedId)]);
        appender.appendDataChunk(chunk);
      }
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
  // One row per page: a page twice in one statement would conflict with itself.
  const latest = new Map<string, ScannedPageRecord>();
  for (const p of pages) latest.set(`${p.scanKey}\u0000${p.page}`, p);
  const values: unknown[] = [];
  const rows = [...latest.values()].map((p) => {
    const n = values.length;
    values.push(p.scanKey, p.page, p.ids.length, p.reportedTotal ?? null, p.at.toISOString());
    return `($${n + 1}, $${n + 2}, $${n + 3}, $${n + 4}, $${n + 5}::TIMESTAMP)`;
  });
  await run(w.connection, `INSERT OR REPLACE INTO _sync_scan_pages (scan_key, page, row_count, reported_total, loaded_at) VALUES ${rows.join(', ')}`, values);
}

/**
 * Runs `load` (a load that commits at most one transaction) and records `pages` in that same
 * transaction: a crash leaves both or neither, so a resumed scan starts after the last durable
 * page, and the page log costs no commit (and WAL sync) of its own.
 */
export async function loadRecordingScannedPages<T>(w: ScanScope, pages: readonly ScannedPageRecord[], load: () => Promise<T>): Promise<T> {
  return withRecordInCommit(w.connection, () => recordScannedPages(w, pages), load);
}

/** Pages of a scan already loaded (optionally only those in [fromPage, toPage]). */
export async function scannedPages(w: ScanScope, scanKey: string, fromPage = 1, toPage = 2 ** 31 - 1): Promise<number[]> {
  const rows = await readRows(w.connection, `SELECT page FROM _sync_scan_pages WHERE scan_key = $1 AND page BETWEEN $2 AND $3 ORDER BY page`, [scanKey, fromPage, toPage]);
  return rows.map((r) => Number(r.page));
}

/** Pages and rows of a scan's page log in [fromPage, toPage], whichever attempt or run loaded them. */
export async function scannedTotals(w: ScanScope, scanKey: string, fromPage: number, toPage: number): Promise<{ pages: number; rows: number }> {
  const rows = await readRows(w.connection, `SELECT count(*) AS pages, coalesce(sum(row_count), 0) AS rows FROM _sync_scan_pages WHERE scan_key = $1 AND page BETWEEN $2 AND $3`, [
    scanKey,
    fromPage,
    toPage,
  ]);
  return { pages: Number(rows[0]?.pages ?? 0), rows: Number(rows[0]?.rows ?? 0) };
}

/** Live contacts with id <= maxId that the scan did not see: deleted in the CRM, or missed by drift. */
export async function unseenLiveContactIds(w: ScanScope, scanKey: string, maxId: number): Promise<number[]> {
  const rows = await readRows(
    w.connection,
    `SELECT c.id FROM contacts c
      WHERE c._deleted_at IS NULL AND c.id <= $2
        AND NOT EXISTS (SELECT 1 FROM _sweep_seen s WHERE s.scan_key = $1 AND s.id = c.id)
      ORDER BY c.id`,
    [scanKey, maxId],
  );
  return rows.map((r) => Number(r.id));
}

export async function liveContactCount(w: ScanScope): Promise<number> {
  const rows = await readRows(w.connection, `SELECT count(*) AS n FROM contacts WHERE _deleted_at IS NULL`);
  return Number(rows[0]?.n ?? 0);
}

/** Forgets a finished scan's bookkeeping (and any other scan's leftovers). */
export async function clearScans(w: ScanScope): Promise<void> {
  await run(w.connection, `DELETE FROM _sweep_seen`);
  await run(w.connection, `DELETE FROM _sync_scan_pages`);
}
