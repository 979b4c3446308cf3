import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WarehouseHandle, WarehouseSource } from './duckdb-warehouse.js';
import { WarehouseLockedError, WarehouseNotFoundError, WarehouseOwnedError } from './errors.js';
import { MANIFEST_FILE } from './lake-layout.js';
import { openLakeReader, openWarehouse, type OpenWarehouseOptions } from './open-warehouse.js';
import { holdHere, isHeldHere } from './warehouse-owner.js';

export interface WithWarehouseOptions extends Omit<OpenWarehouseOptions, 'readOnly'> {
  write: boolean;
  /**
   * Writers: how long to wait for another one-shot writer (two `push --dry-run` at once) to let
   * go of the file (default 30 s). A warehouse worker owns it for its life: waiting ends there.
   */
  waitMs?: number;
  /** Readers: called once with what is being read (the file, or the lake and when it was published). */
  onSource?: (source: WarehouseSource) => void;
}

/**
 * Scoped access for tests and one-shot tools that run while no warehouse worker does. A writer
 * opens the file (waiting up to `waitMs` while another one-shot writer
 * holds it), migrates, runs `fn`, checkpoints and closes; every write of a running system is a
 * job on the worker's WarehouseOwner instead. A reader opens the file read-only and, while a writer holds it, reads the
 * published Parquet lake instead.
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
  const deadline = Date.now() + (opts.waitMs ?? 30_000);
  for (;;) {
    const release = holdHere(opts.dbPath);
    if (release) {
      try {
        const handle = await openWarehouse({ ...opts, readOnly: false });
        return releaseOnClose(handle, release);
      } catch (err) {
        release();
        if (!(err instanceof WarehouseLockedError) || Date.now() >= deadline) throw err;
      }
    } else if (Date.now() >= deadline) {
      throw new WarehouseOwnedError(opts.dbPath, 'this process');
    }
    await sleep(100);
  }
}

function releaseOnClose(handle: WarehouseHandle, release: () => void): WarehouseHandle {
  const close = handle.close.bind(handle);
  return Object.assign(handle, {
    async close() {
      try {
        await close();
      } finally {
        release();
      }
    },
  });
}

async function openReader(opts: WithWarehouseOptions): Promise<WarehouseHandle> {
  const lakeReady = existsSync(join(opts.lakePath, MANIFEST_FILE));
  let reason = 'no warehouse file';
  if (existsSync(opts.dbPath)) {
    if (isHeldHere(opts.dbPath)) {
      reason = 'this process holds the warehouse file for writing';
    } else {
      try {
        const handle = await openWarehouse({ ...opts, readOnly: true });
        opts.onSource?.(handle.source);
        return handle;
      } catch (err) {
        if (!(err instanceof WarehouseLockedError) || !lakeReady) throw err;
        reason = 'a warehouse worker holds the warehouse file';
      }
    }
  }
  if (!lakeReady) {
    if (!existsSync(opts.dbPath)) throw new WarehouseNotFoundError(opts.dbPath);
    throw new WarehouseLockedError(opts.dbPath);
  }
  const handle = await openLakeReader({ lakePath: opts.lakePath, ...(opts.sqlDir ? { sqlDir: opts.sqlDir } : {}), ...(opts.logger ? { logger: opts.logger } : {}) });
  opts.logger?.info({ reason, lake: opts.lakePath, source: handle.source }, 'reading the Parquet lake');
  opts.onSource?.(handle.source);
  return handle;
}
