import { existsSync, statSync } from 'node:fs';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkpointUnderLimit } from '../../src/warehouse/checkpoint-under-limit.js';
import { openWarehouse, openWarehouseOwner, type WarehouseOwner, type WarehouseOwnerOptions } from '../../src/warehouse/index.js';
import { makeContact } from './contact-factory.js';
import { ctx, tempPaths } from './temp-warehouse.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});

const THRESHOLD = 256 * 1000;

/** An owner of a fresh file with a small checkpoint threshold, and the owner's log lines. */
async function open(
  extra: Partial<WarehouseOwnerOptions> = {},
  p = tempPaths(),
): Promise<{ owner: WarehouseOwner; walBytes(): number; logs: Record<string, unknown>[]; dbPath: string; lakePath: string }> {
  const logs: Record<string, unknown>[] = [];
  const logger = pino({ level: 'debug' }, { write: (l: string) => void logs.push(JSON.parse(l) as Record<string, unknown>) });
  const owner = await openWarehouseOwner({ dbPath: p.dbPath, lakePath: p.lakePath, logger, memoryLimit: '128MB', checkpointThreshold: '256KB', ...extra });
  cleanups.push(p.cleanup);
  cleanups.push(() => owner.close().catch(() => undefined));
  const wal = `${p.dbPath}.wal`;
  return { owner, logs, dbPath: p.dbPath, lakePath: p.lakePath, walBytes: () => (existsSync(wal) ? statSync(wal).size : 0) };
}

function contacts(from: number, n: number) {
  return Array.from({ length: n }, (_, i) => makeContact(from + i));
}

const checkpoints = (logs: Record<string, unknown>[]) => logs.filter((l) => l.msg === 'warehouse checkpoint');
const memoryLimit = (o: WarehouseOwner) => o.run(async (w) => (await w.query(`SELECT current_setting('memory_limit') AS m`))[0]!.m);
const count = (o: WarehouseOwner) => o.run(async (w) => Number((await w.query('SELECT count(*) AS n FROM contacts'))[0]!.n));

