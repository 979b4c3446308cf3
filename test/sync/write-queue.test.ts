import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { warehouseOpener } from '../../src/sync/sync-runtime.js';
import type { OpenWarehouse } from '../../src/sync/warehouse-port.js';
import { createWriteQueue } from '../../src/sync/write-queue.js';
import { turnRequested, withWarehouse } from '../../src/warehouse/index.js';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const WAREHOUSE = pathToFileURL(fileURLToPath(new URL('../../src/warehouse/index.ts', import.meta.url))).href;

/** Runs one read through withWarehouse({ write: false }) in a child process; stdout is the rows as JSON. */
function readInAnotherProcess(dbPath: string, lakePath: string, sql: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const script = `const { withWarehouse } = await import(${JSON.stringify(WAREHOUSE)});
const rows = await withWarehouse({ dbPath: ${JSON.stringify(dbPath)}, lakePath: ${JSON.stringify(lakePath)}, write: false, lockTimeoutMs: 20000 }, (w) => w.query(${JSON.stringify(sql)}));
process.stdout.write(JSON.stringify(rows));`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', TSX, '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('write queue scopes (real DuckDB)', () => {
  let dir: string;
  let scopes: number;
  let open: OpenWarehouse;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'crmsync-wq-'));
    scopes = 0;
    const real = warehouseOpener({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake') });
    open = (write, fn) => {
      scopes++;
      return real(write, fn);
    };
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps one scope open for jobs arriving within the linger, commits each job before it resolves, then releases the file', async () => {
    const writes = createWriteQueue(open, { lingerMs: 1_000, maxHoldMs: 60_000 });
    await writes.run((w) => w.connection.run('CREATE TABLE t (n INTEGER)'));
    for (let i = 1; i <= 5; i++) {
      // Each job starts after the previous one resolved, with a gap shorter than the linger.
      await writes.run((w) => w.connection.run(`INSERT INTO t VALUES (${i})`));
      await sleep(20);
    }
    expect(scopes).toBe(1);
    // Once the linger passes with nothing queued, the scope checkpoints and closes: another
    // opener of the same file (here a reader in this process) gets it and sees every row.
    for (let i = 0; i < 100 && writes.pending > 0; i++) await sleep(50);
    expect(writes.pending).toBe(0);
    const rows = await withWarehouse({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake'), write: false, lockTimeoutMs: 5_000 }, (w) =>
      w.query('SELECT sum(n) AS s, count(*) AS c FROM t'),
    );
    expect(rows).toEqual([{ s: 15, c: 5 }]);
  });

  it('gives the file back after maxHoldMs even while jobs keep coming, and serves the rest in a new scope', async () => {
    const writes = createWriteQueue(open, { lingerMs: 1_000, maxHoldMs: 300 });
    await writes.run((w) => w.connection.run('CREATE TABLE t (n INTEGER)'));
    const started = Date.now();
    let n = 0;
    while (Date.now() - started < 1_000) {
      await writes.run((w) => w.connection.run(`INSERT INTO t VALUES (${++n})`));
      await sleep(10);
    }
    expect(scopes).toBeGreaterThanOrEqual(2);
    const rows = await writes.run((w) => w.query('SELECT count(*) AS c FROM t'));
    expect(rows).toEqual([{ c: n }]);
  });

  it('a failing job rejects alone; a failing open rejects what waits, and the queue recovers', async () => {
    const writes = createWriteQueue(open, { lingerMs: 50 });
    const bad = writes.run((w) => w.query('SELECT * FROM no_such_table'));
    const good = writes.run((w) => w.query('SELECT 1 AS one'));
    await expect(bad).rejects.toThrow();
    expect(await good).toEqual([{ one: 1 }]);
    for (let i = 0; i < 100 && writes.pending > 0; i++) await sleep(20);

    let failOpen = true;
    const flaky = createWriteQueue(
      (write, fn) => {
        if (failOpen) return Promise.reject(new Error('cannot open the warehouse'));
        return open(write, fn);
      },
      { lingerMs: 50 },
    );
    const a = flaky.run((w) => w.query('SELECT 1 AS one'));
    const b = flaky.run((w) => w.query('SELECT 2 AS two'));
    await expect(a).rejects.toThrow('cannot open the warehouse');
    await expect(b).rejects.toThrow('cannot open the warehouse');
    failOpen = false;
    expect(await flaky.run((w) => w.query('SELECT 3 AS three'))).toEqual([{ three: 3 }]);
  });

  it('gives the file to a query from another process that asks for a turn, then takes it back', { timeout: 60_000 }, async () => {
    const dbPath = join(dir, 'crm.duckdb');
    // Without the turn request this scope would hold the file for a minute, and with no lake
    // published yet the query would fail with WAREHOUSE_LOCKED.
    const writes = createWriteQueue(open, { lingerMs: 60_000, maxHoldMs: 60_000, yieldWhen: () => turnRequested(dbPath) });
    await writes.run((w) => w.connection.run('CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1), (2)'));
    expect(writes.pending).toBe(1); // the scope is open, lingering
    // `crmsync query` reads the lake's catalog now and never asks; a reader of the file in
    // another process (withWarehouse's reader path, until one worker owns the file) still does.
    const query = await readInAnotherProcess(dbPath, join(dir, 'lake'), 'SELECT count(*) AS n FROM t');
    expect(query.code, query.stderr).toBe(0);
    expect(JSON.parse(query.stdout)).toEqual([{ n: 2 }]);
    // The writer serves the next job in a fresh scope.
    await writes.run((w) => w.connection.run('INSERT INTO t VALUES (3)'));
    expect(scopes).toBe(2);
    expect(await writes.run((w) => w.query('SELECT count(*) AS n FROM t'))).toEqual([{ n: 3 }]);
  });
});
