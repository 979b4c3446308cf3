import { CrmsyncError } from '../errors.js';

/**
 * Other runs kept taking the streams asked for: `crmsync sync` joined and followed them several
 * times over without getting to run the rest itself.
 */
export class SyncAlreadyRunningError extends CrmsyncError {
  constructor(workflowId: string) {
    super(
      'SYNC_ALREADY_RUNNING',
      `Other syncs kept starting on these streams while this one joined them (workflow ${workflowId}); watch them with \`crmsync status\` and run again, or pause a schedule that fires that often (\`crmsync schedule pause\`).`,
    );
  }
}

/** The sync workflow ended in failure; the message lists the failed streams and their causes. */
export class SyncFailedError extends CrmsyncError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('SYNC_FAILED', message, options);
  }
}

/** `crmsync verify` found differences between the warehouse and the CRM. */
export class VerifyMismatchError extends CrmsyncError {
  constructor(differences: number) {
    super('VERIFY_MISMATCH', `The warehouse differs from the CRM in ${differences} place(s) (listed above); run \`crmsync sync --full\` to repair.`);
  }
}

/** The run was cancelled (Ctrl-C or `temporal workflow cancel`); a contact scan resumes on the next run. */
export class SyncCancelledError extends CrmsyncError {
  constructor(workflowId: string, options: { cause?: unknown } = {}) {
    super('SYNC_CANCELLED', `The sync ${workflowId} was cancelled; run \`crmsync sync\` again to resume where it stopped.`, options);
  }
}

/**
 * DuckDB ran out of the memory limit the sync's write scopes run under. Retryable: another
 * attempt may find less held (after a checkpoint); when it keeps failing, the message names the
 * setting to raise.
 */
export class SyncMemoryLimitError extends CrmsyncError {
  constructor(limit: string, options: { cause?: unknown } = {}) {
    const detail = options.cause instanceof Error ? ` (${options.cause.message.split('\n')[0]})` : '';
    super(
      'SYNC_MEMORY_LIMIT',
      `DuckDB ran out of the sync's memory limit, CRMSYNC_SYNC_MEMORY_LIMIT=${limit}${detail}; raise CRMSYNC_SYNC_MEMORY_LIMIT (default: a sixteenth of the machine's memory, at most 128MB) and run again (fewer DuckDB threads, CRMSYNC_SYNC_THREADS=1, also need less): the run resumes where it stopped.`,
      { retryable: true, ...options },
    );
  }
}
