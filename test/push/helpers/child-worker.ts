import { spawn, type ChildProcess } from 'node:child_process';
import { DuckDBInstance } from '@duckdb/node-api';
import { queryOver } from '../../../src/warehouse/sql-run.js';
import type { WarehouseQuery } from '../../../src/warehouse/types.js';

/** Opens the DuckDB file for the length of `fn` (a child worker must not hold it then). */
export async function withDuckDb<T>(dbPath: string, fn: (db: WarehouseQuery) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(dbPath);
  const connection = await instance.connect();
  try {
    return await fn(queryOver(connection));
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** Starts test/push/helpers/push-worker-child.ts; resolves once it polls its task queues. */
export function startChild(env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/push/helpers/push-worker-child.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (c: Buffer) => {
      if (c.toString().includes('ready')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`push worker exited (${code}) before it was ready:\n${stderr}`)));
  });
}

export async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

export async function waitFor(cond: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the push to make progress');
    await new Promise((r) => setTimeout(r, 20));
  }
}
