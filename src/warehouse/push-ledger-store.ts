import type { RowRejection } from '../push/push-types.js';
import type { WarehouseQuery } from './types.js';

export interface LedgerState {
  outcome: 'succeeded' | 'failed' | 'rejected';
  pushedFingerprint: string | null;
  sourceFingerprint: string | null;
}

export interface SendSuccess {
  source: string;
  key: string;
  email: string;
  fingerprint: string;
  sourceFingerprint: string;
  runId: string;
  httpStatus: number;
  contactId: number | null;
  actionType: string | null;
  at: Date;
}

export interface SendFailure {
  source: string;
  key: string;
  email: string;
  fingerprint: string;
  runId: string;
  httpStatus: number | null;
  code: string;
  field: string | null;
  message: string;
  retryable: boolean;
  at: Date;
}

const MAX_MESSAGE = 1000;

/** Reads and writes `_push_ledger` (sql/030_push_ledger.sql). */
export class PushLedger {
  constructor(private readonly db: WarehouseQuery) {}

  async read(source: string): Promise<Map<string, LedgerState>> {
    const rows = await this.db.query('SELECT push_key, outcome, pushed_fingerprint, source_fingerprint FROM _push_ledger WHERE source = ?', [source]);
    const out = new Map<string, LedgerState>();
    for (const r of rows) {
      out.set(String(r.push_key), {
        outcome: r.outcome as LedgerState['outcome'],
        pushedFingerprint: r.pushed_fingerprint == null ? null : String(r.pushed_fingerprint),
        sourceFingerprint: r.source_fingerprint == null ? null : String(r.source_fingerprint),
      });
    }
    return out;
  }

  /**
   * How each row of a batch already ended, by key: `succeeded` or `failed` when this run recorded
   * it with this fingerprint (an earlier attempt of the same batch), `skipped` when an earlier run
   * pushed exactly this fingerprint. Rows absent from the map are still to send.
   */
  async settledRows(source: string, runId: string, fingerprints: ReadonlyMap<string, string>): Promise<Map<string, 'succeeded' | 'failed' | 'skipped'>> {
    if (fingerprints.size === 0) return new Map();
    const pairs = JSON.stringify([...fingerprints].map(([k, f]) => ({ k, f })));
    const rows = await this.db.query(
      `SELECT l.push_key,
              CASE WHEN l.run_id = ? AND l.fingerprint = p.f AND l.outcome IN ('succeeded', 'failed') THEN l.outcome ELSE 'skipped' END AS settled
       FROM _push_ledger l
       JOIN (SELECT unnest(from_json(?::JSON, '[{"k":"VARCHAR","f":"VARCHAR"}]'), recursive := true)) p ON l.push_key = p.k
       WHERE l.source = ?
         AND ((l.run_id = ? AND l.fingerprint = p.f AND l.outcome IN ('succeeded', 'failed')) OR l.pushed_fingerprint = p.f)`,
      [runId, pairs, source, runId],
    );
    return new Map(rows.map((r) => [String(r.push_key), r.settled as 'succeeded' | 'failed' | 'skipped']));
  }

  /** One statement for all rejections of a run: they are never sent. */
  async recordRejections(source: string, runId: string, rejections: readonly RowRejection[], at: Date): Promise<void> {
    // One entry per key: a statement may not update the same ledger row twice.
    const unique = [...new Map(rejections.map((r) => [r.key, r])).values()];
    for (let i = 0; i < unique.length; i += 1000) {
      const chunk = unique.slice(i, i + 1000);
      if (chunk.length === 0) continue;
      const data = JSON.stringify(chunk.map((r) => ({ k: r.key, e: r.email, f: r.field, m: r.reason.slice(0, MAX_MESSAGE) })));
      await this.db.query(
        `INSERT INTO _push_ledger (source, push_key, email, outcome, error_code, error_field, error_message, retryable,
                                   run_id, first_seen_at, updated_at)
         SELECT ?, r.k, r.e, 'rejected', 'PUSH_ROW_INVALID', r.f, r.m, false, ?, ?::TIMESTAMPTZ, ?::TIMESTAMPTZ
         FROM (SELECT unnest(from_json(?::JSON, '[{"k":"VARCHAR","e":"VARCHAR","f":"VARCHAR","m":"VARCHAR"}]'), recursive := true)) r
         ON CONFLICT (source, push_key) DO UPDATE SET
           email = excluded.email, outcome = 'rejected', fingerprint = NULL, http_status = NULL,
           error_code = excluded.error_code, error_field = excluded.error_field, error_message = excluded.error_message,
           retryable = false, run_id = excluded.run_id, updated_at = excluded.updated_at`,
        [source, runId, at.toISOString(), at.toISOString(), data],
      );
    }
  }

