import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { testWorkflowBundlePath } from '../helpers/temporal.js';
import { runCli } from './run-cli.js';

const ENTRY = fileURLToPath(new URL('../../src/cli/entry.ts', import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** `crmsync worker` in its own process; `polling` resolves once its workers poll. */
function startWorker(env: Record<string, string>): { child: ChildProcess; polling: Promise<void>; output: () => string } {
  const child = spawn(process.execPath, ['--import', TSX, ENTRY, 'worker', '--workflow-bundle', testWorkflowBundlePath()], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME, TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH, CRMSYNC_EMBEDDED_IDLE: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const polling = new Promise<void>((resolve, reject) => {
    const see = (d: Buffer) => {
      out += d.toString();
      if (out.includes('workers polling')) resolve();
    };
    child.stdout.on('data', see);
    child.stderr.on('data', see);
    child.once('exit', (code) => reject(new Error(`the worker exited (${code}) before polling:\n${out}`)));
  });
  return { child, polling, output: () => out };
}

describe('commands join a running worker (embedded Temporal)', () => {
  it('`crmsync sync` uses the running `crmsync worker`, and a second worker fails naming the fix', { timeout: 240_000 }, async () => {
    const sim = await startSimulator({ contacts: 40, seed: 31 });
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-join-'));
    // No TEMPORAL_ADDRESS: the worker starts the embedded server, the commands join it.
    const env = {
      CRM_BASE_URL: sim.baseUrl,
      CRM_USERNAME: sim.credentials.username,
      CRM_PASSWORD: sim.credentials.password,
      CRM_ALLOW_INSECURE_HTTP: '1',
      CRMSYNC_DB: join(dir, 'crm.duckdb'),
      CRMSYNC_LAKE: join(dir, 'lake'),
      CRMSYNC_DATA_DIR: dir,
      CRMSYNC_TASK_QUEUE: `join-${randomUUID().slice(0, 8)}`,
      CRMSYNC_LOG_LEVEL: 'info',
    };
    const worker = startWorker(env);
    try {
      await worker.polling;

      const sync = await runCli(['sync', '--stream', 'contacts'], env, 180_000);
      expect(sync.stderr + sync.stdout).toMatch(/a warehouse worker is running; using it/);
      expect(sync.code, sync.stderr).toBe(0);

      // Retrying webhook dead letters writes too: it runs on the worker rather than open the file it holds.
      const retry = await runCli(['webhooks', 'dead-letters', '--retry'], env, 120_000);
      expect(retry.stderr + retry.stdout).toMatch(/a warehouse worker is running; using it/);
      expect(retry.code, retry.stderr).toBe(0);
      expect(retry.stdout).toMatch(/Retried 0 dead letters: 0 applied, 0 failed again, 0 deferred/);

      const second = await runCli(['worker', '--workflow-bundle', testWorkflowBundlePath()], env, 120_000);
      expect(second.code).toBe(1);
      expect(second.stderr).toMatch(/Another crmsync worker owns .*crm\.duckdb; stop it, or use it: commands join a running worker/);
    } finally {
      const exited = new Promise<void>((resolve) => (worker.child.exitCode !== null || worker.child.signalCode !== null ? resolve() : worker.child.once('exit', () => resolve())));
      worker.child.kill('SIGTERM');
      await exited;
      await sim.close();
    }
    try {
      // The worker closed with a checkpoint: every contact is in the file.
      const rows = await withWarehouse({ dbPath: env.CRMSYNC_DB, lakePath: env.CRMSYNC_LAKE, write: true }, (w) => w.query('SELECT count(*) AS n FROM contacts'));
      expect(Number(rows[0]?.n)).toBe(40);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
