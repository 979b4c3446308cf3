/**
 * Contracts between pushWorkflow and its activities. Only names, counts and cursors: rows and
 * credentials never enter workflow history.
 */
export interface PushCountsView {
  new: number;
  changed: number;
  retry: number;
  unchanged: number;
  invalid: number;
}

export interface PlanPushInput {
  from: string;
  ledgerName?: string;
  runId: string;
  createMissing: boolean;
}

export interface PlanPushResult {
  runId: string;
  source: string;
  rowsRead: number;
  counts: PushCountsView;
  toSend: number;
  createdTags: number;
  createdLists: number;
}

export interface PushBatchInput {
  runId: string;
  source: string;
  fromSeq: number;
  /** Exclusive upper bound of the rows this batch may take. */
  toSeq: number;
  /** No row is started after this many ms (the rest go to the next batch). */
  maxMs: number;
}

export interface PushBatchResult extends PushTotals {
  /** Where the next batch starts. */
  nextSeq: number;
  /** A retryable error stopped the batch after progress: the next batch waits this long first. */
  resumeAfterMs?: number;
}

export interface PushTotals {
  sent: number;
  succeeded: number;
  failed: number;
  skipped: number;
}

export interface FinishPushInput {
  runId: string;
  status: 'succeeded' | 'failed' | 'cancelled';
  totals: PushTotals;
  error?: string;
}

export interface PushActivities {
  planPush(input: PlanPushInput): Promise<PlanPushResult>;
  pushBatch(input: PushBatchInput): Promise<PushBatchResult>;
  finishPush(input: FinishPushInput): Promise<void>;
}

export interface PushWorkflowInput {
  /** A table or view name, or a SELECT query, in the warehouse. */
  from: string;
  /** Names the source's ledger (default: the relation name, or a hash of the query). */
  ledgerName?: string;
  createMissing?: boolean;
  /** Most rows per pushBatch activity (default 2000). */
  batchSize?: number;
  /**
   * A batch starts no row after this many seconds (default 10): batches last about as long at any
   * rate, and the warehouse's write lock, which a batch holds, is released that often.
   */
  batchSeconds?: number;
  /** How long a silent pushBatch may go before another worker takes over (default 30 s). */
  heartbeatTimeoutMs?: number;
  /** Batches per workflow run before continuing as new (default 200). */
  batchesPerRun?: number;
  /** Set by continueAsNew only. */
  resume?: { plan: PlanPushResult; cursor: number; totals: PushTotals };
}

/** Answer of `pushProgressQuery`: where the push is, without any row. */
export interface PushProgress extends PushTotals {
  phase: 'planning' | 'sending' | 'done';
  toSend: number;
  cursor: number;
}

export interface PushWorkflowResult extends PushTotals {
  runId: string;
  source: string;
  rowsRead: number;
  counts: PushCountsView;
  toSend: number;
}
