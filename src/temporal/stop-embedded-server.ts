import { readEmbeddedServerRecord, removeEmbeddedServerRecord } from './embedded-server-file.js';
import { isProcessAlive } from '../process-alive.js';

/**
 * Stops the embedded Temporal dev server recorded for `dataDir`, if one runs (SIGTERM lets it
 * flush its SQLite file), and waits up to `timeoutMs` for it to exit. Returns whether one ran.
 */
export async function stopEmbeddedServer(dataDir: string, timeoutMs = 15_000): Promise<boolean> {
  const record = await readEmbeddedServerRecord(dataDir);
  if (!record) return false;
  try {
    process.kill(record.pid, 'SIGTERM');
  } catch {
    // Gone already.
  }
  const deadline = Date.now() + timeoutMs;
  while (isProcessAlive(record.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (isProcessAlive(record.pid)) process.kill(record.pid, 'SIGKILL');
  await removeEmbeddedServerRecord(dataDir, record.pid);
  return true;
}
