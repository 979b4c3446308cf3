import type { NativeConnection, WorkflowBundleOption } from '@temporalio/worker';
import { createActivities } from '../../activities/index.js';
import type { Config } from '../config.js';
import { crmClientFromConfig } from '../crm/index.js';
import type { Logger } from '../logger.js';
import { taskQueues } from '../temporal/task-queues.js';
import { runWorkers } from '../temporal/worker.js';
import type { WarehouseOwner } from '../warehouse/index.js';
import type { ActivityTracker } from './activity-tracker.js';
import { openOwnerFromConfig } from './open-owner-from-config.js';

/** Warehouse-queue activities at once: parallel page ranges of contacts plus the small streams. */
export const DEFAULT_WAREHOUSE_CONCURRENCY = 12;

export interface RunComposedWorkersOptions {
  config: Config;
  logger: Logger;
  nativeConnection: NativeConnection;
  namespace: string;
  /** Aborting drains the workers, then the owner checkpoints and closes the file. */
  signal: AbortSignal;
  /**
   * Warehouse-queue activities running at once. They overlap their CRM fetches; their DuckDB
   * writes run one after another on the owner, so this stays one writer however high it is.
   */
  warehouseConcurrency?: number;
  workflowBundle?: WorkflowBundleOption;
  /**
   * The file's owner when the caller opened it already, or is opening it (it is closed here all
   * the same; a rejected promise fails the workers before any polls).
   */
  owner?: WarehouseOwner | Promise<WarehouseOwner>;
  /** Sees every activity run (a background worker stops once idle). */
  tracker?: Pick<ActivityTracker, 'wrap'>;
}

/**
 * The composition root: the DuckDB file's owner (opened and migrated once, held until the
 * workers stop), the CRM client, every activity over them, and the workers on both task queues.
 * A file another process owns fails here, before any worker polls.
 */
export async function runComposedWorkers(options: RunComposedWorkersOptions): Promise<void> {
  const { config, logger } = options;
  const opening = Promise.resolve(options.owner ?? openOwnerFromConfig(config, logger));
  const crm = crmClientFromConfig(config, { logger });
  const warehouseActivities = opening.then((owner) => {
    const activities = createActivities({ config, logger, crm, owner });
    if (Object.keys(activities.main).length > 0) throw new Error('main-queue activities need their worker created after the warehouse file opens; pass them to runWorkers');
    return options.tracker ? options.tracker.wrap(activities.warehouse) : activities.warehouse;
  });
  warehouseActivities.catch(() => undefined); // runWorkers reports it; unread when aborted before it starts
  // A lake never published (a new install) is published now, empty: analysts can connect to its
  // catalog before the first sync ends, and that sync's last publish writes only what it changed
  // (on a fresh lake it wrote every table: bench/results/notes.md, "the first publish").
  opening.then(
    (owner) => owner.run((w) => w.publishLake(undefined, { onlyIfNew: true })).catch((err: unknown) => logger.warn({ err }, 'publishing the new lake at start failed; the first sync publishes it')),
    () => undefined, // runWorkers reports a file that did not open
  );
  try {
    await runWorkers({
      nativeConnection: options.nativeConnection,
      namespace: options.namespace,
      taskQueues: taskQueues(config),
      // The main queue has workflows and no activity that needs the file: its worker is created
      // while the file opens and migrates.
      activities: {},
      warehouseActivities,
      warehouseConcurrency: options.warehouseConcurrency ?? DEFAULT_WAREHOUSE_CONCURRENCY,
      ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : {}),
      signal: options.signal,
      logger,
    });
  } finally {
    await crm.close();
    // Closed once every job queued on it has run; a file that did not open has nothing to close.
    await opening.then(
      (owner) => owner.close(),
      () => undefined,
    );
  }
}
