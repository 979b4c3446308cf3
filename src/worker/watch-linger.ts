import { stat } from 'node:fs/promises';
import type { ActivityTracker } from './activity-tracker.js';
import { readBackgroundWorkerRecord } from './background-worker-file.js';

export interface WatchLingerOptions {
  dataDir: string;
  idleMs: number;
  tracker: Pick<ActivityTracker, 'idleForMs'>;
  /** Called once with why the background worker should stop. */
  stop: (reason: string) => void;
  pid?: number;
  /** How often to look (tests pass a short one). */
  everyMs?: number;
}

/**
 * What ends a background worker besides a signal: no activity for its idle period, its data
 * directory deleted, or its record naming another process (a newer worker replaced it, or
 * stopEmbeddedServer removed it). The embedded server going away is seen by withTemporal.
 */
export function watchLinger(options: WatchLingerOptions): () => void {
  const pid = options.pid ?? process.pid;
  let stopped = false;
  const check = async (): Promise<string | undefined> => {
    if (
      !(await stat(options.dataDir).then(
        () => true,
        () => false,
      ))
    )
      return `its data directory ${options.dataDir} was deleted`;
    const record = await readBackgroundWorkerRecord(options.dataDir);
    if (record?.pid !== pid) return 'its record names another worker (or was removed)';
    if (options.tracker.idleForMs() >= options.idleMs) return `no activity for ${Math.round(options.idleMs / 1000)}s`;
    return undefined;
  };
  const timer = setInterval(
    () => {
      check().then(
        (reason) => {
          if (!reason || stopped) return;
          stopped = true;
          clearInterval(timer);
          options.stop(reason);
        },
        () => undefined, // a failed look is retried on the next tick
      );
    },
    options.everyMs ?? Math.min(5_000, Math.max(250, options.idleMs / 4)),
  );
  timer.unref();
  return () => clearInterval(timer);
}
