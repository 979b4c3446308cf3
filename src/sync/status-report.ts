import type { StreamProgress } from '../../workflows/sync-types.js';
import { readContactsState, type ContactsState } from './contacts-state.js';
import { STREAMS } from '../../workflows/streams.js';
import type { WarehouseSession } from './warehouse-port.js';
import { readReportSnapshotCount, readStreamRuns, readTableCounts } from '../warehouse/status-reads.js';

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

/** Freshness, cursors, counts and last errors per stream, read from the warehouse only. */
export async function buildStatusReport(w: WarehouseSession, source: string): Promise<StatusReport> {
  const streams: StreamStatus[] = [];
  for (const stream of STREAMS) {
    const table = TABLE_OF[stream];
    let rows: number | null = null;
    let tombstoned: number | null = null;
    if (table) {
      const counts = await readTableCounts(w, table, { tombstones: table !== 'funnel_subscribers' });
      rows = counts?.live ?? null;
      tombstoned = counts?.tombstoned ?? null;
    } else {
      rows = await readReportSnapshotCount(w);
    }
    const { last, lastSuccessAt, lastFailure: err } = await readStreamRuns(w, stream);
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
      lastSuccessAt: iso(lastSuccessAt),
      lastError: err ? { at: iso(err.finished_at) ?? '', error: String(err.error) } : null,
      warning: last && String(last.status) === 'skipped' ? String(last.error ?? 'not available on this CRM') : null,
      staleness: { allReadSince: iso(lastSuccessAt), bound: stream === 'reports' ? 'a dated snapshot each run' : 're-read whole each run: as of the last success' },
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
  const cycle = c.sweepRuns
    ? `; anything else within ${c.sweepRuns} incremental runs (rolling sweep at run ${c.sweepCycleRuns + 1} of its cycle)`
    : '; anything else at the next rolling sweep or reconciliation';
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
