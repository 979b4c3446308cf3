import { join } from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import type { Contact, FunnelSubscriber, ReportSnapshot } from '../crm/types.js';
import type { Logger } from '../logger.js';
import { FUNNEL_SUBSCRIBER_SPEC, ENTITY_SPECS } from './entity-specs.js';
import { WarehouseInputError, WarehouseReadOnlyError } from './errors.js';
import { loadContactPages, loadTypedContactPages, type CheckedRows, type ContactPage, type ContactPagesStats } from './load-contact-pages.js';
import { loadContacts } from './load-contacts.js';
import { CATALOG_FILE } from './lake-layout.js';
import { loadRows } from './load-rows.js';
import { migrate } from './migrate.js';
import { LakePublishLane, recoverLakePublishing } from './publish-aside.js';
import { publishLake, type PublishOptions } from './publish-lake.js';
import { RepeatLoads } from './repeat-loads.js';
import { insertReportSnapshot, insertReportSnapshots } from './report-snapshots.js';
import { readCount, readRows, run } from './sql-run.js';
import { contactLoadCounts, getSyncState, recordRun, setSyncState } from './sync-state.js';
import { tombstoneContacts, tombstoneContactsNotIn } from './tombstone-contacts.js';
import { isTypedTable, TypingLane, type TypedContactPages } from './typing-lane.js';
import type { EntityRow, EntityTable, LoadContext, LoadStats, SyncRunRecord, Warehouse } from './types.js';
import { webhookStoreOver, type WebhookStore } from './webhook-store.js';
import { WholeTableMarks } from './whole-table-marks.js';

/** What a handle reads: the DuckDB file (its writer), or the catalog of the Parquet lake (readers). */
export type WarehouseSource = { kind: 'duckdb'; path: string; readOnly: boolean } | { kind: 'catalog'; path: string; publishedAt: string | null };

export interface WarehouseHandle extends Warehouse {
  /**
   * The underlying connection, for other modules' own tables (e.g. appender bulk writes). Not for
   * writes to whole-layout lake tables: a publish would not know they changed (whole-table-marks.ts).
   */
  readonly connection: DuckDBConnection;
  readonly source: WarehouseSource;
  /** The webhook applier's tables (offsets, event rows, dead letters). */
  readonly webhooks: WebhookStore;
  /** Contact listing pages as the CRM sent them, parsed and typed by DuckDB (see load-contact-pages.ts). */
  loadContactPages(pages: readonly ContactPage[], ctx: LoadContext): Promise<ContactPagesStats>;
  /**
   * The first half of `loadContactPages` on a connection of its own (typing-lane.ts), so it can
   * run while a job of the owner does other work; the owner's job then loads the result with
   * `loadTypedContactPages`, or drops it with `dropTypedContactPages`.
   */
  typeContactPagesAside(pages: readonly ContactPage[]): Promise<TypedContactPages>;
  /** Loads pages `typeContactPagesAside` typed, as `loadContactPages` would load them. */
  loadTypedContactPages(typed: TypedContactPages, ctx: LoadContext): Promise<ContactPagesStats>;
  /** Drops pages typed aside that will not be loaded. */
  dropTypedContactPages(typed: TypedContactPages): Promise<void>;
  /**
   * Publishes `buckets` of the bucketed `tables` on a connection of its own (publish-aside.ts),
   * from the rows committed now, while the owner's next jobs run; resolves once it has started,
   * `done` once it ended. Without a second connection it publishes here and `done` is settled.
   */
  publishBucketsAside(tables: readonly string[], buckets: readonly number[]): Promise<{ done: Promise<void> }>;
  /** Rows this handle's loads (`loadContacts`, `loadContactPages`) appended to `contacts`: new contacts. */
  readonly contactsAppended: number;
  /** Flush the write-ahead log into the database file. */
  checkpoint(): Promise<void>;
  /** Resolves once no lake publish runs beside the writer (`publishBucketsAside`). */
  publishAsideEnded(): Promise<void>;
  /**
   * Writers of a file: attach it again after a checkpoint that failed invalidated it (its
   * write-ahead log replays). Elsewhere it does nothing.
   */
  reattach(): Promise<void>;
  close(): Promise<void>;
}