  /**
   * Clears rejections of rows that are gone from the source or no longer rejected: entries of rows
   * that never reached the CRM are dropped (a fixed row gets a fresh entry when it is sent), the
   * others return to their last success.
   */
  async pruneRejections(source: string, stillRejected: readonly string[], at: Date): Promise<void> {
    const keys = JSON.stringify(stillRejected);
    await this.db.query(
      `DELETE FROM _push_ledger WHERE source = ? AND outcome = 'rejected' AND pushed_fingerprint IS NULL
         AND push_key NOT IN (SELECT unnest(from_json(?::JSON, '["VARCHAR"]')))`,
      [source, keys],
    );
    // A row pushed once, rejected later, then fixed or dropped: the CRM still holds what was pushed.
    await this.db.query(
      `UPDATE _push_ledger SET outcome = 'succeeded', error_code = NULL, error_field = NULL, error_message = NULL,
         retryable = NULL, updated_at = $1::TIMESTAMPTZ
       WHERE source = $2 AND outcome = 'rejected' AND pushed_fingerprint IS NOT NULL
         AND push_key NOT IN (SELECT unnest(from_json($3::JSON, '["VARCHAR"]')))`,
      [at.toISOString(), source, keys],
    );
  }

  /**
   * Rows whose content equals their last success but whose ledger entry shows a later rejection
   * or failure, or an older raw source row: mark them settled so the next run skips them cheaply.
   */
  async settle(source: string, rows: readonly { key: string; sourceFingerprint: string }[], at: Date): Promise<void> {
    for (let i = 0; i < rows.length; i += 1000) {
      const data = JSON.stringify(rows.slice(i, i + 1000).map((r) => ({ k: r.key, s: r.sourceFingerprint })));
      await this.db.query(
        `UPDATE _push_ledger SET outcome = 'succeeded', source_fingerprint = p.s, http_status = NULL, error_code = NULL,
           error_field = NULL, error_message = NULL, retryable = NULL, failures = 0, updated_at = $1::TIMESTAMPTZ
         FROM (SELECT unnest(from_json($2::JSON, '[{"k":"VARCHAR","s":"VARCHAR"}]'), recursive := true)) p
         WHERE _push_ledger.source = $3 AND _push_ledger.push_key = p.k`,
        [at.toISOString(), data, source],
      );
    }
  }

  /**
   * Written right after the CRM accepted the rows, before they count as done. Several successes
   * share one statement (group commit): one DuckDB write per row would cap the push rate.
   */
  async recordSuccesses(list: readonly SendSuccess[]): Promise<void> {
    for (let i = 0; i < list.length; i += 1000) {
      const data = JSON.stringify(
        list.slice(i, i + 1000).map((s) => ({
          k: s.key,
          e: s.email,
          f: s.fingerprint,
          sf: s.sourceFingerprint,
          c: s.contactId,
          a: s.actionType,
          h: s.httpStatus,
          r: s.runId,
          t: s.at.toISOString(),
        })),
      );
      await this.db.query(
        `INSERT INTO _push_ledger (source, push_key, email, outcome, fingerprint, pushed_fingerprint, source_fingerprint, contact_id,
                                   action_type, http_status, attempts, failures, run_id, first_seen_at, last_attempt_at, succeeded_at, updated_at)
         SELECT ?, r.k, r.e, 'succeeded', r.f, r.f, r.sf, r.c, r.a, r.h, 1, 0, r.r, r.t::TIMESTAMPTZ, r.t::TIMESTAMPTZ, r.t::TIMESTAMPTZ, r.t::TIMESTAMPTZ
         FROM (SELECT unnest(from_json(?::JSON, '[{"k":"VARCHAR","e":"VARCHAR","f":"VARCHAR","sf":"VARCHAR","c":"BIGINT","a":"VARCHAR","h":"INTEGER","r":"VARCHAR","t":"VARCHAR"}]'), recursive := true)) r
         ON CONFLICT (source, push_key) DO UPDATE SET
           email = excluded.email, outcome = 'succeeded', fingerprint = excluded.fingerprint,
           pushed_fingerprint = excluded.pushed_fingerprint, source_fingerprint = excluded.source_fingerprint,
           contact_id = excluded.contact_id, action_type = excluded.action_type, http_status = excluded.http_status,
           error_code = NULL, error_field = NULL, error_message = NULL, retryable = NULL,
           attempts = _push_ledger.attempts + 1, failures = 0, run_id = excluded.run_id,
           last_attempt_at = excluded.last_attempt_at, succeeded_at = excluded.succeeded_at, updated_at = excluded.updated_at`,
        [list[0]?.source ?? '', data],
      );
    }
  }

  async recordFailure(f: SendFailure): Promise<void> {
    const at = f.at.toISOString();
    await this.db.query(
      `INSERT INTO _push_ledger (source, push_key, email, outcome, fingerprint, http_status, error_code, error_field,
                                 error_message, retryable, attempts, failures, run_id, first_seen_at, last_attempt_at, updated_at)
       VALUES (?, ?, ?, 'failed', ?, ?, ?, ?, ?, ?, 1, 1, ?, ?::TIMESTAMPTZ, ?::TIMESTAMPTZ, ?::TIMESTAMPTZ)
       ON CONFLICT (source, push_key) DO UPDATE SET
         email = excluded.email, outcome = 'failed', fingerprint = excluded.fingerprint,
         http_status = excluded.http_status, error_code = excluded.error_code, error_field = excluded.error_field,
         error_message = excluded.error_message, retryable = excluded.retryable,
         attempts = _push_ledger.attempts + 1, failures = _push_ledger.failures + 1, run_id = excluded.run_id,
         last_attempt_at = excluded.last_attempt_at, updated_at = excluded.updated_at`,
      [f.source, f.key, f.email, f.fingerprint, f.httpStatus, f.code, f.field, f.message.slice(0, MAX_MESSAGE), f.retryable, f.runId, at, at, at],
    );
  }
}
