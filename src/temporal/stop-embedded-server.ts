import { stopBackgroundWorker } from '../worker/stop-background-worker.js';
import { readEmbeddedServerRecord, removeEmbeddedServerRecord } from './embedded-server-file.js';
import { terminateProcess } from '../process-alive.js';

/**
 * Stops the embedded Temporal dev server recorded for `dataDir`, if one runs (SIGTERM lets it
 * flush its SQLite file), and waits up to `timeoutMs` for it to exit. Returns whether one ran.
 * The background worker of `dataDir` is stopped first: it drains against a live server.
 */
export async function stopEmbeddedServer(dataDir: string, timeoutMs = 15_000): Promise<boolean> {
  await stopBackgroundWorker(dataDir, timeoutMs).catch(() => undefined);
  const record = await readEmbeddedServerRecord(dataDir);
  if (!record) return false;
  await terminateProcess(record.pid, timeoutMs);
  await removeEmbeddedServerRecord(dataDir, record.pid);
  return true;
}
