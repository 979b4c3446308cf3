import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/index.js';
import { isProcessAlive } from '../../src/process-alive.js';
import { readEmbeddedServerRecord } from '../../src/temporal/embedded-server-file.js';
import { stopEmbeddedServer } from '../../src/temporal/stop-embedded-server.js';
import { backgroundWorkerFile, backgroundWorkerLog, readBackgroundWorkerRecord } from '../../src/worker/background-worker-file.js';
import { embeddedTestEnv } from '../helpers/test-env.js';
import { runCli } from './run-cli.js';

// Issue 16: a sync with nothing to do in at most 3 s on the embedded default. The worker outlives
// the command (CRMSYNC_EMBEDDED_IDLE) as the embedded server does, and the next command uses it.

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Background `crmsync worker` processes of this data directory (from their command line and environment). */
async function backgroundWorkersOf(dir: string): Promise<number[]> {
  const { readdir } = await import('node:fs/promises');
  const pids: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    if (!cmdline.includes('\0worker\0--background')) continue;
    const environ = await readFile(`/proc/${name}/environ`, 'utf8').catch(() => '');
    if (environ.split('\0').includes(`CRMSYNC_DATA_DIR=${dir}`)) pids.push(Number(name));
  }
  return pids;
}

let sim: Awaited<ReturnType<typeof startSimulator>>;
const dirs: string[] = [];
beforeAll(async () => {
  sim = await startSimulator({ contacts: 60, seed: 41 });
});
afterAll(async () => {
  for (const dir of dirs) await stopEmbeddedServer(dir).catch(() => undefined);
  await sim.close();
  for (const dir of dirs) {
    // Nothing of a test may outlive it.
    expect(await backgroundWorkersOf(dir)).toEqual([]);
    await rm(dir, { recursive: true, force: true });
  }
});

async function setup(idle: string, extra: Record<string, string> = {}): Promise<{ dir: string; env: Record<string, string> }> {
  const dir = await mkdtemp(join(tmpdir(), 'crmsync-bg-'));
  dirs.push(dir);
  return { dir, env: embeddedTestEnv(sim, dir, { CRM_ALLOW_INSECURE_HTTP: '1', CRMSYNC_LOG_LEVEL: 'info', CRMSYNC_EMBEDDED_IDLE: idle, ...extra }) };
}

