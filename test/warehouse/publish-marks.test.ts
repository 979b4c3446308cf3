import { readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CATALOG_FILE, LAKE_TABLES } from '../../src/warehouse/lake-layout.js';
import { openWarehouse, type WarehouseHandle } from '../../src/warehouse/index.js';
import type { ReportSnapshot } from '../../src/crm/types.js';
import { makeContact } from './contact-factory.js';
import { ctx, tempPaths } from './temp-warehouse.js';

// A sync with nothing new ends in a publish: it must not scan every whole-layout table to find
// that nothing changed, yet it must publish every table a write touched, also after a crash.

const tag = (id: number, title: string) => ({ id, title, slug: title.toLowerCase(), description: null, total_count: 0, subscribers_count: 0, created_at: null, updated_at: null, raw: {} });
const snapshot = (): ReportSnapshot => ({ report: 'overview', params: {}, data: { total_contacts: 1 } });
const run = (runId: string) => ({
  runId,
  stream: 'tags',
  mode: 'incremental' as const,
  startedAt: new Date(),
  finishedAt: new Date(),
  status: 'succeeded' as const,
  pages: 1,
  requests: 1,
  inserted: 0,
  updated: 0,
  unchanged: 0,
  deleted: 0,
});

let p: ReturnType<typeof tempPaths>;
let w: WarehouseHandle;

/** Each lake table's current generation directory (the symlink's target). */
function generations(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const t of Object.keys(LAKE_TABLES)) {
    try {
      out[t] = readlinkSync(join(p.lakePath, t));
    } catch {
      // not published (no such table in this warehouse)
    }
  }
  return out;
}

function changed(before: Record<string, string>): string[] {
  const now = generations();
  return Object.keys(now)
    .filter((t) => now[t] !== before[t])
    .sort();
}

/** SQL statements a publish ran that hash a whole table (publish-lake.ts tableHash). */
function countHashes(spy: { mock: { calls: unknown[][] } }): number {
  return spy.mock.calls.filter((c) => /sum\(hash\(t\)/.test(String(c[0]))).length;
}

async function seeded(): Promise<void> {
  await w.loadContacts([makeContact(1), makeContact(2)], ctx());
  await w.loadEntities('tags', [tag(1, 'A'), tag(2, 'B')], ctx(), { complete: true });
  await w.insertReportSnapshots([snapshot()], ctx());
  await w.recordRun(run('r0'));
  await w.setSyncState('tags', { at: 0 });
  await w.publishLake();
}

beforeEach(async () => {
  p = tempPaths();
  w = await openWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath });
  await w.migrate();
  await seeded();
});
afterEach(async () => {
  vi.restoreAllMocks();
  await w.close();
  p.cleanup();
});