describe('the warehouse owner checkpoints itself', () => {
  it('after the job whose write-ahead log passed the threshold, not in its commits and not before, under a lowered limit restored after', async () => {
    const t = await open();
    const configured = await memoryLimit(t.owner);
    await t.owner.run((w) => w.loadContacts(contacts(1, 20), ctx()));
    const small = t.walBytes();
    expect(small).toBeGreaterThan(0);
    expect(small).toBeLessThan(THRESHOLD);
    // The load's own commits leave the log past the threshold: DuckDB does not checkpoint in them.
    const inJob = await t.owner.run(async (w) => {
      await w.loadContacts(contacts(100, 1000), ctx());
      return t.walBytes();
    });
    expect(inJob).toBeGreaterThanOrEqual(THRESHOLD);
    // The next job runs after the owner's checkpoint.
    const after = await t.owner.run(async () => t.walBytes());
    expect(after).toBeLessThan(small);
    expect(checkpoints(t.logs)).toEqual([expect.objectContaining({ limit: '64000KB' })]);
    expect(await memoryLimit(t.owner)).toBe(configured);
    expect(await count(t.owner)).toBe(1020);
  });

  it('checkpoints once its loads appended the growth rows to contacts since the last checkpoint', async () => {
    const p = tempPaths();
    // A threshold the log never reaches: only the growth decides.
    const t = await open({ checkpointThreshold: '1000GB', checkpointGrowthRows: 100 }, p);
    await t.owner.run((w) => w.loadContacts(contacts(1, 60), ctx()));
    expect(checkpoints(t.logs)).toHaveLength(0);
    await t.owner.run((w) => w.loadContacts(contacts(61, 50), ctx()));
    // The next job runs after the checkpoint the 110 rows called for.
    expect(await t.owner.run(async () => t.walBytes())).toBe(0);
    expect(checkpoints(t.logs)).toHaveLength(1);
    // Counted from the checkpoint, not from the start: 60 more rows are not enough.
    await t.owner.run((w) => w.loadContacts(contacts(111, 60), ctx()));
    expect(checkpoints(t.logs)).toHaveLength(1);
    // Contacts loaded again (unchanged) add no rows.
    await t.owner.run((w) => w.loadContacts(contacts(111, 60), ctx()));
    expect(checkpoints(t.logs)).toHaveLength(1);
    // Pages as the sync loads them count too: 60 + 40 new.
    const body = JSON.stringify({ subscribers: { total: 40, per_page: 40, current_page: 1, data: contacts(171, 40).map((c) => c.raw) } });
    await t.owner.run((w) => w.loadContactPages([{ page: 1, body }], ctx()));
    expect(await t.owner.run(async () => t.walBytes())).toBe(0);
    expect(checkpoints(t.logs)).toHaveLength(2);
    await t.owner.close();
    // Reopened over 210 rows: the count starts from them.
    const again = await open({ checkpointThreshold: '1000GB', checkpointGrowthRows: 100 }, p);
    await again.owner.run((w) => w.loadContacts(contacts(211, 60), ctx()));
    expect(checkpoints(again.logs)).toHaveLength(0);
    expect(await count(again.owner)).toBe(270);
  });

  it('waits for a lake publish beside the writer to end before it checkpoints, and the next job waits with it', async () => {
    // The two at once made the 1M backfill's largest resident sets (bench/results/notes.md, "a typed batch loaded in place").
    const t = await open({ checkpointThreshold: '1000GB', checkpointGrowthRows: 10 });
    let release = (): void => undefined;
    const gate = new Promise<void>((r) => (release = r));
    let asked = 0;
    await t.owner.run(async (w) => {
      // The handle's own wait, held open here as a long publish would hold it.
      (w as { publishAsideEnded: () => Promise<void> }).publishAsideEnded = async () => {
        asked++;
        await gate;
      };
    });
    await t.owner.run((w) => w.loadContacts(contacts(1, 20), ctx()));
    let nextRan = false;
    const next = t.owner.run(async () => {
      nextRan = true;
      return t.walBytes();
    });
    await vi.waitFor(() => expect(asked).toBe(1));
    expect(nextRan).toBe(false);
    expect(checkpoints(t.logs)).toHaveLength(0);
    expect(t.walBytes()).toBeGreaterThan(0);
    release();
    expect(await next).toBe(0);
    expect(checkpoints(t.logs)).toHaveLength(1);
  });

  it('leaves the checkpoints to the write-ahead log alone with checkpointGrowthRows false', async () => {
    const t = await open({ checkpointThreshold: '1000GB', checkpointGrowthRows: false });
    await t.owner.run((w) => w.loadContacts(contacts(1, 300), ctx()));
    await t.owner.run(async () => undefined);
    expect(checkpoints(t.logs)).toHaveLength(0);
    expect(t.walBytes()).toBeGreaterThan(0);
  });

  it('close() checkpoints, and what was written survives a reopen', async () => {
    const p = tempPaths();
    const t = await open({}, p);
    await t.owner.run((w) => w.loadContacts(contacts(1, 50), ctx()));
    expect(t.walBytes()).toBeGreaterThan(0);
    await t.owner.close();
    expect(t.walBytes()).toBe(0);
    expect(checkpoints(t.logs)).toHaveLength(1);
    const again = await openWarehouseOwner({ dbPath: p.dbPath, lakePath: p.lakePath });
    try {
      expect(await count(again)).toBe(50);
    } finally {
      await again.close();
    }
  });

  it('checkpoints at the normal limit when DuckDB cannot lower it that far, and restores it', async () => {
    const t = await open({ checkpointMemoryLimit: '1KB' });
    const configured = await memoryLimit(t.owner);
    await t.owner.run((w) => w.loadContacts(contacts(1, 1000), ctx()));
    expect(await t.owner.run(async () => t.walBytes())).toBe(0);
    expect(checkpoints(t.logs)).toEqual([expect.objectContaining({ limit: '128MB' })]);
    expect(await memoryLimit(t.owner)).toBe(configured);
    expect(await count(t.owner)).toBe(1000);
  });

  it('a checkpoint that fails keeps the rows and the queue: the next job runs and the next checkpoint succeeds', async () => {
    const t = await open();
    // A job that leaves a transaction open with changes of its own: DuckDB refuses to checkpoint.
    await t.owner.run(async (w) => {
      await w.loadContacts(contacts(1, 1000), ctx());
      await w.connection.run('BEGIN TRANSACTION');
      await w.connection.run('CREATE TABLE left_open (x INTEGER)');
    });
    // A job queued after it runs once the owner's checkpoint has failed.
    expect(await t.owner.run(async () => t.walBytes())).toBeGreaterThanOrEqual(THRESHOLD);
    expect(t.logs.filter((l) => String(l.msg).startsWith('warehouse checkpoint failed'))).toHaveLength(1);
    await t.owner.run((w) => w.connection.run('ROLLBACK'));
    expect(await t.owner.run(async () => t.walBytes())).toBe(0);
    expect(checkpoints(t.logs)).toHaveLength(1);
    expect(await count(t.owner)).toBe(1000);
  });
});

describe('a checkpoint that runs out of memory under the lowered limit', () => {
  it('invalidates the file in DuckDB: it is attached again, checkpointed at the normal limit, and nothing is lost', async () => {
    const p = tempPaths();
    cleanups.push(p.cleanup);
    const w = await openWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath });
    cleanups.push(() => w.close());
    await w.migrate();
    await w.connection.run(`SET checkpoint_threshold = '1000GB'; SET memory_limit = '128MB'`);
    const configured = (await w.query(`SELECT current_setting('memory_limit') AS m`))[0]!.m;
    await w.loadContacts(contacts(1, 3000), ctx());
    // Nowhere to spill, and a limit just above what DuckDB holds: it can be set, but the checkpoint
    // cannot allocate its first block under it.
    await w.connection.run(`SET temp_directory = ''`);
    const held = Number((await w.query('SELECT sum(memory_usage_bytes) AS u FROM duckdb_memory()'))[0]!.u);
    let reattached = 0;
    const how = await checkpointUnderLimit(w.connection, {
      normal: '128MB',
      lowered: `${Math.floor(held / 1024) + 64}KiB`,
      reattach: async () => {
        reattached++;
        await w.reattach();
      },
    });
    expect(reattached).toBe(1);
    expect(how).toBe('normal');
    expect(existsSync(`${p.dbPath}.wal`) ? statSync(`${p.dbPath}.wal`).size : 0).toBe(0);
    expect((await w.query(`SELECT current_setting('memory_limit') AS m`))[0]!.m).toBe(configured);
    await w.loadContacts(contacts(5000, 10), ctx());
    expect(Number((await w.query('SELECT count(*) AS n FROM contacts'))[0]!.n)).toBe(3010);
  });
});
