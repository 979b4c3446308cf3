import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openWarehouse, withWarehouse, type WarehouseHandle } from '../../src/warehouse/index.js';
import type { LoadContext } from '../../src/warehouse/types.js';

export interface TempPaths {
  dir: string;
  dbPath: string;
  lakePath: string;
}

export function tempPaths(): TempPaths & { cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'crmsync-wh-'));
  return { dir, dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A migrated warehouse in a fresh temp dir, held open for a whole test file (see closeTempWarehouse). */
export async function openTempWarehouse(opts: { siteTimeZone?: string } = {}): Promise<{ p: ReturnType<typeof tempPaths>; w: WarehouseHandle }> {
  const p = tempPaths();
  const w = await openWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, ...opts });
  await w.migrate();
  return { p, w };
}

export async function closeTempWarehouse(t: { p?: { cleanup(): void }; w?: WarehouseHandle }): Promise<void> {
  await t.w?.close();
  t.p?.cleanup();
}

export function writeScope<T>(p: TempPaths, fn: (w: WarehouseHandle) => Promise<T>, extra: { siteTimeZone?: string } = {}): Promise<T> {
  return withWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, write: true, ...extra }, fn);
}

let seq = 0;
export function ctx(syncedAt = new Date()): LoadContext {
  seq += 1;
  return { loadId: `load-${seq}`, syncedAt };
}
