import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import type { Config } from '../config.js';
import { startDevServer, type DevServer } from './dev-server.js';
import { embeddedServerFile, readEmbeddedServerRecord, removeEmbeddedServerRecord, writeEmbeddedServerRecord } from './embedded-server-file.js';
import { withEmbeddedServerLock } from './embedded-server-lock.js';
import { TemporalDevServerError, TemporalUnreachableError } from './errors.js';
import { locateTemporalCliFromConfig } from './locate-cli.js';
import { waitForTemporal } from './wait-for-temporal.js';
import { isProcessAlive } from '../process-alive.js';

export interface TemporalHandle {
  client: Client;
  connection: Connection;
  /** Present when asked for with `{ worker: true }`: workers need the native (Rust core) connection. */
  nativeConnection: NativeConnection | undefined;
  address: string;
  namespace: string;
  /** True when no TEMPORAL_ADDRESS was set and a local dev server (ours or a sibling's) is used. */
  embedded: boolean;
  /**
   * Aborts (with a TemporalDevServerError as reason) when the embedded server this process joined
   * goes away with the other crmsync process that ran it. Long-running commands (the worker)
   * stop on it instead of polling a server that no longer exists.
   */
  serverLost: AbortSignal;
}

export interface WithTemporalOptions {
  /** Also open a NativeConnection for workers. */
  worker?: boolean;
  /** How long to try reaching TEMPORAL_ADDRESS before giving up. */
  connectTimeoutMs?: number;
}

type TemporalConfig = Pick<Config, 'temporal' | 'dataDir'>;

/** Touched by every command using the embedded server; the server stops once it is idle this long. */
export function embeddedLeaseFile(dataDir: string): string {
  return join(dataDir, 'temporal-dev-server.lease');
}

async function touchLease(dataDir: string): Promise<void> {
  await writeFile(embeddedLeaseFile(dataDir), `${process.pid}\n`).catch(() => undefined);
}

/**
 * Runs `fn` with a connected Temporal client. With TEMPORAL_ADDRESS set it connects there;
 * otherwise it joins the embedded dev server another crmsync process runs on the same data
 * directory, or starts one itself (state in `<dataDir>/temporal.sqlite`, so schedules survive
 * restarts) and stops it when `fn` settles. Connections are closed in every case.
 */
export async function withTemporal<T>(config: TemporalConfig, fn: (t: TemporalHandle) => Promise<T>, options: WithTemporalOptions = {}): Promise<T> {
  const namespace = config.temporal.namespace;
  const idleMs = config.temporal.address ? 0 : (config.temporal.embeddedIdleMs ?? 0);
  const { address, server, siblingPid } = await resolveServer(config, idleMs);
  const lost = new AbortController();
  const watch = siblingPid === undefined ? undefined : watchSibling(siblingPid, config.dataDir, lost);
  // While this command runs, the embedded server is in use: keep its lease fresh.
  const touch = (): void => {
    touchLease(config.dataDir).catch(() => undefined); // it swallows its own errors; a missed touch is retried next tick
  };
  const lease = idleMs > 0 ? setInterval(touch, Math.min(5_000, Math.max(500, idleMs / 3))) : undefined;
  lease?.unref();
  try {
    const connection = await connect(address, options.connectTimeoutMs ?? 10_000, server !== undefined || !config.temporal.address);
    try {
      // The worker package is large: commands that run no worker never load it.
      const nativeConnection = options.worker ? await (await import('@temporalio/worker')).NativeConnection.connect({ address }) : undefined;
      try {
        const client = new Client({ connection, namespace });
        return await fn({ client, connection, nativeConnection, address, namespace, embedded: !config.temporal.address, serverLost: lost.signal });
      } finally {
        await nativeConnection?.close();
      }
    } finally {
      await connection.close();
    }
  } finally {
    if (watch) clearInterval(watch);
    if (lease) {
      // The idle time counts from the end of the last command.
      clearInterval(lease);
      await touchLease(config.dataDir);
    } else if (server) {
      await removeEmbeddedServerRecord(config.dataDir, server.pid).catch(() => undefined);
      await server.stop();
    }
  }
}

