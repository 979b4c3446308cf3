/**
 * The warehouse's public contract: what activities, the webhook applier and the pusher call.
 * Implemented in src/warehouse/. Tables and core columns are fixed by DESIGN.md.
 *
 * Concurrency (see docs/warehouse.md): the warehouse worker's WarehouseOwner holds the DuckDB
 * file for the worker's life and runs every write as a job, one after another. Readers open
 * read-only and, while the owner holds the file, read the Parquet lake instead.
 */
import type { Campaign, Company, Contact, CustomField, Funnel, FunnelSubscriber, List, ReportSnapshot, Tag } from '../crm/types.js';
import type { PublishOptions } from './publish-lake.js';

export interface LoadContext {
  /** Identifies the load that wrote a row; every row carries it (`_load_id`). */
  loadId: string;
  /** When the data was read from the CRM. */
  syncedAt: Date;
}

export interface LoadStats {
  inserted: number;
  updated: number;
  unchanged: number;
  deleted: number;
}

export type EntityTable = 'tags' | 'lists' | 'companies' | 'custom_fields' | 'campaigns' | 'funnels';
export type EntityRow = Tag | List | Company | CustomField | Campaign | Funnel;

/** `skipped`: the CRM lacks what the stream reads (the reason is in `error`); the run still succeeded. */
export type SyncRunStatus = 'running' | 'succeeded' | 'skipped' | 'failed' | 'cancelled';

export interface SyncRunRecord {
  runId: string;
  stream: string;
  mode: 'backfill' | 'incremental' | 'reconcile';
  startedAt: Date;
  finishedAt?: Date | null;
  status: SyncRunStatus;
  pages: number;
  requests: number;
  inserted: number;
  updated: number;
  unchanged: number;
  deleted: number;
  error?: string | null;
}

export interface Warehouse {
  /** Apply pending numbered migrations from sql/, then re-apply sql/views/. Idempotent. */
  migrate(): Promise<void>;

  /** Upsert contacts with their tag and list memberships and history versions. */
  loadContacts(contacts: readonly Contact[], ctx: LoadContext): Promise<LoadStats>;
  /** Tombstone (set _deleted_at) the given contact ids. Returns how many were newly tombstoned. */
  tombstoneContacts(ids: readonly number[], ctx: LoadContext & { deletedAt?: Date }): Promise<number>;
  /**
   * Reconciliation: tombstone every live contact whose id is not in `seenIds` and whose id is at
   * most `maxId` (contacts created after the sweep began are left alone).
   */
  tombstoneContactsNotIn(seenIds: readonly number[], maxId: number, ctx: LoadContext): Promise<number>;

  /** Small streams, re-read whole each run: upsert and, with `complete`, remove/tombstone absent rows. */
  /** `keepHeld`: columns the rows' read cannot give; where a row has none the held value stays. */
  loadEntities(table: EntityTable, rows: readonly EntityRow[], ctx: LoadContext, opts: { complete: boolean; keepHeld?: readonly string[] }): Promise<LoadStats>;
  /** Funnel subscribers of one funnel (with metrics); `complete` removes those absent. */
  loadFunnelSubscribers(funnelId: number, rows: readonly FunnelSubscriber[], ctx: LoadContext, opts: { complete: boolean }): Promise<LoadStats>;
  /** Add one dated report snapshot (a row set per report in its report_* table). */
  insertReportSnapshot(snapshot: ReportSnapshot, ctx: LoadContext): Promise<number>;
  /** Add dated report snapshots in one transaction; returns how many. */
  insertReportSnapshots(snapshots: readonly ReportSnapshot[], ctx: LoadContext): Promise<number>;

  getSyncState<T = Record<string, unknown>>(stream: string): Promise<T | null>;
  setSyncState(stream: string, state: Record<string, unknown>): Promise<void>;
  recordRun(run: SyncRunRecord): Promise<void>;
  contactLoadCounts(loadId: string): Promise<{ inserted: number; updated: number }>;

  /** Highest contact id held (live or tombstoned), or 0. */
  maxContactId(): Promise<number>;

  /** Run SQL and return rows as plain objects (BIGINT as number when safe, else string). */
  query(sql: string, params?: readonly unknown[]): Promise<Record<string, unknown>[]>;

  /**
   * Write the tables changed since the last publish to the Parquet lake (atomic, incremental).
   * `buckets`: only these id buckets of the contact tables; their other changes stay pending.
   * `lanes: 2`: write two tables at a time, for publishes with the cores to themselves.
   */
  publishLake(tables?: readonly string[], options?: PublishOptions): Promise<void>;
}

/** What the push ledger, plan and source need of a warehouse scope: statements with bound parameters. */
export type WarehouseQuery = Pick<Warehouse, 'query'>;
