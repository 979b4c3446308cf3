import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readlink, rename, rm, symlink } from 'node:fs/promises';
import { join, relative } from 'node:path';

/** Generations of a lake table kept on disk: the current one and the two before (readers mid-read). */
const KEEP_GENERATIONS = 3;

/** The generation `<lake>/<table>` points at, and its directory (null when it is gone). */
export async function currentGeneration(lakePath: string, table: string): Promise<{ generation: number; dir: string | null } | null> {
  try {
    const target = await readlink(join(lakePath, table));
    const generation = Number(target.split('/').pop());
    const dir = join(lakePath, target);
    // A missing target (deleted by hand) means a full rewrite, under the next number.
    if (!Number.isInteger(generation)) return null;
    if (!existsSync(dir)) return { generation, dir: null };
    return { generation, dir };
  } catch {
    return null;
  }
}

/** Points `<lake>/<table>` at `genDir` in one rename: a reader sees the old or the new generation. */
export async function swapSymlink(lakePath: string, table: string, genDir: string): Promise<void> {
  const tmp = join(lakePath, `.${table}.${randomUUID()}.tmp`);
  await symlink(relative(lakePath, genDir), tmp);
  await rename(tmp, join(lakePath, table));
}

/** Removes the generations older than the KEEP_GENERATIONS last. */
export async function pruneGenerations(tableGenDir: string, current: number): Promise<void> {
  for (const name of await safeReaddir(tableGenDir)) {
    const n = Number(name);
    if (Number.isInteger(n) && n <= current - KEEP_GENERATIONS) await rm(join(tableGenDir, name), { recursive: true, force: true });
  }
}

/** The Parquet files of a directory (none when it is gone). */
export async function listParquet(dir: string): Promise<string[]> {
  return (await safeReaddir(dir)).filter((f) => f.endsWith('.parquet'));
}

/** The Parquet files under a generation's directory, its id ranges' folders included. */
export async function countParquetFiles(dir: string): Promise<number> {
  try {
    return (await readdir(dir, { recursive: true })).filter((f) => f.endsWith('.parquet')).length;
  } catch {
    return 0;
  }
}

/** A directory's entries (none when it is gone). */
async function safeReaddir(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}