export interface DuckDbWarehouseDeps {
  instance: DuckDBInstance;
  connection: DuckDBConnection;
  source: WarehouseSource;
  lakePath: string;
  catalogPath?: string;
  sqlDir: string;
  siteTimeZone: string;
  logger?: Logger;
  /** Attaches the file again (open-warehouse.ts); only a writer of a file has it. */
  reattach?: () => Promise<void>;
  /** Another connection to the same database, set up as `connection` is (a publish's second lane). */
  connect?: () => Promise<DuckDBConnection>;
}

export class DuckDbWarehouse implements WarehouseHandle {
  readonly connection: DuckDBConnection;
  readonly source: WarehouseSource;
  readonly webhooks: WebhookStore;
  readonly #deps: DuckDbWarehouseDeps;
  readonly #marks = new WholeTableMarks();
  readonly #repeats = new RepeatLoads();
  #closed = false;
  #contactsAppended = 0;
  #typing: TypingLane | undefined;
  #publishing: LakePublishLane | undefined;

  constructor(deps: DuckDbWarehouseDeps) {
    this.#deps = deps;
    this.connection = deps.connection;
    this.source = deps.source;
    this.webhooks = webhookStoreOver(this.connection, (operation) => this.#requireWrite(operation));
  }

  get #writable(): boolean {
    return this.source.kind === 'duckdb' && !this.source.readOnly;
  }

  /**
   * Refuses writes on a read-only handle, and marks the whole-layout lake tables the operation
   * writes for the next publish: `any` (the default, so a new write path cannot be missed) when
   * the operation cannot name them; none for loads whose tables keep their own `_lake_dirty` rows.
   */
  #requireWrite(operation: string, writes: readonly string[] | 'any' = 'any'): void {
    if (!this.#writable) throw new WarehouseReadOnlyError(operation);
    if (writes === 'any') {
      this.#marks.forgetAll();
      this.#repeats.forgetAll();
    } else this.#marks.written(writes);
  }

