// Types shared by the sync workflows, their activities and the command line. Only cursors, counts
// and small id lists appear here: rows and credentials never enter workflow history.

import type { StreamName } from './streams.js';

export type ContactsMode = 'backfill' | 'incremental' | 'reconcile';
export type ReconcilePolicy = 'auto' | 'always' | 'never';

export interface SyncTuning {
  /** Contacts per page request. */
  perPage: number;
  /** Page-range activities running at once for one stream (the client's limiter caps requests). */
  parallelism: number;
  /** Upper bound on pages handled by one activity. */
  maxPagesPerRange: number;
  /** Heartbeat timeout of page activities: how fast a dead worker's range is retried elsewhere. */
  heartbeatTimeoutMs: number;
  /** continueAsNew once history has this many events (Temporal also suggests it on size). */
  maxHistoryEvents: number;
  /** Rolling sweep: every contact is re-read within this many incremental runs. */
  sweepRuns: number;
  /** Updated-first scan: how far before the watermark it reads (same-second timestamps, clock skew). */
  updatedOverlapMs: number;
}

export const DEFAULT_TUNING: SyncTuning = {
  perPage: 250,
  parallelism: 4,
  maxPagesPerRange: 20,
  heartbeatTimeoutMs: 20_000,
  maxHistoryEvents: 8_000,
  sweepRuns: 96,
  updatedOverlapMs: 300_000,
};

export interface SyncWorkflowInput {
  /** Checked again by the workflow: a caller outside TypeScript may send any string. */
  streams: StreamName[];
  /** Re-read every stream from the start (contacts: a full scan with tombstoning). */
  full?: boolean;
  reconcile?: ReconcilePolicy;
  /** Contacts reconciliation cadence for `auto`: sweep when the last one is older than this. */
  reconcileEveryMs?: number;
  tuning?: Partial<SyncTuning>;
  /** Task queue of the single warehouse-writing worker. */
  warehouseTaskQueue: string;
  /** Prefix of the stream children's ids (the main task queue; default "crmsync"). */
  idScope?: string;
}

export interface StreamWorkflowInput {
  runId: string;
  stream: StreamName;
  full: boolean;
  reconcile: ReconcilePolicy;
  reconcileEveryMs: number;
  tuning: SyncTuning;
  warehouseTaskQueue: string;
  /**
   * The run's only stream: its final record also publishes the lake (the run's closing publish,
   * one activity and the parent's workflow task less at the run's end). Runs started before this
   * field existed publish in the parent.
   */
  publishAtEnd?: boolean;
  /** Set by continueAsNew: the scan in progress and the counters so far. */
  carry?: ContactsCarry;
}

export interface ContactsCarry {
  mode: ContactsMode;
  scanKey: string;
  passes: number;
  startedAtMs: number;
  totals: StreamTotals;
}

export interface StreamTotals {
  pages: number;
  rows: number;
  requests: number;
  inserted: number;
  updated: number;
  unchanged: number;
  deleted: number;
  /** Contact rows that did not fit the schema, kept in `_contact_rejects` with the reason (absent: none). */
  rejected?: number;
}

export type StreamPhase = 'starting' | 'backfill' | 'incremental' | 'reconcile' | 'finishing' | 'done' | 'failed' | 'cancelled';

export interface StreamProgress {
  stream: StreamName;
  /** The sync run (parent workflow run id) this progress belongs to. */
  runId: string;
  phase: StreamPhase;
  pagesDone: number;
  /** Undefined until the first page tells the page count. */
  pagesTotal: number | undefined;
  rows: number;
  requests: number;
  startedAtMs: number;
  updatedAtMs: number;
  drift: boolean;
  /** The CRM changed again during the run's repair pass: the next run sweeps (`needsReconcile`). */
  reconcileNext?: boolean;
  error?: string;
}

export interface StreamResult extends StreamTotals {
  stream: StreamName;
  mode: ContactsMode;
  drift: boolean;
  /** See StreamProgress.reconcileNext; absent when false. */
  reconcileNext?: boolean;
  /** Set when the CRM lacks what the stream reads ("not available on this CRM (...)"): a warning, not a failure. */
  skipped?: string;
  /** Contacts, incremental: which freshness checks ran and what each found. */
  fresh?: FreshSummary;
  /** The stream's final record published the lake (`publishAtEnd`): the run does not publish again. */
  published?: boolean;
}

/** Counts of the checks an incremental contacts run makes for edits to existing contacts. */
export interface FreshSummary {
  /** Updated-first scan: absent when the CRM does not order by updated_at. */
  updatedFirst?: { rows: number; updated: number; requests: number; orderBroken: boolean };
  /** `sweepInstead`: more members to re-read than contacts held, so the run swept instead. */
  memberships: { checked: number; differing: string[]; rows: number; updated: number; deleted: number; requests: number; sweepInstead: boolean };
  /** Absent when the run swept instead. */
  slice?: { fromId: number; toId: number; rows: number; updated: number; requests: number; cycleDone: boolean };
}

export interface SyncProgress {
  runId: string;
  /** `busy`: another run was syncing the stream, so this run left it to that one. */
  streams: Partial<Record<StreamName, { status: 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'busy'; result?: StreamResult; error?: string }>>;
}

export interface SyncResult {
  runId: string;
  streams: StreamResult[];
  failed: { stream: StreamName; error: string }[];
  /** Streams another run was syncing when this one started (absent in runs before this field). */
  busy?: StreamName[];
  /** Set by `crmsync sync`: streams whose result came from a run already in progress it joined. */
  joined?: StreamName[];
}

export function emptyTotals(): StreamTotals {
  return { pages: 0, rows: 0, requests: 0, inserted: 0, updated: 0, unchanged: 0, deleted: 0 };
}

export function addTotals(into: StreamTotals, add: Partial<StreamTotals>): void {
  into.pages += add.pages ?? 0;
  into.rows += add.rows ?? 0;
  into.requests += add.requests ?? 0;
  into.inserted += add.inserted ?? 0;
  into.updated += add.updated ?? 0;
  into.unchanged += add.unchanged ?? 0;
  into.deleted += add.deleted ?? 0;
  if (add.rejected) into.rejected = (into.rejected ?? 0) + add.rejected;
}