describe('publishLake after a publish', () => {
  it('with nothing written publishes nothing, leaves the catalog alone and hashes no table', async () => {
    const before = generations();
    const catalog = statSync(join(p.lakePath, CATALOG_FILE));
    const spy = vi.spyOn(w.connection, 'runAndReadAll');
    const runs = vi.spyOn(w.connection, 'run');
    await w.publishLake();
    expect(changed(before)).toEqual([]);
    expect(countHashes(spy)).toBe(0);
    // Not a statement of its own for any table: the whole-layout ones are clean by the writer's
    // marks, and no bucketed or append table has a dirty part.
    const asked = runs.mock.calls.map((c) => /_publish_dirty AS SELECT part FROM _lake_dirty WHERE table_name = '([a-z_]+)'/.exec(String(c[0]))?.[1]).filter((t) => t !== undefined);
    expect(asked).toEqual([]);
    const after = statSync(join(p.lakePath, CATALOG_FILE));
    expect([after.ino, after.mtimeMs]).toEqual([catalog.ino, catalog.mtimeMs]);
  });

  it('after a load that changed nothing, hashes nothing and publishes nothing', async () => {
    const before = generations();
    expect(await w.loadEntities('tags', [tag(1, 'A'), tag(2, 'B')], ctx(), { complete: true })).toMatchObject({ inserted: 0, updated: 0, deleted: 0 });
    const spy = vi.spyOn(w.connection, 'runAndReadAll');
    await w.publishLake();
    expect(changed(before)).toEqual([]);
    expect(countHashes(spy)).toBe(0);
  });

  it('publishes each kind of table a write touched, and only those', async () => {
    const before = generations();
    await w.loadContacts([makeContact(3)], ctx()); // bucket tables
    await w.insertReportSnapshots([snapshot()], ctx()); // an append table
    await w.loadEntities('tags', [tag(1, 'A'), tag(2, 'B'), tag(3, 'C')], ctx(), { complete: true }); // whole, by a load
    await w.recordRun(run('r1')); // whole, bookkeeping
    await w.setSyncState('tags', { at: 1 });
    const spy = vi.spyOn(w.connection, 'runAndReadAll');
    const runs = vi.spyOn(w.connection, 'run');
    await w.publishLake();
    expect(changed(before)).toEqual(['_sync_runs', '_sync_state', 'contact_lists', 'contact_tags', 'contacts', 'contacts_history', 'report_overview', 'tags']);
    // Only the tables with dirty parts asked for them.
    const asked = runs.mock.calls.map((c) => /_publish_dirty AS SELECT part FROM _lake_dirty WHERE table_name = '([a-z_]+)'/.exec(String(c[0]))?.[1]).filter((t) => t !== undefined);
    expect(asked.filter((t) => LAKE_TABLES[t]?.kind !== 'whole').sort()).toEqual(['contact_lists', 'contact_tags', 'contacts', 'contacts_history', 'report_overview']);
    expect(countHashes(spy)).toBe(3); // only the whole tables written
    expect(await w.query(`SELECT count(*) AS n FROM read_parquet('${join(p.lakePath, 'tags')}/*.parquet')`)).toEqual([{ n: 3 }]);
  });

  it('publishes what a statement through query() wrote (it cannot name its tables)', async () => {
    const before = generations();
    await w.query(`DELETE FROM tags WHERE id = 2`);
    await w.publishLake();
    expect(changed(before)).toEqual(['tags']);
    expect(await w.query(`SELECT count(*) AS n FROM read_parquet('${join(p.lakePath, 'tags')}/*.parquet')`)).toEqual([{ n: 1 }]);
  });

  it('publishes what the webhook store wrote', async () => {
    const before = generations();
    await w.webhooks.recordDeadLetters(
      [{ deliveryId: 'd1', spoolSeq: 1, webhookId: 1, event: 'x', known: false, receivedAt: new Date(0), reason: 'record_error', error: 'e', body: new TextEncoder().encode('{}') }],
      new Date(),
    );
    await w.publishLake();
    expect(changed(before)).toEqual(['webhook_dead_letters']);
  });

  it('after a crash between a write and its publish, the next writer publishes the write', async () => {
    const before = generations();
    await w.loadEntities('tags', [tag(1, 'renamed'), tag(2, 'B')], ctx(), { complete: true });
    await w.recordRun(run('r2'));
    await w.close(); // the worker dies here: no publish
    w = await openWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath });
    await w.publishLake();
    expect(changed(before)).toEqual(['_sync_runs', 'tags']);
    expect(await w.query(`SELECT title FROM read_parquet('${join(p.lakePath, 'tags')}/*.parquet') WHERE id = 1`)).toEqual([{ title: 'renamed' }]);
  });
});

describe('publishLake of a new lake only (as a worker starts)', () => {
  it('publishes a lake never published, with every table and the catalog; a published lake is left to the syncs', async () => {
    const fresh = tempPaths();
    const n = await openWarehouse({ dbPath: fresh.dbPath, lakePath: fresh.lakePath });
    try {
      await n.migrate();
      await n.publishLake(undefined, { onlyIfNew: true });
      const tables = Object.keys(LAKE_TABLES).filter((t) => {
        try {
          return readlinkSync(join(fresh.lakePath, t)).length > 0;
        } catch {
          return false;
        }
      });
      expect(tables.length).toBeGreaterThan(20);
      expect(tables).toContain('contacts');
      expect(statSync(join(fresh.lakePath, CATALOG_FILE)).size).toBeGreaterThan(0);
    } finally {
      await n.close();
      fresh.cleanup();
    }
    // The seeded lake was published: a write since then waits for a sync's publish.
    const before = generations();
    await w.loadContacts([makeContact(3)], ctx());
    await w.publishLake(undefined, { onlyIfNew: true });
    expect(changed(before)).toEqual([]);
    await w.publishLake();
    expect(changed(before)).toContain('contacts');
  });
});
