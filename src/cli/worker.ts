import { statSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { z } from 'zod';
import { loadConfig, requireCrm, type Config } from '../config.js';
import { ConfigError } from '../errors.js';
import { createJsonLogger, createLogger, type Logger } from '../logger.js';
import { quietTemporalRuntime } from '../sync/quiet-temporal-runtime.js';
import { withTemporal } from '../temporal/connect.js';
import { taskQueues } from '../temporal/task-queues.js';
import { createActivityTracker } from '../worker/activity-tracker.js';
import { backgroundWorkerLog, removeBackgroundWorkerRecord } from '../worker/background-worker-file.js';
import { DEFAULT_WAREHOUSE_CONCURRENCY, runComposedWorkers } from '../worker/compose.js';
import { limitHeapGrowth } from '../worker/limit-heap-growth.js';
import { sizeBoundedLog } from '../worker/size-bounded-log.js';
import { watchLinger } from '../worker/watch-linger.js';

export const WorkerOptions = z.object({
  warehouseConcurrency: z.coerce
    .number({ error: '--warehouse-concurrency must be a number' })
    .int()
    .min(1, '--warehouse-concurrency must be at least 1')
    .max(64, '--warehouse-concurrency must be at most 64')
    .default(DEFAULT_WAREHOUSE_CONCURRENCY),
  /** A prebuilt workflow bundle (tests and containers skip bundling at start). */
  workflowBundle: z.string().optional(),
  /**
   * Started by a command on the embedded default (ensureBackgroundWorker): logs to
   * `<data dir>/worker.log` only, and stops after CRMSYNC_EMBEDDED_IDLE without activity.
   */
  background: z.boolean().default(false),
});
export type WorkerOptions = z.infer<typeof WorkerOptions>;

export function registerWorkerCommand(program: Command): void {
  program
    .command('worker')
    .description('Run the Temporal workers (workflows, and the one warehouse writer) until SIGINT or SIGTERM')
    .option('--warehouse-concurrency <n>', 'warehouse-queue activities at once (writes stay serialized)')
    .addOption(new Option('--workflow-bundle <path>', 'prebuilt workflow bundle').hideHelp())
    .addOption(new Option('--background', 'started by a command: log to the data directory, stop when idle').hideHelp())
    .addHelpText(
      'after',
      "\nIt runs with MALLOC_ARENA_MAX=2 and node's --max-semi-space-size=4 (less memory), starting itself once more\n" +
        'to get them unless they are set already; yours win, and CRMSYNC_WORKER_LAUNCH_DEFAULTS=0 turns them off.',
    )
    .action(async (raw: unknown) => {
      const parsed = WorkerOptions.safeParse(raw);
      if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => i.message).join('; '));
      const config = loadConfig();
      const logger = parsed.data.background
        ? createJsonLogger(config.logLevel, { cmd: 'worker', background: true }, sizeBoundedLog(backgroundWorkerLog(config.dataDir)))
        : createLogger(config.logLevel, { cmd: 'worker' });
      await workerCommand(config, parsed.data, logger);
    });
}

/** Largest `--workflow-bundle` the worker loads (the bundle of workflows/ is about 2 MB). */
export const MAX_WORKFLOW_BUNDLE_BYTES = 64 * 1024 * 1024;

/** Serves both task queues until a signal; this process owns the DuckDB file meanwhile. */
export async function workerCommand(config: Config, opts: WorkerOptions, logger: Logger): Promise<void> {
  if (opts.workflowBundle) checkWorkflowBundle(opts.workflowBundle);
  requireCrm(config);
  quietTemporalRuntime(config.logLevel, logger);
  limitHeapGrowth(config.workerHeapGrowthPercent);
  const abort = new AbortController();
  const stop = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, 'draining workers');
    abort.abort();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const idleMs = config.temporal.embeddedIdleMs ?? 0;
  const tracker = opts.background ? createActivityTracker() : undefined;
  const unwatch = tracker
    ? watchLinger({
        dataDir: config.dataDir,
        idleMs: idleMs > 0 ? idleMs : Number.POSITIVE_INFINITY,
        tracker,
        stop: (reason) => {
          logger.info({ reason }, 'background worker stopping');
          abort.abort();
        },
      })
    : undefined;
  try {
    await withTemporal(
      config,
      async (t) => {
        if (!t.nativeConnection) throw new Error('worker connection missing');
        const queues = taskQueues(config);
        logger.info({ address: t.address, namespace: t.namespace, queues }, 'worker started');
        // A worker that joined another command's embedded server must not outlive it silently.
        const onLost = (): void => {
          logger.error({ address: t.address }, 'the embedded Temporal this worker joined has stopped');
          abort.abort();
        };
        t.serverLost.addEventListener('abort', onLost, { once: true });
        await runComposedWorkers({
          config,
          logger,
          nativeConnection: t.nativeConnection,
          namespace: t.namespace,
          warehouseConcurrency: opts.warehouseConcurrency,
          ...(opts.workflowBundle ? { workflowBundle: { codePath: opts.workflowBundle } } : {}),
          signal: abort.signal,
          ...(tracker ? { tracker } : {}),
        });
        if (t.serverLost.aborted) throw t.serverLost.reason;
      },
      { worker: true },
    );
  } catch (err) {
    if (opts.background) logger.error({ err }, 'background worker failed');
    throw err;
  } finally {
    unwatch?.();
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    if (opts.background) await removeBackgroundWorkerRecord(config.dataDir, process.pid).catch(() => undefined);
  }
}

/** The bundle a worker would load whole: a file, and not larger than MAX_WORKFLOW_BUNDLE_BYTES. */
function checkWorkflowBundle(path: string): void {
  const st = (() => {
    try {
      return statSync(path);
    } catch {
      return undefined;
    }
  })();
  if (!st?.isFile()) throw new ConfigError(`--workflow-bundle ${path} is not a file; pass a workflow bundle (bundleWorkflows writes one), or leave the option out to bundle workflows/ at start.`);
  if (st.size > MAX_WORKFLOW_BUNDLE_BYTES) {
    throw new ConfigError(
      `--workflow-bundle ${path} is ${st.size} bytes, more than the ${MAX_WORKFLOW_BUNDLE_BYTES} a workflow bundle may have; pass the bundle of workflows/, or leave the option out.`,
    );
  }
}
