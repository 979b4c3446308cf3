import type { Client } from '@temporalio/client';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { isProcessAlive } from '../process-alive.js';
import { taskQueues } from '../temporal/task-queues.js';
import { warehouseWorkerPolls } from '../temporal/warehouse-worker-polls.js';
import { readBackgroundWorkerRecord } from './background-worker-file.js';
import { ensureBackgroundWorker } from './ensure-background-worker.js';

/** How often a command looks whether the background worker serving it still runs. */
const WATCH_MS = 1_000;

/**
 * Runs `fn` as a client of the background worker (ensureBackgroundWorker). Its runs have no
 * worker in this process: should the background worker die meanwhile (killed, out of memory),
 * another is started and serves them, rather than leave the command waiting for ever; one that
 * cannot start fails `fn` with the cause from its log.
 */
export async function withBackgroundWorker<T>(options: { config: Config; logger: Logger; client: Client }, fn: () => Promise<T>): Promise<T> {
  const { config, logger, client } = options;
  await ensureBackgroundWorker(options);
  let done = false;
  const watch = (async (): Promise<never> => {
    for (;;) {
      // Unreferenced: the watch never keeps the command from exiting once `fn` settled.
      await new Promise((r) => setTimeout(r, WATCH_MS).unref());
      if (done) return await new Promise<never>(() => undefined);
      const record = await readBackgroundWorkerRecord(config.dataDir);
      if (record && isProcessAlive(record.pid)) continue;
      // No background worker: a user's own `crmsync worker` may serve (it polls), or none does.
      if (await warehouseWorkerPolls(client, taskQueues(config).warehouse).catch(() => true)) continue;
      if (done) continue;
      logger.warn({ pid: record?.pid }, 'the background worker stopped during the run; starting another');
      await ensureBackgroundWorker(options);
    }
  })();
  watch.catch(() => undefined); // seen through the race
  try {
    return await Promise.race([fn(), watch]);
  } finally {
    done = true;
  }
}
