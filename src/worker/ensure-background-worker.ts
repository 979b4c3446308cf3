import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Client } from '@temporalio/client';
import { loadConfig, type Config } from '../config.js';
import { CrmsyncError } from '../errors.js';
import type { Logger } from '../logger.js';
import { isProcessAlive } from '../process-alive.js';
import { taskQueues } from '../temporal/task-queues.js';
import { warehouseWorkerPolls } from '../temporal/warehouse-worker-polls.js';
import { backgroundWorkerLog, readBackgroundWorkerRecord, writeBackgroundWorkerRecord } from './background-worker-file.js';
import { withBackgroundWorkerLock } from './background-worker-lock.js';
import { buildId } from './build-id.js';
import { configFingerprint } from './config-fingerprint.js';
import { isBackgroundWorker, stopBackgroundWorker } from './stop-background-worker.js';
import { missingWorkerLaunchSettings } from './worker-launch-settings.js';

/** The background worker did not come up; the message carries the cause from its log. */
export class BackgroundWorkerStartError extends CrmsyncError {
  override readonly code = 'WORKER_START_FAILED' as const;
  constructor(message: string) {
    super('WORKER_START_FAILED', message);
  }
}

export interface EnsureBackgroundWorkerOptions {
  config: Config;
  logger: Logger;
  client: Client;
  /** How long a starting worker may take to poll (bundling the workflows on a loaded machine is slow). */
  readyTimeoutMs?: number;
}

/**
 * Makes sure a worker polls the warehouse queue of `config` on the embedded default, so the
 * command only acts as a client: a running one (a user's `crmsync worker`, or the background
 * worker an earlier command started) is used; a background worker of another build or
 * configuration is stopped and replaced; otherwise one detached background `crmsync worker` is
 * started under a lock (two commands started together start one) and awaited until it polls. It
 * outlives the command and stops after CRMSYNC_EMBEDDED_IDLE without activity.
 */
export async function ensureBackgroundWorker(options: EnsureBackgroundWorkerOptions): Promise<void> {
  const { config, logger, client } = options;
  const fingerprint = configFingerprint(config);
  checkWorkerReadsSameConfig(fingerprint);
  const queue = taskQueues(config).warehouse;
  const dataDir = config.dataDir;
  const [build, polls] = await Promise.all([buildId(), warehouseWorkerPolls(client, queue)]);
  const want = { build, config: fingerprint };
  const isOurs = (r: { build: string; config: string } | undefined) => r !== undefined && r.build === want.build && r.config === want.config;
  if (polls) {
    const record = await readBackgroundWorkerRecord(dataDir);
    // No live background worker: the poller is a user's own `crmsync worker`.
    if (!record || isOurs(record) || !(await isBackgroundWorker(record.pid))) {
      logger.info({ taskQueue: queue, pid: record?.pid }, 'a warehouse worker is running; using it');
      return;
    }
  }
  await withBackgroundWorkerLock(dataDir, async () => {
    const record = await readBackgroundWorkerRecord(dataDir);
    if (record && (await isBackgroundWorker(record.pid))) {
      if (isOurs(record)) {
        // Another command started it (or it is still starting): wait for it like that command.
        await waitUntilPolls({ client, queue, pid: record.pid, dataDir, logFrom: 0, timeoutMs: options.readyTimeoutMs });
        logger.info({ taskQueue: queue, pid: record.pid }, 'a warehouse worker is running; using it');
        return;
      }
      logger.info({ pid: record.pid }, 'the background worker runs another build or configuration; replacing it');
      await stopBackgroundWorker(dataDir);
    } else if (await warehouseWorkerPolls(client, queue)) {
      logger.info({ taskQueue: queue }, 'a warehouse worker is running; using it');
      return;
    }
    const log = backgroundWorkerLog(dataDir);
    const logFrom = await stat(log).then(
      (s) => s.size,
      () => 0,
    );
    const pid = spawnBackgroundWorker(log);
    await writeBackgroundWorkerRecord(dataDir, { pid, ...want, startedAt: new Date().toISOString() });
    logger.info({ pid, log }, 'started a background worker');
    await waitUntilPolls({ client, queue, pid, dataDir, logFrom, timeoutMs: options.readyTimeoutMs });
  });
}

