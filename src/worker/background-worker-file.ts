import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

/**
 * The record of the background `crmsync worker` a command started for a data directory: its pid,
 * the build and configuration it runs, so the next command uses it or replaces it.
 */
export const BackgroundWorkerRecord = z.object({
  pid: z.number().int().positive(),
  build: z.string().max(100),
  config: z.string().max(100),
  startedAt: z.string().max(40),
});
export type BackgroundWorkerRecord = z.infer<typeof BackgroundWorkerRecord>;

export function backgroundWorkerFile(dataDir: string): string {
  return join(dataDir, 'worker.json');
}

/** JSON lines of the background worker (and whatever it prints before its logger exists). */
export function backgroundWorkerLog(dataDir: string): string {
  return join(dataDir, 'worker.log');
}

export async function readBackgroundWorkerRecord(dataDir: string): Promise<BackgroundWorkerRecord | undefined> {
  const text = await readFile(backgroundWorkerFile(dataDir), 'utf8').catch(() => '');
  if (!text || text.length > 4096) return undefined;
  try {
    const parsed = BackgroundWorkerRecord.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Written aside and renamed: the worker reads its record every few seconds and stops when it names
 * another. Owner-only, as the worker's log: `config` is a hash over the credentials among the rest
 * (configFingerprint), which others need not have to guess a weak password against.
 */
export async function writeBackgroundWorkerRecord(dataDir: string, record: BackgroundWorkerRecord): Promise<void> {
  const file = backgroundWorkerFile(dataDir);
  await writeFile(`${file}.${process.pid}.tmp`, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  await rename(`${file}.${process.pid}.tmp`, file);
}

/** Removes the record only if it still names `pid` (a newer worker may have replaced it). */
export async function removeBackgroundWorkerRecord(dataDir: string, pid: number): Promise<void> {
  const current = await readBackgroundWorkerRecord(dataDir);
  if (current && current.pid !== pid) return;
  await rm(backgroundWorkerFile(dataDir), { force: true });
}
