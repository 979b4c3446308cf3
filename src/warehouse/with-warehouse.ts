import { setTimeout as sleep } from 'node:timers/promises';
import type { WarehouseHandle } from './duckdb-warehouse.js';
import { WarehouseLockedError, WarehouseOwnedError } from './errors.js';
import { openWarehouse, type OpenWarehouseOptions } from './open-warehouse.js';
import { holdHere } from './warehouse-owner.js';

export interface WithWarehouseOptions extends Omit<OpenWarehouseOptions, 'readOnly'> {
  /** Always a writer: readers open the lake's catalog (withCatalog), never the file. */
  write: true;
  /**
   * How long to wait for another one-shot writer (two `push --dry-run` at once) to let go of the
   * file (default 30 s). A warehouse worker owns it for its life: waiting ends there.
   */
  waitMs?: number;
}

/**
 * Scoped write access for tests and one-shot tools that run while no warehouse worker does: opens
 * the file (waiting up to `waitMs` while another one-shot writer holds it), migrates, runs `fn`,
 * checkpoints and closes. Every write of a running system is a job on the worker's
 * WarehouseOwner instead, and every reader opens the catalog (withCatalog).
 */
export async function withWarehouse<T>(opts: WithWarehouseOptions, fn: (w: WarehouseHandle) => Promise<T>): Promise<T> {
  const handle = await openWriter(opts);
  try {
    await handle.migrate();
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
