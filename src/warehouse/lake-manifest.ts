import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MANIFEST_FILE } from './lake-layout.js';

export interface LakeManifestEntry {
  generation: number;
  publishedAt: string;
  rows: number;
  files: number;
  contentHash?: string;
  /** Ids per `id_bucket` partition of a bucketed table's files (absent: written with 50,000). */
  bucketSize?: number;
}

/** Informational summary of the lake (the symlinks are the source of truth for readers). */
export interface LakeManifest {
  publishedAt: string | null;
  tables: Record<string, LakeManifestEntry>;
}

export async function readLakeManifest(lakePath: string): Promise<LakeManifest | null> {
  try {
    return JSON.parse(await readFile(join(lakePath, MANIFEST_FILE), 'utf8')) as LakeManifest;
  } catch {
    return null;
  }
}

/** Written to a temp name then renamed, so readers never see half a manifest. */
export async function writeLakeManifest(lakePath: string, manifest: LakeManifest): Promise<void> {
  const tmp = join(lakePath, `.${MANIFEST_FILE}.${process.pid}.tmp`);
  await writeFile(tmp, JSON.stringify(manifest, null, 2));
  await rename(tmp, join(lakePath, MANIFEST_FILE));
}
