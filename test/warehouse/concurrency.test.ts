import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { openWarehouseOwner, withCatalog, withWarehouse, WarehouseOwnedError } from '../../src/warehouse/index.js';
import { makeContact } from './contact-factory.js';
import { ctx, tempPaths } from './temp-warehouse.js';

const HOLD_WRITER = fileURLToPath(new URL('./fixtures/hold-writer.ts', import.meta.url));
const ENTRY = fileURLToPath(new URL('../../src/cli/entry.ts', import.meta.url));
const children: ChildProcess[] = [];
const cleanups: (() => void)[] = [];

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  for (const f of cleanups.splice(0)) f();
});

function paths() {
  const p = tempPaths();
  cleanups.push(p.cleanup);
  return p;
}

/** Starts the holding writer in another process: `ready` once it holds the file; it loads until `release()`. */
function startWriter(dbPath: string, lakePath: string, maxHoldMs: number): { ready: Promise<void>; release(): void; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', HOLD_WRITER, dbPath, lakePath, String(maxHoldMs)], { stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('READY')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`writer exited (${code}) before READY: ${err}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { ready, exited, release: () => child.stdin.end('stop\n') };
}

function runCli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ENTRY, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('concurrent access across processes', () => {
  it('a query in another process works during a long load (from the catalog), and the file holds every load after', async () => {
    const p = paths();
    const writer = startWriter(p.dbPath, p.lakePath, 50_000);
    await writer.ready;

    const during = await withCatalog({ catalogPath: join(p.lakePath, 'catalog.duckdb') }, async (r) => ({
      source: r.source,
      rows: await r.query('SELECT count(*) AS n, min(id) AS lo, max(id) AS hi FROM contacts_current'),
    }));
    expect(during.source).toMatchObject({ kind: 'catalog', publishedAt: expect.stringMatching(/^\d{4}-/) });
    expect(during.rows).toEqual([{ n: 100, lo: 1, hi: 100 }]);

    const cli = await runCli(['query', '--format', 'json', 'SELECT count(*) AS n FROM contacts'], { CRMSYNC_DB: p.dbPath, CRMSYNC_LAKE: p.lakePath });
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toEqual([{ n: 100 }]);
    // crmsync query reads the catalog of the lake, never the file.
    expect(cli.stderr).toMatch(/reading the lake through .*catalog\.duckdb \(published \d{4}-/);

    writer.release();
    expect(await writer.exited).toBe(0);
    const rows = await withWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, write: true }, (w) => w.query('SELECT count(*) AS n FROM contacts'));
    expect(Number(rows[0]!.n)).toBeGreaterThan(100);
  });

  it('a second owner in another process fails at once naming the fix; a one-shot writer gets WAREHOUSE_LOCKED after its wait', async () => {
    const p = paths();
    const writer = startWriter(p.dbPath, p.lakePath, 50_000);
    await writer.ready;

    const second = openWarehouseOwner({ dbPath: p.dbPath, lakePath: p.lakePath });
    await expect(second).rejects.toBeInstanceOf(WarehouseOwnedError);
    await expect(second).rejects.toThrow(/another crmsync worker owns .*crm\.duckdb; stop it, or use it: commands join a running worker/i);
    await expect(withWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, write: true, waitMs: 300 }, async () => 'never')).rejects.toMatchObject({ code: 'WAREHOUSE_LOCKED', retryable: true });

    writer.release();
    expect(await writer.exited).toBe(0);
    // Closed with a checkpoint: the file is free and holds every load.
    const owner = await openWarehouseOwner({ dbPath: p.dbPath, lakePath: p.lakePath });
    try {
      expect(await owner.run((w) => w.maxContactId())).toBeGreaterThan(100);
    } finally {
      await owner.close();
    }
  });
});

describe('one owner in a process', () => {
  it('runs write jobs one after another in the order they came, and a reader meanwhile reads the catalog', async () => {
    const p = paths();
    const owner = await openWarehouseOwner({ dbPath: p.dbPath, lakePath: p.lakePath });
    try {
      await owner.run(async (w) => {
        await w.loadContacts([makeContact(1)], ctx());
        await w.publishLake();
      });
      const order: string[] = [];
      const job = (name: string, id: number) =>
        owner.run(async (w) => {
          order.push(`${name}-start`);
          await w.loadContacts([makeContact(id)], ctx());
          // Yield to the event loop: a job that started now would interleave.
          await new Promise((r) => setImmediate(r));
          order.push(`${name}-end`);
        });
      const a = job('a', 2);
      const b = job('b', 3);
      const c = job('c', 4);
      const readerSource = await withCatalog({ catalogPath: join(p.lakePath, 'catalog.duckdb') }, async (r) => r.source);
      await Promise.all([a, b, c]);
      expect(order).toEqual(['a-start', 'a-end', 'b-start', 'b-end', 'c-start', 'c-end']);
      expect(readerSource).toMatchObject({ kind: 'catalog' });
      expect(owner.pending).toBe(0);
    } finally {
      await owner.close();
    }
    const rows = await withWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, write: true }, (w) => w.query('SELECT id FROM contacts ORDER BY id'));
    expect(rows).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }]);
  });

  it('a failing job rejects alone and the next runs; writes outside the owner are refused naming the fix', async () => {
    const p = paths();
    const owner = await openWarehouseOwner({ dbPath: p.dbPath, lakePath: p.lakePath });
    try {
      const bad = owner.run((w) => w.query('SELECT * FROM no_such_table'));
      const good = owner.run((w) => w.loadContacts([makeContact(1)], ctx()));
      await expect(bad).rejects.toThrow(/no_such_table/);
      expect((await good).inserted).toBe(1);
      await expect(openWarehouseOwner({ dbPath: p.dbPath, lakePath: p.lakePath })).rejects.toThrow(/already owns .*run writes as jobs on that owner/);
      await expect(withWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, write: true, waitMs: 200 }, async () => 1)).rejects.toMatchObject({ code: 'WAREHOUSE_OWNED' });
    } finally {
      await owner.close();
    }
    await expect(owner.run(async () => 1)).rejects.toMatchObject({ code: 'WAREHOUSE_OWNER_CLOSED', retryable: true });
    // Closed: the file is free for a one-shot writer again.
    expect(await withWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, write: true }, (w) => w.maxContactId())).toBe(1);
  });

  it('says what to do when nothing is published yet', async () => {
    const p = paths();
    await expect(withCatalog({ catalogPath: join(p.lakePath, 'catalog.duckdb') }, async () => 1)).rejects.toMatchObject({
      code: 'CATALOG_NOT_FOUND',
      message: expect.stringMatching(/run `crmsync sync` first/),
    });
  });
});
