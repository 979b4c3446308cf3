import { join } from 'node:path';
import { createWebhookActivities, type WebhookActivityDeps } from '../../activities/webhook-activities.js';
import { silentLogger } from '../../src/logger.js';
import { openWarehouseOwner, type WarehouseHandle, type WarehouseOwner } from '../../src/warehouse/index.js';
import type { WebhookRefetcher } from '../../src/webhooks/refetcher.js';
import { createSpoolRangeReader } from '../../src/webhooks/spool-range-reader.js';
import type { ApplySpoolResult, WebhookActivities } from '../../workflows/webhook-apply-types.js';

export interface OwnerApply {
  owner: WarehouseOwner;
  dbPath: string;
  lakePath: string;
  spoolDir: string;
  /**
   * The webhook activities as the warehouse worker builds them, over this owner and the spool in
   * `spoolDir`. A new set is a worker restart: it forgets which contacts it refetched when.
   */
  activities(opts?: { refetcher?: WebhookRefetcher }): WebhookActivities;
  /**
   * Calls `applyWebhookSpool` until `target` is applied, as webhookApplyWorkflow does (never
   * waiting for new deliveries); at most `rounds` calls. Returns each call's result.
   */
  applyUntil(acts: WebhookActivities, target: number, opts?: { batchSize?: number; rounds?: number }): Promise<ApplySpoolResult[]>;
  /** A job on the owner, as every read and write of the file is while it is held. */
  query(sql: string, params?: readonly unknown[]): Promise<Record<string, unknown>[]>;
}

export interface OwnerApplyOptions {
  dir: string;
  refetcher: WebhookRefetcher;
  /** Stands between the activity and the owner's handle (e.g. to make one load fail). */
  wrap?: (w: WarehouseHandle) => WarehouseHandle;
  publishEveryMs?: number;
  now?: () => number;
}

/** A warehouse owner on `<dir>/crm.duckdb` and the apply activity reading `<dir>/spool`, closed after `fn`. */
export async function withOwnerApply<T>(opts: OwnerApplyOptions, fn: (a: OwnerApply) => Promise<T>): Promise<T> {
  const dbPath = join(opts.dir, 'crm.duckdb');
  const lakePath = join(opts.dir, 'lake');
  const spoolDir = join(opts.dir, 'spool');
  const owner = await openWarehouseOwner({ dbPath, lakePath });
  const wrap = opts.wrap ?? ((w) => w);
  const writes: WebhookActivityDeps['writes'] = { run: (job) => owner.run((w) => job(wrap(w))) };
  try {
    return await fn({
      owner,
      dbPath,
      lakePath,
      spoolDir,
      activities: (o = {}) =>
        createWebhookActivities({
          writes,
          spool: createSpoolRangeReader(spoolDir),
          refetcher: o.refetcher ?? opts.refetcher,
          logger: silentLogger,
          publishEveryMs: opts.publishEveryMs ?? 0,
          ...(opts.now ? { now: opts.now } : {}),
        }),
      async applyUntil(acts, target, o = {}) {
        const results: ApplySpoolResult[] = [];
        for (let i = 0; i < (o.rounds ?? 50); i++) {
          const r = await acts.applyWebhookSpool({ batchSize: o.batchSize ?? 2_000, waitMs: 0 });
          results.push(r);
          if (r.appliedSeq >= target) return results;
        }
        throw new Error(`the apply activity did not reach seq ${target} in ${o.rounds ?? 50} calls (last: ${JSON.stringify(results.at(-1))})`);
      },
      query: (sql, params = []) => owner.run((w) => w.query(sql, params)),
    });
  } finally {
    await owner.close();
  }
}
