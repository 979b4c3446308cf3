import { readFile } from 'node:fs/promises';
import { isProcessAlive, terminateProcess } from '../process-alive.js';
import { readBackgroundWorkerRecord, removeBackgroundWorkerRecord } from './background-worker-file.js';

/** Whether `pid` is a live background `crmsync worker` (not an unrelated process that reused the pid). */
export async function isBackgroundWorker(pid: number): Promise<boolean> {
  if (!isProcessAlive(pid)) return false;
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => undefined);
  // Without /proc (not Linux) we cannot tell: assume it is the worker.
  return cmdline === undefined || (cmdline.includes('\0worker\0') && cmdline.includes('--background'));
}

/**
 * Stops the background worker recorded for `dataDir`, if one runs: SIGTERM drains it (activities
 * in flight finish or are retried by Temporal elsewhere) and it closes the DuckDB file; SIGKILL
 * after `timeoutMs`. Returns whether one ran.
 */
export async function stopBackgroundWorker(dataDir: string, timeoutMs = 30_000): Promise<boolean> {
  const record = await readBackgroundWorkerRecord(dataDir);
  if (!record) return false;
  const running = await isBackgroundWorker(record.pid);
  if (running) await terminateProcess(record.pid, timeoutMs);
  await removeBackgroundWorkerRecord(dataDir, record.pid);
  return running;
}
