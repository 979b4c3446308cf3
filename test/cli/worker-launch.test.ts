import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isProcessAlive } from '../../src/process-alive.js';
import { startSimulator } from '../../src/simulator/index.js';
import { childPids } from '../helpers/child-pids.js';
import { testTemporalAddress, testWorkflowBundlePath } from '../helpers/temporal.js';

const ENTRY = fileURLToPath(new URL('../../src/cli/entry.ts', import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

interface Started {
  launcher: ChildProcess;
  output: () => string;
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Every process this file started, stopped after its tests whatever they found. */
const started: ChildProcess[] = [];

/** `crmsync worker` as a user runs it, in a process group of its own (as a shell's job is), once its workers poll. */
async function startWorker(env: Record<string, string>): Promise<Started> {
  const launcher = spawn(process.execPath, ['--import', TSX, ENTRY, 'worker', '--workflow-bundle', testWorkflowBundlePath()], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  started.push(launcher);
  let out = '';
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => launcher.once('exit', (code, signal) => resolve({ code, signal })));
  await new Promise<void>((resolve, reject) => {
    const see = (d: Buffer): void => {
      out += d.toString();
      if (out.includes('workers polling')) resolve();
    };
    launcher.stdout!.on('data', see);
    launcher.stderr!.on('data', see);
    launcher.once('exit', (code, signal) => reject(new Error(`the worker ended (${code ?? signal}) before polling:\n${out}`)));
  });
  return { launcher, output: () => out, ended };
}

async function until(what: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!what() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  return what();
}

describe.runIf(process.platform === 'linux')('`crmsync worker` starts with the launch settings', () => {
  let sim: Awaited<ReturnType<typeof startSimulator>>;
  let dir: string;
  const env = (): Record<string, string> => ({
    CRM_BASE_URL: sim.baseUrl,
    CRM_USERNAME: sim.credentials.username,
    CRM_PASSWORD: sim.credentials.password,
    CRM_ALLOW_INSECURE_HTTP: '1',
    CRMSYNC_DB: join(dir, `${randomUUID()}.duckdb`),
    CRMSYNC_LAKE: join(dir, 'lake'),
    CRMSYNC_DATA_DIR: dir,
    CRMSYNC_TASK_QUEUE: `launch-${randomUUID().slice(0, 8)}`,
    TEMPORAL_ADDRESS: testTemporalAddress(),
    CRMSYNC_LOG_LEVEL: 'info',
  });
  beforeAll(async () => {
    sim = await startSimulator({ contacts: 10, seed: 7 });
    dir = await mkdtemp(join(tmpdir(), 'crmsync-launch-'));
  });
  afterAll(async () => {
    for (const p of started) {
      for (const pid of p.exitCode === null && p.signalCode === null ? [...childPids(p.pid!), p.pid!] : []) process.kill(pid, 'SIGKILL');
    }
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("runs the worker with them, and a terminal's Ctrl-C drains it once and ends both with its status", { timeout: 120_000 }, async () => {
    const w = await startWorker(env());
    const [worker] = childPids(w.launcher.pid!);
    try {
      expect(worker, 'the worker runs in a process of its own').toBeDefined();
      expect(readFileSync(`/proc/${worker}/environ`, 'utf8').split('\0')).toContain('MALLOC_ARENA_MAX=2');
      expect(readFileSync(`/proc/${worker}/cmdline`, 'utf8').split('\0')).toContain('--max-semi-space-size=4');
      // The launcher's own group, as a terminal's Ctrl-C reaches a job: the worker gets it once.
      process.kill(-w.launcher.pid!, 'SIGINT');
      expect(await w.ended).toEqual({ code: 0, signal: null });
      // Its output came through the launcher's stdio.
      expect(w.output().match(/draining workers/g)).toHaveLength(1);
      expect(await until(() => !isProcessAlive(worker!), 10_000)).toBe(true);
    } finally {
      if (worker && isProcessAlive(worker)) process.kill(worker, 'SIGKILL');
    }
  });

  it('ends the launcher the way the worker ended, and drains the worker if the launcher is killed', { timeout: 120_000 }, async () => {
    const a = await startWorker(env());
    const [killed] = childPids(a.launcher.pid!);
    process.kill(killed!, 'SIGKILL');
    expect(await a.ended).toEqual({ code: null, signal: 'SIGKILL' });

    const b = await startWorker(env());
    const [orphan] = childPids(b.launcher.pid!);
    try {
      process.kill(b.launcher.pid!, 'SIGKILL');
      await b.ended;
      expect(await until(() => !isProcessAlive(orphan!), 30_000), 'the worker stops without its launcher').toBe(true);
    } finally {
      if (orphan && isProcessAlive(orphan)) process.kill(orphan, 'SIGKILL');
    }
  });

  it('publishes a new lake as it starts, so its catalog is there before any sync', { timeout: 120_000 }, async () => {
    const lake = join(dir, `lake-${randomUUID().slice(0, 8)}`);
    const w = await startWorker({ ...env(), CRMSYNC_LAKE: lake });
    try {
      // The catalog is written last, after the manifest.
      expect(await until(() => existsSync(join(lake, 'catalog.duckdb')), 30_000), w.output()).toBe(true);
      const manifest = JSON.parse(readFileSync(join(lake, '_manifest.json'), 'utf8')) as { tables: Record<string, { rows: number }> };
      expect(manifest.tables.contacts).toMatchObject({ rows: 0 });
    } finally {
      w.launcher.kill('SIGTERM');
      await w.ended;
    }
  });

  it('starts once when the settings are given, or turned off', { timeout: 120_000 }, async () => {
    const givens: Record<string, string>[] = [{ MALLOC_ARENA_MAX: '4', NODE_OPTIONS: '--max-semi-space-size=8' }, { CRMSYNC_WORKER_LAUNCH_DEFAULTS: '0' }];
    for (const given of givens) {
      const w = await startWorker({ ...env(), ...given });
      expect(childPids(w.launcher.pid!)).toEqual([]);
      w.launcher.kill('SIGTERM');
      expect(await w.ended).toEqual({ code: 0, signal: null });
    }
  });
});