describe('the background worker on the embedded default', () => {
  it('a second sync within the idle period is served by the first one’s worker, and stopping the server stops it', { timeout: 300_000 }, async () => {
    const { dir, env } = await setup('10m');
    const first = await runCli(['sync'], env, 180_000);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^ {2}contacts\s+backfill\s+rows 60\b/m);
    const record = await readBackgroundWorkerRecord(dir);
    expect(record, 'the first sync records the worker it started').toBeDefined();
    expect(isProcessAlive(record!.pid)).toBe(true);
    expect(await backgroundWorkersOf(dir)).toEqual([record!.pid]);
    // Started with the worker's launch settings, in one process (it need not start itself again).
    expect((await readFile(`/proc/${record!.pid}/environ`, 'utf8')).split('\0')).toContain('MALLOC_ARENA_MAX=2');
    expect((await readFile(`/proc/${record!.pid}/cmdline`, 'utf8')).split('\0')).toContain('--max-semi-space-size=4');
    // The credentials reach the worker in its environment, which only its user may read, never on
    // its command line, which every user may (ps); the embedded Temporal gets them in neither.
    expect(await readFile(`/proc/${record!.pid}/cmdline`, 'utf8')).not.toContain(sim.credentials.password);
    const server = await readEmbeddedServerRecord(dir);
    for (const part of ['cmdline', 'environ']) expect(await readFile(`/proc/${server!.pid}/${part}`, 'utf8'), part).not.toContain(sim.credentials.password);

    // The command is a client: its terminal output is the sync's, the worker's lines are in its log.
    const second = await runCli(['sync'], env, 180_000);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/^ {2}contacts\s+incremental\s+rows \d+/m);
    expect(second.stderr).toMatch(/a warehouse worker is running; using it/);
    expect(second.stderr).not.toMatch(/started a background worker|workers polling/);
    expect((await readBackgroundWorkerRecord(dir))?.pid).toBe(record!.pid);
    expect(await backgroundWorkersOf(dir)).toEqual([record!.pid]);

    // Readers work while it holds the DuckDB file: they read the lake's catalog.
    const query = await runCli(['query', 'select count(*) as n from contacts'], env, 60_000);
    expect(query.code, query.stderr).toBe(0);
    expect(query.stdout).toMatch(/\b60\b/);
    const status = await runCli(['status'], env, 60_000);
    expect(status.code, status.stderr).toBe(0);
    // A dry run opens the file itself: the lingering worker gives it up.
    const source = "select 'ann@example.test' as email, 'subscribed' as status";
    const dryRun = await runCli(['push', '--from', source, '--dry-run'], env, 120_000);
    expect(dryRun.code, dryRun.stdout + dryRun.stderr).toBe(0);
    expect(isProcessAlive(record!.pid)).toBe(false);
    // A push runs on a background worker like a sync: the dry run's stop left none, one starts.
    const push = await runCli(['push', '--from', source], env, 120_000);
    expect(push.code, push.stdout + push.stderr).toBe(0);
    expect(push.stderr).toMatch(/started a background worker/);

    const log = await readFile(backgroundWorkerLog(dir), 'utf8');
    expect(log).toMatch(/"msg":"workers polling"/);
    expect(log).not.toContain(sim.credentials.password);

    expect(await stopEmbeddedServer(dir)).toBe(true);
    expect(await backgroundWorkersOf(dir)).toEqual([]);
    expect(await readBackgroundWorkerRecord(dir)).toBeUndefined();
  });

  it('two syncs started together start one worker', { timeout: 300_000 }, async () => {
    const { dir, env } = await setup('10m');
    const both = await Promise.all([runCli(['sync', '--stream', 'tags'], env, 180_000), runCli(['sync', '--stream', 'lists'], env, 180_000)]);
    for (const r of both) expect(r.code, r.stderr).toBe(0);
    const started = both.map((r) => (r.stderr.match(/started a background worker/g) ?? []).length);
    expect(started.reduce((a, b) => a + b, 0)).toBe(1);
    const record = await readBackgroundWorkerRecord(dir);
    expect(await backgroundWorkersOf(dir)).toEqual([record!.pid]);
    await stopEmbeddedServer(dir);
  });

  it('the worker exits by itself after the idle period', { timeout: 300_000 }, async () => {
    // Long enough for a loaded machine to hand the worker its first activity after it polls.
    const { dir, env } = await setup('6s');
    const sync = await runCli(['sync', '--stream', 'tags'], env, 180_000);
    expect(sync.code, sync.stderr).toBe(0);
    const record = await readBackgroundWorkerRecord(dir);
    expect(record).toBeDefined();
    await until('the idle worker to exit', () => !isProcessAlive(record!.pid), 120_000);
    expect(await readFile(backgroundWorkerLog(dir), 'utf8')).toMatch(/"reason":"no activity for 6s","msg":"background worker stopping"/);
    await expect(readFile(backgroundWorkerFile(dir), 'utf8')).rejects.toThrow();
    await stopEmbeddedServer(dir);
  });

  it('the worker exits when the embedded server it joined goes away', { timeout: 300_000 }, async () => {
    const { dir, env } = await setup('10m');
    const sync = await runCli(['sync', '--stream', 'tags'], env, 180_000);
    expect(sync.code, sync.stderr).toBe(0);
    const worker = await readBackgroundWorkerRecord(dir);
    const server = await readEmbeddedServerRecord(dir);
    expect(worker && server).toBeTruthy();
    // The server alone, as its own idle stop or a crash ends it (stopEmbeddedServer stops the worker first).
    process.kill(server!.pid, 'SIGTERM');
    await until('the worker to exit', () => !isProcessAlive(worker!.pid), 120_000);
    expect(await readFile(backgroundWorkerLog(dir), 'utf8')).toMatch(/the embedded Temporal this worker joined has stopped/);
    await stopEmbeddedServer(dir);
  });

  it('a worker of another build is stopped and replaced', { timeout: 300_000 }, async () => {
    const { dir, env } = await setup('10m');
    const first = await runCli(['sync', '--stream', 'tags'], env, 180_000);
    expect(first.code, first.stderr).toBe(0);
    const old = await readBackgroundWorkerRecord(dir);
    expect(old).toBeDefined();
    // As an upgrade leaves it: the running worker was started from other code.
    await writeFile(backgroundWorkerFile(dir), `${JSON.stringify({ ...old, build: 'an-older-build' })}\n`);
    const second = await runCli(['sync', '--stream', 'tags'], env, 180_000);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/runs another build or configuration; replacing it/);
    const now = await readBackgroundWorkerRecord(dir);
    expect(now?.pid).not.toBe(old!.pid);
    expect(now?.build).toBe(old!.build);
    expect(isProcessAlive(old!.pid)).toBe(false);
    expect(await backgroundWorkersOf(dir)).toEqual([now!.pid]);
    await stopEmbeddedServer(dir);
  });

  it('a background worker killed during a run is replaced, and the command follows the run to its end', { timeout: 300_000 }, async () => {
    const slow = await startSimulator({ contacts: 600, seed: 43, faults: { latencyMs: { min: 150, max: 200 } } });
    try {
      const { dir, env } = await setup('10m', { CRM_BASE_URL: slow.baseUrl, CRM_USERNAME: slow.credentials.username, CRM_PASSWORD: slow.credentials.password });
      const sync = runCli(['sync', '--stream', 'contacts', '--per-page', '50', '--parallelism', '1'], env, 240_000);
      await until('the worker to fetch a few pages', () => (slow.stats().byRoute['GET /subscribers'] ?? 0) >= 4, 180_000);
      const killed = await readBackgroundWorkerRecord(dir);
      process.kill(killed!.pid, 'SIGKILL');
      const result = await sync;
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toMatch(/the background worker stopped during the run; starting another/);
      expect(result.stdout).toMatch(/^ {2}contacts\s+backfill\s+rows \d+/m);
      const now = await readBackgroundWorkerRecord(dir);
      expect(now?.pid).not.toBe(killed!.pid);
      const count = await runCli(['query', 'select count(*) as n from contacts'], env, 60_000);
      expect(count.stdout).toMatch(/\b600\b/);
      await stopEmbeddedServer(dir);
    } finally {
      await slow.close();
    }
  });

  it('a worker that cannot start fails the command with its cause, without hanging', { timeout: 300_000 }, async () => {
    const blocked = await mkdtemp(join(tmpdir(), 'crmsync-bg-file-'));
    dirs.push(blocked);
    // A regular file where the warehouse's folder should be: the worker cannot open the file.
    await writeFile(join(blocked, 'not-a-folder'), 'x');
    const { env } = await setup('10m', { CRMSYNC_DB: join(blocked, 'not-a-folder', 'crm.duckdb') });
    const sync = await runCli(['sync', '--stream', 'tags'], env, 180_000);
    expect(sync.code).toBe(1);
    expect(sync.stderr).toMatch(/The background worker \(pid \d+\) exited before it polled: [^\n]*not-a-folder/);
    expect(sync.stderr).toMatch(/Its log is \S+worker\.log/);
  });
});