async function resolveServer(config: TemporalConfig, idleMs: number): Promise<{ address: string; server: DevServer | undefined; siblingPid?: number }> {
  if (config.temporal.address) return { address: config.temporal.address, server: undefined };
  await mkdir(config.dataDir, { recursive: true });
  if (idleMs > 0) await touchLease(config.dataDir);
  const joined = await joinSibling(config);
  if (joined) return { address: joined.address, server: undefined, siblingPid: joined.pid };
  return await withEmbeddedServerLock(config.dataDir, async () => {
    // A sibling may have finished starting while we waited for the lock.
    const late = await joinSibling(config);
    if (late) return { address: late.address, server: undefined, siblingPid: late.pid };
    const cli = locateTemporalCliFromConfig(config);
    const namespace = config.temporal.namespace;
    const keepAlive =
      idleMs > 0 ? { idleMs, leaseFile: embeddedLeaseFile(config.dataDir), recordFile: embeddedServerFile(config.dataDir), logFile: join(config.dataDir, 'temporal-dev-server.log') } : undefined;
    const server = await startDevServer({ cliPath: cli.path, namespace, dbFile: join(config.dataDir, 'temporal.sqlite'), keepAlive });
    await writeEmbeddedServerRecord(config.dataDir, { address: server.address, pid: server.pid, namespace });
    return { address: server.address, server };
  });
}

/** Polls the process that runs the joined server; aborts `lost` once it is gone. */
function watchSibling(pid: number, dataDir: string, lost: AbortController): NodeJS.Timeout {
  const timer = setInterval(() => {
    // A failed probe (the rejection handler below) is not proof the sibling is gone: the next tick asks again.
    runsDevServer(pid).then(
      (alive) => {
        if (alive || lost.signal.aborted) return;
        clearInterval(timer);
        lost.abort(
          new TemporalDevServerError(
            `The embedded Temporal of ${dataDir} (run by process ${pid}) stopped with the command that started it; ` +
              'run this command again (it will start its own), or set TEMPORAL_ADDRESS to a long-running Temporal.',
          ),
        );
      },
      () => undefined,
    );
  }, SIBLING_WATCH_MS);
  timer.unref();
  return timer;
}

const SIBLING_WATCH_MS = 2_000;
/** How long a silent but running embedded server of another command gets to answer or to exit. */
const SIBLING_PATIENCE_MS = 20_000;

/** The address and pid of a live embedded server another crmsync process runs on this data dir. */
async function joinSibling(config: TemporalConfig): Promise<{ address: string; pid: number } | undefined> {
  const sibling = await readEmbeddedServerRecord(config.dataDir);
  if (!sibling) return undefined;
  const namespace = config.temporal.namespace;
  // The recorded pid may have been reused by an unrelated process after a crash.
  if (!(await runsDevServer(sibling.pid))) {
    await removeEmbeddedServerRecord(config.dataDir, sibling.pid);
    return undefined;
  }
  // A second server on the same SQLite file would corrupt it: refuse rather than start one.
  if (sibling.namespace !== namespace) {
    throw new TemporalDevServerError(
      `Process ${sibling.pid} runs the embedded Temporal of ${config.dataDir} for namespace "${sibling.namespace}"; ` +
        `use TEMPORAL_NAMESPACE=${sibling.namespace}, another CRMSYNC_DATA_DIR, or stop that process.`,
    );
  }
  // Silent for a moment: its command may be stopping it right now (it stops with its command when
  // CRMSYNC_EMBEDDED_IDLE is 0). Wait for it to go, then start our own, or for it to answer.
  const deadline = Date.now() + SIBLING_PATIENCE_MS;
  for (let timeoutMs = 5_000; ; timeoutMs = 1_000) {
    if (await waitForTemporal({ address: sibling.address, namespace, timeoutMs })) return { address: sibling.address, pid: sibling.pid };
    if (!(await runsDevServer(sibling.pid))) {
      await removeEmbeddedServerRecord(config.dataDir, sibling.pid);
      return undefined;
    }
    if (Date.now() > deadline) break;
  }
  throw new TemporalDevServerError(`The embedded Temporal (process ${sibling.pid} at ${sibling.address}) does not answer; stop that process, ` + `or set TEMPORAL_ADDRESS to a running Temporal.`);
}

async function runsDevServer(pid: number): Promise<boolean> {
  if (!isProcessAlive(pid)) return false;
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => undefined);
  // Without /proc (not Linux) we cannot tell: assume it is the server.
  return cmdline === undefined || cmdline.includes('start-dev');
}

async function connect(address: string, timeoutMs: number, embedded: boolean): Promise<Connection> {
  try {
    return await Connection.connect({ address, connectTimeout: timeoutMs });
  } catch (err) {
    const fix = embedded
      ? 'the embedded dev server stopped answering; run the command again, or set TEMPORAL_ADDRESS to a running Temporal'
      : 'start Temporal there (for example `docker compose up -d temporal`), fix TEMPORAL_ADDRESS, or unset it to use an embedded dev server';
    throw new TemporalUnreachableError(`Cannot reach Temporal at ${address}: ${fix}.`, { cause: err });
  }
}
