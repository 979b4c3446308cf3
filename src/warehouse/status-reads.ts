import { quoteIdent } from './quote.js';
import type { WarehouseQuery } from './types.js';

/** What `crmsync status` reads per stream. Each read is null when its table cannot be read. */

async function tryQuery(w: WarehouseQuery, sql: string, params: unknown[] = []): Promise<Record<string, unknown>[] | null> {
  try {
    return await w.query(sql, params);
  } catch {
    // A table the lake does not carry, or a warehouse older than the table: reported as unknown.
    return null;
  }
}

/** Live and tombstoned rows of a table; a table without tombstones (funnel_subscribers) has `tombstoned: null`. */
export async function readTableCounts(w: WarehouseQuery, table: string, opts: { tombstones: boolean }): Promise<{ live: number; tombstoned: number | null } | null> {
  if (!opts.tombstones) {
    const r = await tryQuery(w, `SELECT count(*) AS n FROM ${quoteIdent(table)}`);
    return r ? { live: Number(r[0]?.n ?? 0), tombstoned: null } : null;
  }
  const r = await tryQuery(w, `SELECT count(*) FILTER (WHERE _deleted_at IS NULL) AS live, count(*) FILTER (WHERE _deleted_at IS NOT NULL) AS dead FROM ${quoteIdent(table)}`);
  return r ? { live: Number(r[0]?.live ?? 0), tombstoned: Number(r[0]?.dead ?? 0) } : null;
}

/** Report snapshot runs: one overview per run, the interface's overview or the plugin's dashboard stats. */
export async function readReportSnapshotCount(w: WarehouseQuery): Promise<number | null> {
  const r =
    (await tryQuery(w, `SELECT (SELECT count(DISTINCT snapshot_id) FROM report_overview) + (SELECT count(DISTINCT snapshot_id) FROM report_dashboard_stats) AS n`)) ??
    (await tryQuery(w, `SELECT count(DISTINCT snapshot_id) AS n FROM report_overview`));
  return r ? Number(r[0]?.n ?? 0) : null;
}

export interface StreamRuns {
  /** The latest `_sync_runs` row of the stream. */
  last: Record<string, unknown> | undefined;
  /** When its last successful run finished. */
  lastSuccessAt: unknown;
  /** The latest failed run's `finished_at` and `error`. */
  lastFailure: Record<string, unknown> | undefined;
}

export async function readStreamRuns(w: WarehouseQuery, stream: string): Promise<StreamRuns> {
  const last = (await tryQuery(w, `SELECT * FROM _sync_runs WHERE stream = $1 ORDER BY started_at DESC LIMIT 1`, [stream]))?.[0];
  const ok = (await tryQuery(w, `SELECT max(finished_at) AS t FROM _sync_runs WHERE stream = $1 AND status = 'succeeded'`, [stream]))?.[0];
  const lastFailure = (await tryQuery(w, `SELECT finished_at, error FROM _sync_runs WHERE stream = $1 AND status = 'failed' ORDER BY started_at DESC LIMIT 1`, [stream]))?.[0];
  return { last, lastSuccessAt: ok?.t, lastFailure };
}
