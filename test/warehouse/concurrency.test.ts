import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { withWarehouse, WarehouseLockedError, type WarehouseSource } from '../../src/warehouse/index.js';
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
  it('a query in another process works during a long load (from the lake), and from the file after', async () => {
    const p = paths();
    const writer = startWriter(p.dbPath, p.lakePath, 50_000);
    await writer.ready;

    const sources: WarehouseSource[] = [];
    const during = await withWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, write: false, lockTimeoutMs: 300, onSource: (s) => sources.push(s) }, (w) =>
      w.query('SELECT count(*) AS n, min(id) AS lo, max(id) AS hi FROM contacts_current'),
    );
    expect(sources[0]).toMatchObject({ kind: 'lake' });
    expect((sources[0] as { publishedAt: string | null }).publishedAt).toMatch(/^\d{4}-/);
    expect(during).toEqual([{ n: 100, lo: 1, hi: 100 }]);

    const cli = await runCli(['query', '--format', 'json', '--wait-ms', '300', 'SELECT count(*) AS n FROM contacts'], { CRMSYNC_DB: p.dbPath, CRMSYNC_LAKE: p.lakePath });
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toEqual([{ n: 100 }]);
    // crmsync query reads the catalog of the lake, never the file.
    expect(cli.stderr).toMatch(/reading the lake through .*catalog\.duckdb \(published \d{4}-/);

    writer.release();
    expect(await writer.exited).toBe(0);
    const after: WarehouseSource[] = [];
    const rows = await withWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, write: false, onSource: (s) => after.push(s) }, (w) => w.query('SELECT count(*) AS n FROM contacts'));
    expect(after[0]).toMatchObject({ kind: 'duckdb', readOnly: true });
    expect(Number(rows[0]!.n)).toBeGreaterThan(100);
  });

  it('a second writer waits for the first process to release the file, or gives up with a retryable error', async () => {
    const p = paths();
    const writer = startWriter(p.dbPath, p.lakePath, 50_000);
    await writer.ready;

    const impatient = withWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, write: true, lockTimeoutMs: 200 }, async () => 'never');
    await expect(impatient).rejects.toBeInstanceOf(WarehouseLockedError);
    await expect(impatient).rejects.toMatchObject({ retryable: true, code: 'WAREHOUSE_LOCKED' });

    let released = 0;
    setTimeout(() => {
      released = Date.now();
      writer.release();
    }, 1_000);
    const stats = await withWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, write: true, lockTimeoutMs: 30_000 }, (w) => w.loadContacts([makeContact(1, { city: 'Later' })], ctx()));
    expect(stats.updated).toBe(1);
    // it got the file only after the other process let go
    expect(released).toBeGreaterThan(0);
    expect(await writer.exited).toBe(0);
  });
});

describe('concurrent access in one process', () => {
  it('write scopes serialize, and a reader during a write reads the lake', async () => {
    const p = paths();
    await withWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, write: true }, async (w) => {
      await w.loadContacts([makeContact(1)], ctx());
      await w.publishLake();
    });
    const order: string[] = [];
    let readerSource: WarehouseSource | undefined;
    const a = withWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, write: true }, async (w) => {
      order.push('a-start');
      readerSource = await withWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, write: false }, async (r) => r.source);
      await w.loadContacts([makeContact(2)], ctx());
      await new Promise((r) => setTimeout(r, 100));
      order.push('a-end');
    });
    const b = withWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, write: true }, async (w) => {
      order.push('b-start');
      await w.loadContacts([makeContact(3)], ctx());
      order.push('b-end');
    });
    await Promise.all([a, b]);
    expect(order).toEqual(['a-start', 'a-end', 'b-start', 'b-end']);
    expect(readerSource).toMatchObject({ kind: 'lake' });
    const rows = await withWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, write: false }, (w) => w.query('SELECT id FROM contacts ORDER BY id'));
    expect(rows).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
  });

  it('a writer that cannot get the file in time gets a retryable WAREHOUSE_LOCKED, and the holder is unaffected', async () => {
    const p = paths();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const holder = withWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, write: true }, async (w) => {
      await held;
      return w.loadContacts([makeContact(1)], ctx());
    });
    await new Promise((r) => setTimeout(r, 50));
    await expect(withWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, write: true, lockTimeoutMs: 100 }, async () => 1)).rejects.toMatchObject({ code: 'WAREHOUSE_LOCKED', retryable: true });
    release();
    expect((await holder).inserted).toBe(1);
    // and the gate is free again afterwards
    expect(await withWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, write: true, lockTimeoutMs: 100 }, (w) => w.maxContactId())).toBe(1);
  });

  it('says what to do when there is no warehouse yet', async () => {
    const p = paths();
    await expect(withWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, write: false }, async () => 1)).rejects.toMatchObject({ code: 'WAREHOUSE_NOT_FOUND' });
  });
});
