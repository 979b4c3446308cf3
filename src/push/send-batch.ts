import pLimit from 'p-limit';
import { CrmsyncError } from '../errors.js';
import { describeSendError } from './describe-send-error.js';
import type { PushCrm } from './push-crm.js';
import type { PushLedger } from '../warehouse/push-ledger-store.js';
import type { StoredPlanRow } from '../warehouse/push-plan-store.js';
import { LedgerWriter } from './ledger-writer.js';

/**
 * Rows in progress at once. A row holds its slot until its ledger write is done, so this is more
 * than the client's HTTP concurrency (8): rows waiting for the ledger do not hold back requests.
 * It also bounds how many rows a crash can leave sent but unrecorded.
 */
export const DEFAULT_PUSH_CONCURRENCY = 16;

export interface BatchProgress {
  done: number;
  total: number;
  succeeded: number;
  failed: number;
  skipped: number;
  lastSeq: number;
}

export interface BatchResult {
  /** Rows this run sent, in this attempt or an earlier one. */
  sent: number;
  succeeded: number;
  failed: number;
  /** Rows whose exact content the ledger already shows as pushed by an earlier run. */
  skipped: number;
  /** Upsert requests this attempt made (one per row sent in it). */
  requests: number;
  /** The first sequence number not handled (rows past the deadline are left for the next batch). */
  nextSeq: number;
  /**
   * Set when a retryable error (429, 5xx, network) stopped the batch after it had finished rows:
   * the next batch starts at `nextSeq` after this many ms (the server's Retry-After, if any). Rows
   * past `nextSeq` that finished are in the ledger and counted by that batch.
   */
  resumeAfterMs?: number;
}

export interface SendBatchDeps {
  crm: PushCrm;
  ledger: PushLedger;
  now?: () => Date;
}

export interface SendBatchOptions {
  source: string;
  runId: string;
  rows: readonly StoredPlanRow[];
  concurrency?: number;
  signal?: AbortSignal;
  /** Epoch ms after which no further row is started (at least one row always is). */
  deadline?: number;
  onProgress?: (p: BatchProgress) => void;
}

/**
 * A row met a retryable error (429, 5xx, network) and the batch finished no row: it stopped
 * taking rows, let the rows in flight finish, and fails retryable so the activity's retry policy
 * (the one retry owner) runs it again; the ledger makes that attempt resume at the first
 * unfinished row. (A batch that finished rows ends there instead: `resumeAfterMs`.) After a 429 the next
 * attempt may start at once: the client's rate limiter, shared by every attempt in the process,
 * already holds every request back for the server's Retry-After, so waiting it out here as well
 * only added the attempt's start-up to each pause.
 */
/** How soon a batch interrupted by a 429 is tried again; the limiter's pause does the waiting. */
const RESUME_AFTER_429_MS = 50;
/** How soon the rest of a batch a 5xx or network error interrupted goes on, without a Retry-After. */
const RESUME_AFTER_ERROR_MS = 1000;

export class PushBatchInterruptedError extends CrmsyncError {
  constructor(cause: CrmsyncError) {
    super(
      'PUSH_BATCH_INTERRUPTED',
      `A push row failed with a retryable error (${cause.code}: ${cause.message.slice(0, 300)}); the finished rows are in the ledger and the batch is retried from the first unfinished row.`,
      { retryable: true, retryAfterMs: cause.code === 'CRM_RATE_LIMITED' ? RESUME_AFTER_429_MS : cause.retryAfterMs, cause },
    );
  }
}

/** Rejected before sending when a batch stops early; the ledger holds every finished row. */
export class PushAbortedError extends CrmsyncError {
  constructor(reason: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super('PUSH_ABORTED', reason, options);
  }
}

/**
 * Upserts a batch of planned rows, one request per row. Each outcome is written to the ledger
 * before the row counts as done, so a batch run again (after a crash, or by Temporal after a
 * retryable error) neither sends nor records a finished row twice; only rows in flight at a crash
 * can be sent again, which the upsert (create-or-update by email) makes harmless. Rows with a
 * non-retryable error are recorded as failed and the batch goes on.
 */
