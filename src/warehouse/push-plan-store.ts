import type { ContactWrite } from '../crm/types.js';
import type { PlannedRow, PushCounts } from '../push/push-types.js';
import type { WarehouseQuery } from './types.js';

export interface StoredPlanRow extends PlannedRow {
  seq: number;
}

export interface RunTotals {
  sent: number;
  succeeded: number;
  failed: number;
  skipped: number;
}

const PLAN_CHUNK = 1000;

/** The numbered rows of a run (`_push_plan`) and the run summaries (`_push_runs`). */
export class PushPlanStore {
  constructor(private readonly db: WarehouseQuery) {}

  /** Replaces any plan stored under `runId` (a retried planning activity starts over). */
  async save(runId: string, source: string, rows: readonly PlannedRow[]): Promise<void> {
    await this.db.query('DELETE FROM _push_plan WHERE run_id = ?', [runId]);
    for (let i = 0; i < rows.length; i += PLAN_CHUNK) {
      const data = rows.slice(i, i + PLAN_CHUNK).map((r, j) => ({
        s: i + j,
        k: r.key,
        n: r.rowNumber,
        a: r.action,
        f: r.fingerprint,
        sf: r.sourceFingerprint,
        b: JSON.stringify(r.body),
      }));
      await this.db.query(
        `INSERT INTO _push_plan (run_id, seq, source, push_key, row_number, action, fingerprint, source_fingerprint, body)
         SELECT ?, r.s, ?, r.k, r.n, r.a, r.f, r.sf, r.b
         FROM (SELECT unnest(from_json(?::JSON,
           '[{"s":"INTEGER","k":"VARCHAR","n":"INTEGER","a":"VARCHAR","f":"VARCHAR","sf":"VARCHAR","b":"VARCHAR"}]'), recursive := true)) r`,
        [runId, source, JSON.stringify(data)],
      );
    }
  }

  /** Rows with `fromSeq <= seq < toSeq`, in order. */
  async load(runId: string, fromSeq: number, toSeq: number): Promise<StoredPlanRow[]> {
    const rows = await this.db.query(
      `SELECT seq, push_key, row_number, action, fingerprint, source_fingerprint, body FROM _push_plan
       WHERE run_id = ? AND seq >= ? AND seq < ? ORDER BY seq`,
      [runId, fromSeq, toSeq],
    );
    return rows.map((r) => ({
      seq: Number(r.seq),
      key: String(r.push_key),
      rowNumber: Number(r.row_number),
      action: r.action as PlannedRow['action'],
      fingerprint: String(r.fingerprint),
      sourceFingerprint: String(r.source_fingerprint),
      body: JSON.parse(String(r.body)) as ContactWrite,
    }));
  }

  async count(runId: string): Promise<number> {
    const rows = await this.db.query('SELECT count(*) AS n FROM _push_plan WHERE run_id = ?', [runId]);
    return Number(rows[0]?.n ?? 0);
  }

  async delete(runId: string): Promise<void> {
    await this.db.query('DELETE FROM _push_plan WHERE run_id = ?', [runId]);
  }

  /** Plans of runs that never finished (a cancelled workflow) are dropped after a week. */
  async pruneStale(now: Date): Promise<void> {
    const cutoff = new Date(now.getTime() - 7 * 24 * 3600_000).toISOString();
    await this.db.query(`DELETE FROM _push_plan WHERE run_id IN (SELECT run_id FROM _push_runs WHERE started_at < ?::TIMESTAMPTZ)`, [cutoff]);
  }

  async startRun(runId: string, source: string, rowsRead: number, counts: PushCounts, at: Date): Promise<void> {
    await this.db.query(
      `INSERT INTO _push_runs (run_id, source, status, started_at, rows_read, planned_new, planned_changed, planned_retry, unchanged, invalid)
       VALUES (?, ?, 'running', ?::TIMESTAMPTZ, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (run_id) DO UPDATE SET rows_read = excluded.rows_read, planned_new = excluded.planned_new,
         planned_changed = excluded.planned_changed, planned_retry = excluded.planned_retry,
         unchanged = excluded.unchanged, invalid = excluded.invalid`,
      [runId, source, at.toISOString(), rowsRead, counts.new, counts.changed, counts.retry, counts.unchanged, counts.invalid],
    );
  }

  async finishRun(runId: string, status: 'succeeded' | 'failed' | 'cancelled', totals: RunTotals, at: Date, error?: string): Promise<void> {
    await this.db.query(
      `UPDATE _push_runs SET status = $1, finished_at = $2::TIMESTAMPTZ, sent = $3, succeeded = $4, failed = $5, skipped = $6, error = $7
       WHERE run_id = $8`,
      [status, at.toISOString(), totals.sent, totals.succeeded, totals.failed, totals.skipped, error ?? null, runId],
    );
  }
}