  /** A load that reports what it changed: its table is marked only when a row changed (or when it failed midway). */
  async #markedLoad(table: string, load: () => Promise<LoadStats>): Promise<LoadStats> {
    let stats: LoadStats | undefined;
    try {
      stats = await load();
      return stats;
    } finally {
      if (!stats || stats.inserted + stats.updated + stats.deleted > 0) this.#marks.written([table]);
    }
  }

  async migrate(): Promise<void> {
    this.#requireWrite('migrate');
    await migrate(this.connection, { sqlDir: this.#deps.sqlDir, siteTimeZone: this.#deps.siteTimeZone, ...(this.#deps.logger ? { logger: this.#deps.logger } : {}) });
    await recoverLakePublishing(this.connection);
  }

  get contactsAppended(): number {
    return this.#contactsAppended;
  }

  async loadContacts(contacts: readonly Contact[], ctx: LoadContext): Promise<LoadStats> {
    this.#requireWrite('loadContacts', []);
    const stats = await loadContacts(this.connection, contacts, ctx, { siteTimeZone: this.#deps.siteTimeZone });
    this.#contactsAppended += stats.inserted;
    return stats;
  }

  /** Contact listing pages as the CRM sent them, parsed and typed by DuckDB (see load-contact-pages.ts). */
  async loadContactPages(pages: readonly ContactPage[], ctx: LoadContext): Promise<ContactPagesStats> {
    this.#requireWrite('loadContactPages', []);
    const stats = await loadContactPages(this.connection, pages, ctx, { siteTimeZone: this.#deps.siteTimeZone });
    this.#contactsAppended += stats.inserted;
    return stats;
  }

  async typeContactPagesAside(pages: readonly ContactPage[]): Promise<TypedContactPages> {
    this.#requireWrite('typeContactPagesAside', []);
    const connect = this.#deps.connect;
    if (!connect) throw new WarehouseInputError('This warehouse handle opens no second connection to type pages aside; load them with loadContactPages.');
    this.#typing ??= new TypingLane(connect, this.#deps.siteTimeZone);
    return this.#typing.type(pages);
  }

  async loadTypedContactPages(typed: TypedContactPages, ctx: LoadContext): Promise<ContactPagesStats> {
    this.#requireWrite('loadTypedContactPages', []);
    checkTyped(typed);
    let stats: ContactPagesStats;
    try {
      stats = await loadTypedContactPages(this.connection, typed.table, typed.checked, ctx);
    } finally {
      // After the load's commit, and whatever its outcome: a drop that fails does not fail a load
      // that committed; the lane drops the table then, after what it is typing now.
      const dropped = await run(this.connection, `DROP TABLE IF EXISTS ${typed.table}`).then(
        () => true,
        () => false,
      );
      if (!dropped && this.#typing) void this.#typing.drop(typed).catch(() => undefined);
    }
    this.#contactsAppended += stats.inserted;
    return stats;
  }

  async dropTypedContactPages(typed: TypedContactPages): Promise<void> {
    checkTyped(typed);
    await this.#typing?.drop(typed);
  }

  async tombstoneContacts(ids: readonly number[], ctx: LoadContext & { deletedAt?: Date }): Promise<number> {
    this.#requireWrite('tombstoneContacts', []);
    return tombstoneContacts(this.connection, ids, ctx);
  }

  async tombstoneContactsNotIn(seenIds: readonly number[], maxId: number, ctx: LoadContext): Promise<number> {
    this.#requireWrite('tombstoneContactsNotIn', []);
    return tombstoneContactsNotIn(this.connection, seenIds, maxId, ctx);
  }

  async loadEntities(table: EntityTable, rows: readonly EntityRow[], ctx: LoadContext, opts: { complete: boolean; keepHeld?: readonly string[] }): Promise<LoadStats> {
    this.#requireWrite('loadEntities', []);
    const spec = ENTITY_SPECS[table];
    if (!spec) throw new WarehouseInputError(`Unknown entity table "${String(table)}"; use one of ${Object.keys(ENTITY_SPECS).join(', ')}.`);
    const keepHeld = opts.keepHeld ?? [];
    const unknown = keepHeld.filter((c) => !spec.columns.some(([n]) => n === c));
    if (unknown.length > 0) throw new WarehouseInputError(`keepHeld names ${unknown.join(', ')}, not columns of ${table}.`);
    return this.#markedLoad(table, () => loadRows(this.connection, spec, rows, ctx, { complete: opts.complete, siteTimeZone: this.#deps.siteTimeZone, repeats: this.#repeats, keepHeld }));
  }

  async loadFunnelSubscribers(funnelId: number, rows: readonly FunnelSubscriber[], ctx: LoadContext, opts: { complete: boolean }): Promise<LoadStats> {
    this.#requireWrite('loadFunnelSubscribers', []);
    if (!Number.isSafeInteger(funnelId)) throw new WarehouseInputError(`funnelId must be an integer, got ${String(funnelId)}.`);
    const stray = rows.find((r) => r.funnel_id !== funnelId);
    if (stray) throw new WarehouseInputError(`Funnel subscriber ${stray.id} belongs to funnel ${stray.funnel_id}, not ${funnelId}; load each funnel's subscribers separately.`);
    return this.#markedLoad('funnel_subscribers', () =>
      loadRows(this.connection, FUNNEL_SUBSCRIBER_SPEC, rows, ctx, {
        complete: opts.complete,
        siteTimeZone: this.#deps.siteTimeZone,
        scope: `funnel_subscribers.funnel_id = ${funnelId}`,
        repeats: this.#repeats,
      }),
    );
  }

  async insertReportSnapshot(snapshot: ReportSnapshot, ctx: LoadContext): Promise<number> {
    this.#requireWrite('insertReportSnapshot', []);
    return insertReportSnapshot(this.connection, snapshot, ctx);
  }

  async insertReportSnapshots(snapshots: readonly ReportSnapshot[], ctx: LoadContext): Promise<number> {
    this.#requireWrite('insertReportSnapshots', []);
    return insertReportSnapshots(this.connection, snapshots, ctx);
  }

  async getSyncState<T = Record<string, unknown>>(stream: string): Promise<T | null> {
    return getSyncState<T>(this.connection, stream);
  }

  async setSyncState(stream: string, state: Record<string, unknown>): Promise<void> {
    this.#requireWrite('setSyncState', ['_sync_state']);
    await setSyncState(this.connection, stream, state);
  }

  /** Contacts inserted and updated by one run's loads (`_load_id`), from the history. */
  async contactLoadCounts(loadId: string): Promise<{ inserted: number; updated: number }> {
    return contactLoadCounts(this.connection, loadId);
  }

  async recordRun(run: SyncRunRecord): Promise<void> {
    this.#requireWrite('recordRun', ['_sync_runs']);
    await recordRun(this.connection, run);
  }

  async maxContactId(): Promise<number> {
    return readCount(this.connection, 'SELECT coalesce(max(id), 0) FROM contacts');
  }

  async query(sql: string, params?: readonly unknown[]): Promise<Record<string, unknown>[]> {
    // Stores write their own tables through here (the push ledger, dead letters): anything but a
    // plain read may have written a whole lake table.
    if (!isPlainRead(sql)) {
      this.#marks.forgetAll();
      this.#repeats.forgetAll();
    }
    return readRows(this.connection, sql, params);
  }

  async publishLake(tables?: readonly string[], options?: PublishOptions): Promise<void> {
    this.#requireWrite('publishLake', []);
    const { lakePath, catalogPath, sqlDir, logger, connect } = this.#deps;
    // One publish of the lake at a time: one aside first ends and is recorded.
    await this.publishAsideEnded();
    await this.#publishing?.settle(this.connection);
    const ctx = {
      connection: this.connection,
      lakePath,
      sqlDir,
      siteTimeZone: this.#deps.siteTimeZone,
      marks: this.#marks,
      ...(catalogPath ? { catalogPath } : {}),
      ...(logger ? { logger } : {}),
      ...(connect ? { openLane: connect } : {}),
    };
    await publishLake(ctx, tables, options);
  }

  async publishBucketsAside(tables: readonly string[], buckets: readonly number[]): Promise<{ done: Promise<void> }> {
    this.#requireWrite('publishBucketsAside', []);
    const { lakePath, catalogPath, sqlDir, logger, connect } = this.#deps;
    if (!connect) {
      await this.publishLake(tables, { buckets });
      return { done: Promise.resolve() };
    }
    this.#publishing ??= new LakePublishLane(connect);
    const ctx = { lakePath, catalogPath: catalogPath ?? join(lakePath, CATALOG_FILE), sqlDir, siteTimeZone: this.#deps.siteTimeZone, ...(logger ? { logger } : {}) };
    return this.#publishing.start(this.connection, ctx, tables, buckets);
  }

  async checkpoint(): Promise<void> {
    if (this.#writable) await run(this.connection, 'CHECKPOINT');
  }

  async publishAsideEnded(): Promise<void> {
    await this.#publishing?.idle();
  }

  async reattach(): Promise<void> {
    await this.#deps.reattach?.();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#typing?.close();
    // A publish aside ends first, and is recorded (else the next writer publishes its buckets again).
    await this.publishAsideEnded();
    if (this.#writable) await this.#publishing?.settle(this.connection).catch(() => undefined);
    await this.#publishing?.close();
    this.connection.closeSync();
    this.#deps.instance.closeSync();
  }
}

/** Typed pages as `typeContactPagesAside` gave them: their table is spliced into SQL. */
function checkTyped(typed: TypedContactPages): void {
  const c = typed.checked as Partial<CheckedRows> | undefined;
  const counts = c ? [c.rejected, c.fit, c.ids, c.minId, ...(Array.isArray(c.parts) ? c.parts : [NaN])] : [NaN];
  // The table's name and the parts are spliced into SQL.
  if (!isTypedTable(typed.table) || !counts.every((n) => Number.isSafeInteger(n)))
    throw new WarehouseInputError(`"${typed.table}" is not a table of typed contact pages; pass what typeContactPagesAside returned.`);
}

/** One statement that only reads (a second statement after a `;`, or any other verb, may write). */
function isPlainRead(sql: string): boolean {
  const body = sql.trim().replace(/;\s*$/, '');
  return /^(SELECT|FROM|DESCRIBE|SHOW|SUMMARIZE|VALUES)\b/i.test(body) && !body.includes(';');
}
