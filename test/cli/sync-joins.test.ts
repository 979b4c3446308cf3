import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { createSchedule } from '../../src/cli/schedule.js';
import { isProcessAlive } from '../../src/process-alive.js';
import { stopEmbeddedServer } from '../../src/temporal/stop-embedded-server.js';
import { readBackgroundWorkerRecord } from '../../src/worker/background-worker-file.js';
import { streamWorkflowId } from '../../workflows/sync-ids.js';
import { withSyncEnv } from '../sync/helpers/sync-env.js';
import { runCli } from './run-cli.js';

const optionsRequests = (byRoute: Record<string, number>): number => Object.entries(byRoute).reduce((n, [route, count]) => (route.includes('options') ? n + count : n), 0);

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('crmsync sync next to other runs', () => {
  // Issue 16, problem 1: with a schedule's run syncing contacts, `crmsync sync` failed with
  // "stream contacts is already being synced by another run".
  it('joins the stream a schedule is syncing, uses its result and syncs the rest itself', { timeout: 180_000 }, async () => {
    await withSyncEnv({ worker: false, sim: { contacts: 400, seed: 16, faults: { latencyMs: { min: 150, max: 200 } } } }, async (env) => {
      const id = `crmsync-test-${env.queues.main}`;
      await createSchedule(env.client, env.config, { id, everyMs: 15 * 60_000, reconcileEveryMs: 86_400_000, streams: ['contacts'] });
      let stopWorker = env.startWorker();
      await env.client.schedule.getHandle(id).trigger();
      const child = env.client.workflow.getHandle(streamWorkflowId('contacts', env.queues.main));
      await until('the schedule run to sync contacts', async () => (await child.describe().catch(() => undefined))?.status.name === 'RUNNING');
      // Hold the scheduled run where it is while the command starts: no worker, no progress.
      await stopWorker();
      const before = optionsRequests(env.sim.stats().byRoute);
      const cli = runCli(['sync', '--stream', 'contacts', '--stream', 'tags', '--stream', 'lists'], env.env);
      // The command has checked the credentials: it looks for running streams next.
      await until('the command to check the CRM', () => optionsRequests(env.sim.stats().byRoute) > before);
      stopWorker = env.startWorker();
      const sync = await cli;
      expect(sync.code, sync.stderr).toBe(0);
      expect(sync.stdout).toMatch(new RegExp(`contacts: already being synced by ${id}-run\\S*; joining it and using its result`));
      expect(sync.stdout).toMatch(/^ {2}contacts\s+backfill\s+rows 400\s+inserted 400.*\(joined the run in progress\)$/m);
      // A first run of a small stream is a backfill, not "incremental".
      expect(sync.stdout).toMatch(/^ {2}tags\s+backfill\s+rows [1-9]\d*/m);
      expect(sync.stdout).toMatch(/^ {2}lists\s+\S+\s+rows \d+/m);
      expect(sync.stderr).not.toMatch(/already being synced by another run/);
      const runs = await env.read((w) => w.query(`SELECT stream, count(*) AS n FROM _sync_runs WHERE status = 'succeeded' GROUP BY ALL ORDER BY 1`));
      // contacts synced once (by the schedule's run), the others by the command.
      expect(runs.map((r) => [r.stream, Number(r.n)])).toEqual([
        ['contacts', 1],
        ['lists', 1],
        ['tags', 1],
      ]);
      await env.client.schedule.getHandle(id).delete();
    });
  });

  // Issue 16, problem 2: after `kill -9` of `crmsync sync` the next one refused with
  // SYNC_ALREADY_RUNNING, and the orphaned run had no worker to finish it.
  it('after kill -9 of a sync, the next sync serves the orphaned run and follows it to the end', { timeout: 300_000 }, async () => {
    await withSyncEnv({ worker: false, sim: { contacts: 1000, seed: 17, faults: { latencyMs: { min: 150, max: 200 } } } }, async (env) => {
      // The embedded default: no TEMPORAL_ADDRESS, state under the test's data directory.
      // The embedded server outlives the killed command (stopped in `finally`).
      const embedded: Record<string, string> = { ...env.env, CRMSYNC_TASK_QUEUE: env.queues.main, CRMSYNC_EMBEDDED_IDLE: '10m' };
      delete embedded.TEMPORAL_ADDRESS;
      try {
        const killed = spawn(process.execPath, ['--import', 'tsx', 'src/cli/entry.ts', 'sync', '--stream', 'contacts', '--per-page', '50', '--parallelism', '1'], {
          env: { PATH: process.env.PATH, HOME: process.env.HOME, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME, TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH, ...embedded },
          stdio: 'ignore',
        });
        const exited = new Promise((resolve) => killed.once('exit', resolve));
        await until('the first sync to fetch a few pages', () => (env.sim.stats().byRoute['GET /subscribers'] ?? 0) >= 6, 180_000);
        killed.kill('SIGKILL');
        await exited;
        // The run's worker is the background one the sync started: it would serve the run on its
        // own. Killed too, as a crash of the machine's processes leaves it, the run is an orphan.
        const worker = await readBackgroundWorkerRecord(env.dir);
        expect(worker, 'the killed sync ran on a background worker').toBeDefined();
        process.kill(worker!.pid, 'SIGKILL');
        await until('the background worker to exit', () => !isProcessAlive(worker!.pid), 30_000);
        const fetchedBefore = env.sim.stats().byRoute['GET /subscribers'] ?? 0;

        const rerun = await runCli(['sync', '--stream', 'contacts', '--stream', 'tags'], embedded, 240_000);
        expect(rerun.code, rerun.stderr).toBe(0);
        expect(rerun.stdout).toMatch(/a sync is already running \(\S+-sync, streams contacts\): following it to the end/);
        expect(rerun.stdout).toMatch(/^ {2}contacts\s+backfill\s+rows \d+/m);
        expect(rerun.stdout).toMatch(/^ {2}tags\s+\S+\s+rows \d+/m);
        // Resumed, not restarted: the rerun fetched fewer pages than the whole backfill (20 of 50).
        const fetchedAfter = (env.sim.stats().byRoute['GET /subscribers'] ?? 0) - fetchedBefore;
        expect(fetchedAfter).toBeLessThan(20 + 3);
        // The background worker that served the run holds the DuckDB file while it lingers.
        await stopEmbeddedServer(env.dir);
        const count = await env.read((w) => w.query('SELECT count(*) AS n FROM contacts'));
        expect(Number(count[0]!.n)).toBe(1000);
      } finally {
        await stopEmbeddedServer(env.dir);
      }
    });
  });
});
