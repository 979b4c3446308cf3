import { mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createJsonLogger, silentLogger } from '../../src/logger.js';
import { createActivityTracker } from '../../src/worker/activity-tracker.js';
import { backgroundWorkerFile, writeBackgroundWorkerRecord } from '../../src/worker/background-worker-file.js';
import { configFingerprint } from '../../src/worker/config-fingerprint.js';
import { BackgroundWorkerStartError, ensureBackgroundWorker } from '../../src/worker/ensure-background-worker.js';
import { sizeBoundedLog } from '../../src/worker/size-bounded-log.js';
import { watchLinger } from '../../src/worker/watch-linger.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crmsync-bg-parts-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the activity tracker', () => {
  it('counts idle time from the end of the last activity, and none while one runs', async () => {
    let now = 1_000;
    const tracker = createActivityTracker(() => now);
    let finish: () => void = () => undefined;
    now = 4_000;
    // Idle counts from when the activities are handed to the worker, not from the process start.
    const wrapped = tracker.wrap({ load: () => new Promise<string>((resolve) => (finish = () => resolve('loaded'))), version: 3 });
    now = 5_000;
    expect(tracker.idleForMs()).toBe(1_000);
    const running = wrapped.load();
    now = 90_000;
    expect(tracker.idleForMs()).toBe(0);
    finish();
    expect(await running).toBe('loaded');
    now = 91_500;
    expect(tracker.idleForMs()).toBe(1_500);
    expect(wrapped.version).toBe(3);
  });
});

describe('watchLinger', () => {
  const record = (pid: number) => writeBackgroundWorkerRecord(dir, { pid, build: 'b', config: 'c', startedAt: new Date(0).toISOString() });

  it('stops an idle worker, and not a busy one', async () => {
    await record(process.pid);
    let idle = 0;
    const reasons: string[] = [];
    const unwatch = watchLinger({ dataDir: dir, idleMs: 60_000, tracker: { idleForMs: () => idle }, stop: (r) => reasons.push(r), everyMs: 20 });
    try {
      await new Promise((r) => setTimeout(r, 150));
      expect(reasons).toEqual([]);
      idle = 60_000;
      await expect.poll(() => reasons, { timeout: 5_000 }).toEqual(['no activity for 60s']);
    } finally {
      unwatch();
    }
  });

  it('stops a worker whose data directory is deleted, or whose record names another', async () => {
    await record(process.pid);
    const reasons: string[] = [];
    const unwatch = watchLinger({ dataDir: dir, idleMs: 60_000, tracker: { idleForMs: () => 0 }, stop: (r) => reasons.push(r), everyMs: 20 });
    await record(process.pid + 1);
    await expect.poll(() => reasons, { timeout: 5_000 }).toEqual(['its record names another worker (or was removed)']);
    unwatch();

    await record(process.pid);
    const gone: string[] = [];
    const unwatchGone = watchLinger({ dataDir: dir, idleMs: 60_000, tracker: { idleForMs: () => 0 }, stop: (r) => gone.push(r), everyMs: 20 });
    // Moved away at once (a recursive delete removes the record first, which stops it as well).
    await rename(dir, `${dir}-gone`);
    try {
      await expect.poll(() => gone, { timeout: 5_000 }).toEqual([`its data directory ${dir} was deleted`]);
    } finally {
      unwatchGone();
      await rm(`${dir}-gone`, { recursive: true, force: true });
    }
  });
});

describe('the background worker log', () => {
  it('stays under its size with one older copy, and keeps credentials out', async () => {
    const path = join(dir, 'worker.log');
    const stream = sizeBoundedLog(path, 4_096);
    const logger = createJsonLogger('info', { cmd: 'worker' }, stream);
    for (let i = 0; i < 200; i++) logger.info({ i, password: 'hunter2-secret', headers: { authorization: 'Basic abc' } }, 'a line of some length to fill the file');
    await new Promise<void>((resolve) => stream.end(resolve));
    const [now, older] = await Promise.all([readFile(path, 'utf8'), readFile(`${path}.1`, 'utf8')]);
    expect((await stat(path)).size).toBeLessThanOrEqual(4_096);
    expect((await stat(`${path}.1`)).size).toBeLessThanOrEqual(4_096);
    expect(now).toMatch(/"i":199,/);
    expect(now + older).not.toMatch(/hunter2|Basic abc/);
    expect(now).toMatch(/"password":"\[redacted\]"/);
  });
});

describe('configFingerprint', () => {
  it('changes with the credentials and paths, not with the log level, and holds no secret', () => {
    const base = { CRM_BASE_URL: 'https://crm.example.test/v2', CRM_USERNAME: 'u', CRM_PASSWORD: 'first-password', CRMSYNC_DATA_DIR: dir };
    const a = configFingerprint(loadConfig(base));
    expect(configFingerprint(loadConfig({ ...base, CRMSYNC_LOG_LEVEL: 'debug' }))).toBe(a);
    expect(configFingerprint(loadConfig({ ...base, CRM_PASSWORD: 'second-password' }))).not.toBe(a);
    expect(configFingerprint(loadConfig({ ...base, CRMSYNC_DB: join(dir, 'other.duckdb') }))).not.toBe(a);
    expect(a).toMatch(/^[0-9a-f]{16}$/);
  });
});

it('the record file is where the docs say', async () => {
  await writeFile(backgroundWorkerFile(dir), '{}');
  expect(backgroundWorkerFile(dir)).toBe(join(dir, 'worker.json'));
});

it('the record, which holds the configuration fingerprint, and the log are readable by their owner only', async () => {
  await writeBackgroundWorkerRecord(dir, { pid: process.pid, build: 'b', config: configFingerprint(loadConfig({ CRM_PASSWORD: 'a-password' })), startedAt: new Date(0).toISOString() });
  const log = sizeBoundedLog(join(dir, 'worker.log'));
  await new Promise<void>((resolve) => log.end(resolve));
  for (const file of [backgroundWorkerFile(dir), join(dir, 'worker.log')]) expect((await stat(file)).mode & 0o777, file).toBe(0o600);
});

describe('ensureBackgroundWorker', () => {
  it('refuses a configuration built in code that the background worker, reading the environment, would not serve', async () => {
    // Another DuckDB file than the environment's: a worker started from the environment would write there.
    const config = loadConfig({ CRMSYNC_DATA_DIR: dir, CRMSYNC_DB: join(dir, 'other.duckdb') });
    const untouched = new Proxy(
      {},
      {
        get: () => {
          throw new Error('Temporal was asked');
        },
      },
    ) as Client;
    const failed = ensureBackgroundWorker({ config, logger: silentLogger, client: untouched });
    await expect(failed).rejects.toBeInstanceOf(BackgroundWorkerStartError);
    await expect(failed).rejects.toThrow('withInProcessWorkers with linger: false, or CRMSYNC_EMBEDDED_IDLE=0');
    // Nothing started: no worker record, lock or log in the data directory.
    expect(await readdir(dir)).toEqual([]);
  });
});
