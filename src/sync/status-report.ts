import type { StreamProgress } from '../../workflows/sync-types.js';
import { readContactsState, type ContactsState } from './contacts-state.js';
import { STREAMS } from '../../workflows/streams.js';
import type { WarehouseSession } from './warehouse-port.js';

export interface StreamStatus {
  stream: string;
  /** Rows held (live, not tombstoned) for the stream's table(s). */
  rows: number | null;
  tombstoned: number | null;
  lastRun: { runId: string; mode: string; status: string; startedAt: string; finishedAt: string | null; error: string | null } | null;
  lastSuccessAt: string | null;
  lastError: { at: string; error: string } | null;
  /** Set when the last run skipped the stream because the CRM lacks it ("not available on this CRM (...)"). */
  warning: string | null;
  /** How stale the stream's rows can be: every row was read at or after `allReadSince`; `bound` says what is fresher. */
  staleness: { allReadSince: string | null; bound: string };
  live?: StreamProgress;
}

export interface StatusReport {
  streams: StreamStatus[];
  contacts: ContactsState | null;
  source: string;
}

const TABLE_OF: Record<string, string | undefined> = {
  contacts: 'contacts',
  tags: 'tags',
  lists: 'lists',
  custom_fields: 'custom_fields',
  companies: 'companies',
  campaigns: 'campaigns',
  funnels: 'funnels',
  funnel_subscribers: 'funnel_subscribers',
};

const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(String(v)).toISOString());

async function tryQuery(w: WarehouseSession, sql: string, params: unknown[] = []): Promise<Record<string, unknown>[] | null> {
  try {
    return await w.query(sql, params);
  } catch {
    // A table the lake does not carry, or a warehouse older than the table: reported as unknown.
    return null;
  }
}

/** Freshness, cursors, counts and last errors per stream, read from the warehouse only. */
export async function buildStatusReport(w: WarehouseSession, source: string): Promise<StatusReport> {
  const streams: StreamStatus[] = [];
  for (const stream of STREAMS) {
    const table = TABLE_OF[stream];
    let rows: number | null = null;
    let tombstoned: number | null = null;
    if (table === 'funnel_subscribers') {
      rows = Number((await tryQuery(w, `SELECT count(*) AS n FROM funnel_subscribers`))?.[0]?.n ?? NaN);
    } else if (table) {
      const r = await tryQuery(w, `SELECT count(*) FILTER (WHERE _deleted_at IS NULL) AS live, count(*) FILTER (WHERE _deleted_at IS NOT NULL) AS dead FROM ${table}`);
      rows = r ? Number(r[0]?.live ?? 0) : null;
      tombstoned = r ? Number(r[0]?.dead ?? 0) : null;
    } else {
      // One overview per snapshot run: the interface's overview or the plugin's dashboard stats.
      const r =
        (await tryQuery(w, `SELECT (SELECT count(DISTINCT snapshot_id) FROM report_overview) + (SELECT count(DISTINCT snapshot_id) FROM report_dashboard_stats) AS n`)) ??
        (await tryQuery(w, `SELECT count(DISTINCT snapshot_id) AS n FROM report_overview`));
      rows = r ? Number(r[0]?.n ?? 0) : null;
    }
    if (rows !== null && Number.isNaN(rows)) rows = null;
    const last = (await tryQuery(w, `SELECT * FROM _sync_runs WHERE stream = $1 ORDER BY started_at DESC LIMIT 1`, [stream]))?.[0];
    const ok = (await tryQuery(w, `SELECT max(finished_at) AS t FROM _sync_runs WHERE stream = $1 AND status = 'succeeded'`, [stream]))?.[0];
    const err = (await tryQuery(w, `SELECT finished_at, error FROM _sync_runs WHERE stream = $1 AND status = 'failed' ORDER BY started_at DESC LIMIT 1`, [stream]))?.[0];
    streams.push({
      stream,
      rows,
      tombstoned,
      lastRun: last
        ? {
            runId: String(last.run_id),
            mode: String(last.mode),
            status: String(last.status),
            startedAt: iso(last.started_at) as string,
            finishedAt: iso(last.finished_at),
            error: last.error === null || last.error === undefined ? null : String(last.error),
          }
        : null,
      lastSuccessAt: iso(ok?.t),
      lastError: err ? { at: iso(err.finished_at) ?? '', error: String(err.error) } : null,
      warning: last && String(last.status) === 'skipped' ? String(last.error ?? 'not available on this CRM') : null,
      staleness: { allReadSince: iso(ok?.t), bound: stream === 'reports' ? 'a dated snapshot each run' : 're-read whole each run: as of the last success' },
    });
  }
  let contacts: ContactsState | null = null;
  try {
    contacts = await readContactsState(w);
  } catch {
    contacts = null;
  }
  const cs = streams.find((s) => s.stream === 'contacts');
  if (cs) cs.staleness = contactsStaleness(contacts, cs.lastSuccessAt);
  return { streams, contacts, source };
}

/**
 * Contacts: every contact was read at or after the later of the last full sweep's start and the
 * start of the last completed rolling-sweep cycle; new contacts, and edits the updated-first scan
 * or the member counts reveal, are as fresh as the last run.
 */
export function contactsStaleness(c: ContactsState | null, lastSuccessAt: string | null): StreamStatus['staleness'] {
  if (!c || !c.backfillDone) return { allReadSince: null, bound: 'not backfilled yet' };
  const since = Math.max(c.lastReconcileAtMs ?? 0, c.lastSweepCycleStartedAtMs ?? 0);
  const scan = c.updatedOrder?.supported
    ? 'new contacts, edits that change updated_at, and tag or list changes that change a member count: as of the last run'
    : 'new contacts and tag or list changes that change a member count: as of the last run (the CRM does not order by updated_at)';
  const cycle = c.sweepRuns ? `; anything else within ${c.sweepRuns} incremental runs (rolling sweep at run ${c.sweepCycleRuns + 1} of its cycle)` : '; anything else at the next rolling sweep or reconciliation';
  return { allReadSince: since > 0 ? new Date(since).toISOString() : lastSuccessAt, bound: `${scan}${cycle}` };
}

export function formatAge(fromIso: string | null, nowMs: number): string {
  if (!fromIso) return 'never';
  const s = Math.max(0, Math.round((nowMs - Date.parse(fromIso)) / 1000));
  if (s < 120) return `${s}s ago`;
  if (s < 7200) return `${Math.round(s / 60)}m ago`;
  if (s < 172800) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}
