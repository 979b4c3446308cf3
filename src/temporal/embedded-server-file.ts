import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { isProcessAlive } from '../process-alive.js';

/**
 * A small file under the data directory recording the embedded dev server a crmsync process is
 * running, so a second command (`schedule create` while `worker` runs) joins it instead of
 * opening the same SQLite state with a second server.
 */
export const EmbeddedServerRecord = z.object({ address: z.string().max(200), pid: z.number().int(), namespace: z.string().max(200) });
export type EmbeddedServerRecord = z.infer<typeof EmbeddedServerRecord>;

export function embeddedServerFile(dataDir: string): string {
  return join(dataDir, 'temporal-dev-server.json');
}

export async function readEmbeddedServerRecord(dataDir: string): Promise<EmbeddedServerRecord | undefined> {
  try {
    const text = await readFile(embeddedServerFile(dataDir), 'utf8');
    if (text.length > 4096) return undefined;
    const parsed = EmbeddedServerRecord.safeParse(JSON.parse(text));
    return parsed.success && isProcessAlive(parsed.data.pid) ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export async function writeEmbeddedServerRecord(dataDir: string, record: EmbeddedServerRecord): Promise<void> {
  await writeFile(embeddedServerFile(dataDir), `${JSON.stringify(record)}\n`);
}

/** Removes the record only if it still names `pid` (a newer server may have replaced it). */
export async function removeEmbeddedServerRecord(dataDir: string, pid: number): Promise<void> {
  const current = await readEmbeddedServerRecord(dataDir).catch(() => undefined);
  if (current && current.pid !== pid) return;
  await rm(embeddedServerFile(dataDir), { force: true });
}
