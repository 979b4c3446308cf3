import type { WarehouseSession } from './warehouse-port.js';

/** Ids go into SQL as a literal list: they are checked integers, so nothing user-given is spliced in. */
function idList(ids: readonly number[]): string {
  for (const id of ids) {
    if (!Number.isSafeInteger(id)) throw new TypeError(`contact id must be a safe integer, got ${String(id)}`);
  }
  return `[${ids.join(',')}]`;
}

/** Records that `page` of a scan was loaded with the ids it held. Same write scope as the load. */
export async function recordScannedPage(
  w: WarehouseSession,
  scanKey: string,
  page: number,
  ids: readonly number[],
  reportedTotal: number | undefined,
  at: Date,
): Promise<void> {
  if (ids.length > 0) {
    await w.connection.run(`INSERT INTO _sweep_seen (scan_key, id) SELECT $1, unnest(${idList(ids)}::BIGINT[])`, [scanKey]);
  }
  await w.connection.run(
    `INSERT OR REPLACE INTO _sync_scan_pages (scan_key, page, row_count, reported_total, loaded_at) VALUES ($1, $2, $3, $4, $5::TIMESTAMP)`,
    [scanKey, page, ids.length, reportedTotal ?? null, at.toISOString()],
  );
}

/** Pages of a scan already loaded (optionally only those in [fromPage, toPage]). */
export async function scannedPages(w: WarehouseSession, scanKey: string, fromPage = 1, toPage = 2 ** 31 - 1): Promise<number[]> {
  const rows = await w.query(
    `SELECT page FROM _sync_scan_pages WHERE scan_key = $1 AND page BETWEEN $2 AND $3 ORDER BY page`,
    [scanKey, fromPage, toPage],
  );
  return rows.map((r) => Number(r.page));
}

/** Pages and rows of a scan's page log in [fromPage, toPage], whichever attempt or run loaded them. */
export async function scannedTotals(w: WarehouseSession, scanKey: string, fromPage: number, toPage: number): Promise<{ pages: number; rows: number }> {
  const rows = await w.query(
    `SELECT count(*) AS pages, coalesce(sum(row_count), 0) AS rows FROM _sync_scan_pages WHERE scan_key = $1 AND page BETWEEN $2 AND $3`,
    [scanKey, fromPage, toPage],
  );
  return { pages: Number(rows[0]?.pages ?? 0), rows: Number(rows[0]?.rows ?? 0) };
}

/** Live contacts with id <= maxId that the scan did not see: deleted in the CRM, or missed by drift. */
export async function unseenLiveContactIds(w: WarehouseSession, scanKey: string, maxId: number): Promise<number[]> {
  const rows = await w.query(
    `SELECT c.id FROM contacts c
      WHERE c._deleted_at IS NULL AND c.id <= $2
        AND NOT EXISTS (SELECT 1 FROM _sweep_seen s WHERE s.scan_key = $1 AND s.id = c.id)
      ORDER BY c.id`,
    [scanKey, maxId],
  );
  return rows.map((r) => Number(r.id));
}

export async function liveContactCount(w: WarehouseSession): Promise<number> {
  const rows = await w.query(`SELECT count(*) AS n FROM contacts WHERE _deleted_at IS NULL`);
  return Number(rows[0]?.n ?? 0);
}

/** Forgets a finished scan's bookkeeping (and any other scan's leftovers). */
export async function clearScans(w: WarehouseSession): Promise<void> {
  await w.connection.run(`DELETE FROM _sweep_seen`);
  await w.connection.run(`DELETE FROM _sync_scan_pages`);
}
