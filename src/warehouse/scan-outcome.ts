import type { Warehouse } from './types.js';

export interface ScanOutcome {
  /** Pages of the scan whose listing reported another total than the scan began with: rows moved. */
  pagesOffTotal: number;
  /** Highest contact id the scan saw (0 when it saw none). */
  maxSeenId: number;
}

/** What a finished contact scan's page log and seen ids say, to decide whether it drifted. */
export async function scanOutcome(w: Pick<Warehouse, 'query'>, scanKey: string, totalAtStart: number): Promise<ScanOutcome> {
  const off = await w.query(`SELECT count(*) AS n FROM _sync_scan_pages WHERE scan_key = $1 AND reported_total IS DISTINCT FROM $2`, [scanKey, totalAtStart]);
  const seen = await w.query(`SELECT coalesce(max(id), 0) AS m FROM _sweep_seen WHERE scan_key = $1`, [scanKey]);
  return { pagesOffTotal: Number(off[0]?.n ?? 0), maxSeenId: Number(seen[0]?.m ?? 0) };
}
