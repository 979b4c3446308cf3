import { spawn, type ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { runSync } from '../../src/sync/run-sync.js';
import { WORKER_MALLOC_ARENA_MAX, WORKER_SEMI_SPACE_FLAG } from '../../src/worker/worker-launch-settings.js';
import { childPids } from '../helpers/child-pids.js';
import { testWorkflowBundlePath } from '../helpers/temporal.js';
import { differencesFromTruth } from './helpers/compare-truth.js';
import { startPageProxy } from './helpers/page-proxy.js';
import { withSyncEnv } from './helpers/sync-env.js';

const PER_PAGE = 40;
const PARALLELISM = 3;

/**
 * `crmsync worker` with its launch settings given, as the background spawn and compose give them:
 * one process, so the SIGKILL below crashes the worker itself. (Without them the command starts
 * itself again, and a SIGKILL to that launcher makes the worker drain, not crash.)
 */
function startWorkerProcess(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [WORKER_SEMI_SPACE_FLAG, '--import', 'tsx', 'src/cli/entry.ts', 'worker', '--workflow-bundle', testWorkflowBundlePath()], {
    env: { ...process.env, MALLOC_ARENA_MAX: WORKER_MALLOC_ARENA_MAX, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  // The worker itself, not a launcher of it (Linux: a launcher's worker is its child).
  if (process.platform === 'linux') expect(childPids(child.pid!)).toEqual([]);
  child.kill('SIGKILL');
  await exited;
}

async function waitFor(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the backfill to progress');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('worker crashes during a backfill', () => {
  it('SIGKILL at several points, restart: exact result, only in-flight pages refetched', { timeout: 150_000 }, async () => {
    await withSyncEnv({ worker: false, sim: { contacts: 1600, seed: 9, faults: { latencyMs: { min: 40, max: 60 } } } }, async (env) => {
      const proxy = await startPageProxy(env.sim.baseUrl);
      const childEnv = { ...env.env, CRM_BASE_URL: proxy.baseUrl };
      let child = startWorkerProcess(childEnv);
      let stderr = '';
      const collect = (c: ChildProcess) => c.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
      collect(child);
      try {
        const lastPage = Math.ceil(1600 / PER_PAGE);
        const done = runSync({
          client: env.client,
          taskQueues: env.queues,
          input: { streams: ['contacts'], tuning: { perPage: PER_PAGE, parallelism: PARALLELISM, maxPagesPerRange: 5, heartbeatTimeoutMs: 2_000 } },
        });
        done.catch(() => undefined);
        const fetched = () => [...proxy.ascPageFetches().keys()].length;
        const kills = [8, 20, 31];
        // Pages in flight at each kill: fetched but not yet in the page log (not durable).
        let inFlight = 0;
        for (const at of kills) {
          await waitFor(() => fetched() >= at, 60_000);
          await killHard(child);
          const seen = fetched();
          const logged = await env.read((w) => w.query(`SELECT count(*) AS n FROM _sync_scan_pages`));
          inFlight += seen - Number(logged[0]?.n ?? 0);
          child = startWorkerProcess(childEnv);
          collect(child);
        }
        const result = await done;
        // Counted from the page log: pages loaded by killed attempts are included. Inserted is read
        // from what the loads wrote, so the killed attempts' loads count too.
        expect(result.streams[0]).toMatchObject({ mode: 'backfill', rows: 1600, pages: lastPage + 1, inserted: 1600, updated: 0 });
        const fetches = proxy.ascPageFetches();
        expect([...fetches.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: lastPage }, (_, i) => i + 1));
        const refetches = [...fetches.values()].reduce((n, c) => n + c - 1, 0);
        process.stderr.write(`worker-kill: ${lastPage} pages, ${kills.length} kills, ${inFlight} in flight at the kills, ${refetches} refetched\n`);
        expect(refetches).toBeLessThanOrEqual(inFlight);
      } catch (err) {
        throw new Error(`${String(err)}\nworker stderr tail:\n${stderr}`);
      } finally {
        await killHard(child);
        await proxy.close();
      }
      expect(await env.read((w) => differencesFromTruth(w, env.sim.truth(), ['contacts']))).toEqual([]);
      expect(await env.read((w) => w.query(`SELECT inserted, updated FROM _sync_runs WHERE stream = 'contacts'`))).toEqual([{ inserted: 1600, updated: 0 }]);
    });
  });
});