export async function sendBatch(deps: SendBatchDeps, opts: SendBatchOptions): Promise<BatchResult> {
  const now = deps.now ?? (() => new Date());
  const writer = new LedgerWriter(deps.ledger);
  const settled = await deps.ledger.settledRows(opts.source, opts.runId, new Map(opts.rows.map((r) => [r.key, r.fingerprint])));
  const lastRow = opts.rows.at(-1);
  const result: BatchResult = { sent: 0, succeeded: 0, failed: 0, skipped: 0, requests: 0, nextSeq: lastRow ? lastRow.seq + 1 : 0 };
  let started = 0;
  const progress: BatchProgress = { done: 0, total: opts.rows.length, succeeded: 0, failed: 0, skipped: 0, lastSeq: -1 };
  let fatal: Error | undefined;
  let interrupted: CrmsyncError | undefined;
  /** A server in trouble (5xx, network) stops the batch taking rows; a 429 does not (see below). */
  let stopTaking = false;
  const limit = pLimit(Math.max(1, opts.concurrency ?? DEFAULT_PUSH_CONCURRENCY));

  /** Rows finished (in this attempt or an earlier one), by sequence number. */
  const finished = new Map<number, { outcome: 'succeeded' | 'failed' | 'skipped'; sent: boolean }>();
  /** Rows this attempt sent and finished: progress that an interruption must not throw away. */
  let finishedBySending = 0;
  const finish = (row: StoredPlanRow, outcome: 'succeeded' | 'failed' | 'skipped', sent = true) => {
    finished.set(row.seq, { outcome, sent });
    result[outcome] += 1;
    progress[outcome] += 1;
    progress.done += 1;
    progress.lastSeq = Math.max(progress.lastSeq, row.seq);
    opts.onProgress?.({ ...progress });
  };

  const sendOne = async (row: StoredPlanRow): Promise<void> => {
    if (fatal || stopTaking || opts.signal?.aborted) return;
    // Rows start in sequence order, so the rows left out form a suffix: the next batch's start.
    if (opts.deadline !== undefined && started > 0 && Date.now() >= opts.deadline) {
      result.nextSeq = Math.min(result.nextSeq, row.seq);
      return;
    }
    started += 1;
    // Finished by an earlier attempt of this run: counted as it ended then (and as sent), not sent again.
    const earlier = settled.get(row.key);
    if (earlier) {
      if (earlier !== 'skipped') result.sent += 1;
      return finish(row, earlier, earlier !== 'skipped');
    }
    result.sent += 1;
    result.requests += 1;
    try {
      const res = await deps.crm.upsertContact(row.body);
      await writer.success({
        source: opts.source,
        key: row.key,
        email: row.body.email,
        fingerprint: row.fingerprint,
        sourceFingerprint: row.sourceFingerprint,
        runId: opts.runId,
        httpStatus: 200,
        contactId: res.contact.id,
        actionType: res.actionType,
        at: now(),
      });
      finishedBySending += 1;
      return finish(row, 'succeeded');
    } catch (err) {
      if (!(err instanceof CrmsyncError) || err.code.startsWith('PUSH_')) throw err;
      const info = describeSendError(err, row.body);
      if (info.fatal) {
        fatal ??= err;
        return;
      }
      // Not a row failure: the next attempt of the activity sends this row again. After a 429 the
      // other rows go on (the rate limiter paused and slowed every request): stopping the batch
      // at each 429 thinned the traffic the limiter learns the server's limit from, and the push
      // fell well under it. After a 5xx or a network error no further row is started.
      if (info.retryable) {
        interrupted ??= err;
        if (err.code !== 'CRM_RATE_LIMITED') stopTaking = true;
        return;
      }
      await writer.failure({
        source: opts.source,
        key: row.key,
        email: row.body.email,
        fingerprint: row.fingerprint,
        runId: opts.runId,
        httpStatus: info.httpStatus,
        code: info.code,
        field: info.field,
        message: info.message,
        retryable: false,
        at: now(),
      });
      finishedBySending += 1;
      return finish(row, 'failed');
    }
  };

  // Every task settles before the batch returns or throws: no send may outlive the activity (and
  // its warehouse scope); after a first error the rows not yet started are left alone.
  const guarded = async (row: StoredPlanRow): Promise<void> => {
    try {
      await sendOne(row);
    } catch (err) {
      fatal ??= err instanceof Error ? err : new Error(String(err));
    }
  };
  await Promise.all(opts.rows.map((row) => limit(() => guarded(row))));
  if (fatal) throw fatal;
  if (opts.signal?.aborted) throw new PushAbortedError('The push batch was cancelled; finished rows are in the ledger.', { retryable: true });
  if (interrupted) {
    // Nothing finished: the server is down, and Temporal's retry policy (growing delays) waits.
    if (finishedBySending === 0) throw new PushBatchInterruptedError(interrupted);
    // Progress: the batch ends at its first unfinished row and the next goes on from there. As
    // retries, a steady error rate made every attempt's delay grow, and large batches ran out of
    // attempts (a 2,000-row batch at 1% of 5xx stops about twenty times).
    return resumeAt(result, finished, opts.rows, interrupted);
  }
  return result;
}

/** The batch's figures up to its first unfinished row; the rows after it count in the next batch. */
function resumeAt(
  result: BatchResult,
  finished: ReadonlyMap<number, { outcome: 'succeeded' | 'failed' | 'skipped'; sent: boolean }>,
  rows: readonly StoredPlanRow[],
  cause: CrmsyncError,
): BatchResult {
  const nextSeq = Math.min(result.nextSeq, ...rows.filter((r) => !finished.has(r.seq)).map((r) => r.seq));
  const out: BatchResult = { sent: 0, succeeded: 0, failed: 0, skipped: 0, requests: result.requests, nextSeq };
  for (const [seq, f] of finished) {
    if (seq >= nextSeq) continue;
    out[f.outcome] += 1;
    if (f.sent) out.sent += 1;
  }
  out.resumeAfterMs = cause.code === 'CRM_RATE_LIMITED' ? RESUME_AFTER_429_MS : (cause.retryAfterMs ?? RESUME_AFTER_ERROR_MS);
  return out;
}
