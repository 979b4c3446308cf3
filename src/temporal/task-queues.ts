import type { Config } from '../config.js';

export interface TaskQueues {
  /** Workflows and CRM-facing activities. */
  main: string;
  /** Warehouse activities only, served by one worker: DuckDB allows one writer per file. */
  warehouse: string;
}

export function taskQueues(config: Pick<Config, 'temporal'>): TaskQueues {
  const main = config.temporal.taskQueue;
  return { main, warehouse: `${main}-warehouse` };
}

/** The defaults (CRMSYNC_TASK_QUEUE unset). */
export const TASK_QUEUES: TaskQueues = Object.freeze({ main: 'crmsync', warehouse: 'crmsync-warehouse' });
