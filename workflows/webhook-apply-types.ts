/** Input of webhookApplyWorkflow (counts and settings only: rows never enter history). */
export interface WebhookApplyInput {
  /** Deliveries per activity (default 2,000). */
  batchSize?: number;
  /** How long one activity waits for new deliveries before it returns empty-handed (default 10 s). */
  waitMs?: number;
  /** Activities per run before continueAsNew, so history stays small (default 500). */
  iterationsPerRun?: number;
  /** Carried across continueAsNew. */
  totals?: WebhookApplyTotals;
}

export interface WebhookApplyTotals {
  appliedSeq: number;
  batches: number;
  events: number;
  deadLettered: number;
}

export interface ApplySpoolInput {
  batchSize: number;
  waitMs: number;
}

/** What one apply activity did: seqs and counts. */
export interface ApplySpoolResult {
  /** The spool's id (null while no receiver has created the spool) and the last seq applied to the warehouse. */
  spoolId: string | null;
  appliedSeq: number;
  events: number;
  deadLettered: number;
  contactsLoaded: number;
  refetches: number;
}

export interface WebhookActivities {
  applyWebhookSpool(input: ApplySpoolInput): Promise<ApplySpoolResult>;
  retryWebhookDeadLetters(input: RetryDeadLettersInput): Promise<RetryDeadLettersResult>;
}

/** One part of `crmsync webhooks dead-letters --retry`: at most `limit` letters, after `after`. */
export interface RetryDeadLettersInput {
  limit: number;
  after?: { spoolSeq: number; deliveryId: string };
}

/** What happened to each letter retried (ids, outcome and a bounded error: no bodies, no rows). */
export interface RetryDeadLettersResult {
  outcomes: {
    deliveryId: string;
    spoolSeq: number;
    event: string;
    outcome: 'applied' | 'failed' | 'deferred';
    error: string | null;
  }[];
}
