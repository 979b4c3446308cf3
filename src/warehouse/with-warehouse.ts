import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WarehouseHandle, WarehouseSource } from './duckdb-warehouse.js';
import { WarehouseLockedError, WarehouseNotFoundError } from './errors.js';
import { MANIFEST_FILE } from './lake-layout.js';
import { openLakeReader, openWarehouse, type OpenWarehouseOptions } from './open-warehouse.js';
import { acquireProcessLock, type ProcessLock } from './process-locks.js';
import { requestTurn, withdrawTurnRequest } from './turn-requests.js';

export interface WithWarehouseOptions extends Omit<OpenWarehouseOptions, 'readOnly'> {
  write: boolean;
  /** Writers: how long to wait for the file (default 60 s). Readers: before falling back to the lake (default 5 s: a writer asked for a turn finishes its current job and checkpoints first). */
  lockTimeoutMs?: number;
  /** Readers: called once with what is being read (the file, or the lake and when it was published). */
  onSource?: (source: WarehouseSource) => void;
}

const DEFAULT_WRITE_WAIT_MS = 60_000;
const DEFAULT_READ_WAIT_MS = 5_000;

/**
 * Scoped access. A writer holds the DuckDB file only for this scope: it waits for other writers
 * (a mutex in this process, DuckDB's file lock across processes, retried with backoff), migrates,
 * runs `fn`, checkpoints and closes. A reader opens the file read-only with a short wait and,
 * while a long write holds it, reads the published Parquet lake instead.
 */
export async function withWarehouse<T>(opts: WithWarehouseOptions, fn: (w: WarehouseHandle) => Promise<T>): Promise<T> {
  const handle = opts.write ? await openWriter(opts) : await openReader(opts);
  try {
    if (opts.write) await handle.migrate();
    const result = await fn(handle);
    await handle.checkpoint();
    return result;
  } finally {
    await handle.close();
  }
}

async function openWriter(opts: WithWarehouseOptions): Promise<WarehouseHandle> {
  const timeout = opts.lockTimeoutMs ?? DEFAULT_WRITE_WAIT_MS;
  const started = Date.now();
  const lock = await acquireProcessLock(opts.dbPath, timeout);
  if (!lock) throw new WarehouseLockedError(opts.dbPath, Date.now() - started);
  try {
    return releaseOnClose(await openWithBackoff({ ...opts, readOnly: false }, started + timeout), lock);
  } catch (err) {
    lock.release();
    throw err;
  }
}

async function openReader(opts: WithWarehouseOptions): Promise<WarehouseHandle> {
  const lakeReady = existsSync(join(opts.lakePath, MANIFEST_FILE));
  const started = Date.now();
  const timeout = opts.lockTimeoutMs ?? DEFAULT_READ_WAIT_MS;
  let reason = 'no warehouse file';
  if (existsSync(opts.dbPath)) {
    // In this process, wait for a running write scope like any writer would; DuckDB must not
    // hold the same file in two instances of one process.
    const lock = await acquireProcessLock(opts.dbPath, timeout);
    reason = 'a write in this process holds the warehouse file';
    if (lock) {
      try {
        const handle = releaseOnClose(await openWithBackoff({ ...opts, readOnly: true }, started + timeout), lock);
        opts.onSource?.(handle.source);
        return handle;
      } catch (err) {
        lock.release();
        if (!(err instanceof WarehouseLockedError) || !lakeReady) throw err;
        reason = 'a running sync holds the warehouse file';
      }
    }
  }
  if (!lakeReady) {
    if (!existsSync(opts.dbPath)) throw new WarehouseNotFoundError(opts.dbPath);
    throw new WarehouseLockedError(opts.dbPath, Date.now() - started);
  }
  const handle = await openLakeReader({ lakePath: opts.lakePath, ...(opts.sqlDir ? { sqlDir: opts.sqlDir } : {}), ...(opts.logger ? { logger: opts.logger } : {}) });
  opts.logger?.info({ reason, lake: opts.lakePath, source: handle.source }, 'reading the Parquet lake');
  opts.onSource?.(handle.source);
  return handle;
}

function releaseOnClose(handle: WarehouseHandle, lock: ProcessLock): WarehouseHandle {
  const close = handle.close.bind(handle);
  return Object.assign(handle, {
    async close() {
      try {
        await close();
      } finally {
        lock.release();
      }
    },
  });
}

/**
 * Opens, retrying while another process holds the file. While locked out it asks the holder for
 * a turn (`turn-requests.ts`), so a writer that keeps the file across jobs gives it back soon.
 */
async function openWithBackoff(opts: OpenWarehouseOptions, deadline: number): Promise<WarehouseHandle> {
  let delay = 25;
  const started = Date.now();
  let asked = false;
  try {
    for (;;) {
      try {
        return await openWarehouse(opts);
      } catch (err) {
        if (!(err instanceof WarehouseLockedError)) throw err;
        requestTurn(opts.dbPath);
        asked = true;
        const left = deadline - Date.now();
        if (left <= 0) throw new WarehouseLockedError(opts.dbPath, Date.now() - started, { cause: err.cause });
        await sleep(Math.min(left, delay * (0.5 + Math.random())));
        // At most 250 ms apart: a holder that gave the file back keeps it free only briefly.
        delay = Math.min(delay * 2, 250);
      }
    }
  } finally {
    if (asked) withdrawTurnRequest(opts.dbPath);
  }
}