/**
 * The background worker reads its configuration from the environment (and `.env`), as a command
 * does: a caller that built another one in code (a script, a bench) would have its runs served
 * with settings it did not ask for, another CRM or DuckDB file. Refused before anything starts.
 */
function checkWorkerReadsSameConfig(fingerprint: string): void {
  let fromEnvironment: string | undefined;
  try {
    fromEnvironment = configFingerprint(loadConfig());
  } catch {
    fromEnvironment = undefined;
  }
  if (fromEnvironment !== fingerprint) {
    throw new BackgroundWorkerStartError(
      "The background worker would read its configuration from this process's environment, and the configuration given differs from it; run the workers in this process (withInProcessWorkers with linger: false, or CRMSYNC_EMBEDDED_IDLE=0), or give the settings in the environment.",
    );
  }
}

/**
 * `crmsync worker --background` as this command runs: the compiled entry beside this file, or the
 * sources through tsx. Detached, in its own session, its output appended to its log. It gets the
 * worker's launch settings here, so it need not start itself again for them.
 */
function spawnBackgroundWorker(log: string): number {
  const compiled = import.meta.url.endsWith('.js');
  const entry = fileURLToPath(new URL(`../cli/entry.${compiled ? 'js' : 'ts'}`, import.meta.url));
  const loader = compiled ? [] : ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href];
  const fd = openSync(log, 'a', 0o600);
  try {
    // Node's flags are not passed on (only NODE_OPTIONS is, in the environment).
    const launch = missingWorkerLaunchSettings(process.env, []);
    const child = spawn(process.execPath, [...(launch?.execArgv ?? []), ...loader, entry, 'worker', '--background'], {
      stdio: ['ignore', fd, fd],
      detached: true,
      env: { ...process.env, ...launch?.env },
    });
    child.unref();
    if (child.pid === undefined) throw new BackgroundWorkerStartError(`Could not start the background worker (${process.execPath}); set CRMSYNC_EMBEDDED_IDLE=0 to run the workers in the command.`);
    return child.pid;
  } finally {
    closeSync(fd);
  }
}

async function waitUntilPolls(o: { client: Client; queue: string; pid: number; dataDir: string; logFrom: number; timeoutMs: number | undefined }): Promise<void> {
  const deadline = Date.now() + (o.timeoutMs ?? 180_000);
  for (;;) {
    if (await warehouseWorkerPolls(o.client, o.queue)) return;
    const gone = !isProcessAlive(o.pid);
    if (gone || Date.now() > deadline) {
      const log = backgroundWorkerLog(o.dataDir);
      const cause = await startFailureCause(log, o.logFrom);
      throw new BackgroundWorkerStartError(
        `The background worker (pid ${o.pid}) ${gone ? 'exited before it polled' : `did not poll within ${Math.round((o.timeoutMs ?? 180_000) / 1000)}s`}: ${cause || '(its log says nothing)'}\n` +
          `Its log is ${log}; fix the cause, or set CRMSYNC_EMBEDDED_IDLE=0 to run the workers inside the command.`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

const CAUSE_BYTES = 16 * 1024;

/** The errors the worker logged (or printed) since `from`: its JSON errors' messages, and plain lines as they are. */
async function startFailureCause(log: string, from: number): Promise<string> {
  const handle = await open(log, 'r').catch(() => undefined);
  if (!handle) return '';
  try {
    const size = (await handle.stat()).size;
    const start = Math.max(from > size ? 0 : from, size - CAUSE_BYTES);
    const buf = Buffer.alloc(size - start);
    await handle.read(buf, 0, buf.length, start);
    const lines: string[] = [];
    for (const line of buf.toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      if (!line.startsWith('{')) {
        lines.push(line);
        continue;
      }
      try {
        const o = JSON.parse(line) as { level?: number; msg?: string; reason?: string; err?: { message?: string } };
        // Its errors, and why it stopped when it stopped by itself.
        if ((o.level ?? 0) >= 50 || o.reason) lines.push([o.msg, o.reason, o.err?.message].filter(Boolean).join(': '));
      } catch {
        lines.push(line);
      }
    }
    return lines.slice(-20).join('\n');
  } finally {
    await handle.close();
  }
}
