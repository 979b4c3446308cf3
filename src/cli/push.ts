import { createHash } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { WorkflowHandle } from '@temporalio/client';
import type { Command } from 'commander';
import { z } from 'zod';
import { loadConfig, requireCrm, type Config } from '../config.js';
import { crmClientFromConfig } from '../crm/index.js';
import { ConfigError, CrmsyncError } from '../errors.js';
import { createLogger, type Logger } from '../logger.js';
import { formatDryRun, formatProgress, formatPushResult } from '../push/format-push.js';
import { planPush } from '../push/plan-push.js';
import { pushFailureToError } from '../push/push-failure.js';
import { pushCrmFromClient } from '../push/push-crm-from-client.js';
import { absoluteFileSource, MAX_SOURCE_TEXT, parseSourceSpec } from '../push/source-spec.js';
import { quietTemporalRuntime } from '../sync/quiet-temporal-runtime.js';
import { withTemporal } from '../temporal/connect.js';
import { taskQueues } from '../temporal/task-queues.js';
import { lingers, withInProcessWorkers } from '../worker/with-in-process-workers.js';
import { WarehouseLockedError, WarehouseOwnedError } from '../warehouse/errors.js';
import { withWarehouse } from '../warehouse/index.js';
import type { PushProgress, PushWorkflowInput, PushWorkflowResult } from '../../workflows/push-types.js';
import { runWatched } from './watch-workers.js';

export const PushOptions = z.object({
  from: z.string({ error: '--from is required: a table or view name, or a SELECT query' }).min(1).max(MAX_SOURCE_TEXT),
  ledgerName: z.string().optional(),
  dryRun: z.boolean().default(false),
  createMissingTags: z.boolean().default(false),
  batchSize: z.coerce.number({ error: '--batch-size must be a number' }).int().min(1, '--batch-size must be at least 1').max(10_000, '--batch-size must be at most 10000').default(2000),
  batchSeconds: z.coerce.number({ error: '--batch-seconds must be a number' }).min(1, '--batch-seconds must be at least 1').max(600, '--batch-seconds must be at most 600').default(10),
  sample: z.coerce.number({ error: '--sample must be a number' }).int().min(0).max(100).default(5),
});
export type PushOptions = z.infer<typeof PushOptions>;

export function parsePushOptions(raw: unknown): PushOptions {
  const parsed = PushOptions.safeParse(raw);
  if (!parsed.success) throw new ConfigError(`push: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
  // Fails early, with the fix, on a source that can never be read.
  parseSourceSpec(parsed.data.from, parsed.data.ledgerName);
  return { ...parsed.data, from: absoluteFileSource(parsed.data.from) };
}

export function registerPushCommand(program: Command): void {
  program
    .command('push')
    .description('Upsert rows defined in the warehouse into the CRM (a Temporal workflow; embedded when TEMPORAL_ADDRESS is unset)')
    .requiredOption('--from <table-or-query>', 'a table or view name, a .csv, .parquet or .json file, or a SELECT query, with email and status columns')
    .option('--ledger-name <name>', 'name of this source in the ledger (keeps it when a --from query is edited)')
    .option('--dry-run', 'check the rows and print counts by action and a sample; send nothing')
    .option('--create-missing-tags', 'create tags and lists named in the source that do not exist yet')
    .option('--batch-size <n>', 'most rows per batch activity', '2000')
    .option('--batch-seconds <s>', 'a batch starts no row after this long (it holds the warehouse write lock)', '10')
    .option('--sample <n>', 'rows shown by --dry-run', '5')
    .action(async (raw: unknown) => {
      const opts = parsePushOptions(raw);
      const config = loadConfig();
      const logger = createLogger(config.logLevel, { cmd: 'push' });
      if (opts.dryRun) {
        const plan = await dryRunCommand(config, opts);
        process.stdout.write(formatDryRun(plan));
        // Invalid rows would be rejected by the real push: a dry run that finds some is not clean.
        if (plan.counts.invalid > 0) {
          process.stderr.write(`crmsync: ${plan.counts.invalid} row(s) are invalid (listed above); fix them before pushing.\n`);
          process.exitCode = 1;
        }
        return;
      }
      const result = await pushCommand(config, opts, logger);
      process.stdout.write(formatPushResult(result));
      // Rows that failed or were rejected by validation need attention: say so in the exit code.
      if (result.failed > 0 || result.counts.invalid > 0) process.exitCode = 1;
    });
}

/** Reads and checks the source and compares it with the ledger; creates nothing, writes nothing. */
export async function dryRunCommand(config: Config, opts: PushOptions) {
  requireCrm(config);
  const client = crmClientFromConfig(config);
  try {
    // A write scope: it runs pending migrations, so the ledger exists even before the first push.
    const plan = () =>
      withWarehouse({ dbPath: config.dbPath, lakePath: config.lakePath, write: true, siteTimeZone: config.crm.timezone }, (w) =>
        planPush(
          { crm: pushCrmFromClient(client), db: w },
          { from: opts.from, ledgerName: opts.ledgerName, runId: 'dry-run', createMissing: opts.createMissingTags, dryRun: true, sampleSize: opts.sample },
        ),
      );
    try {
      return await plan();
    } catch (err) {
      // The background worker a sync left behind holds the file while it lingers: it is stopped
      // (it drains first), and the next command that needs one starts it again.
      if (!(err instanceof WarehouseOwnedError || err instanceof WarehouseLockedError)) throw err;
      const { stopBackgroundWorker } = await import('../worker/stop-background-worker.js');
      if (!(await stopBackgroundWorker(config.dataDir))) throw err;
      return await plan();
    }
  } finally {
    await client.close();
  }
}

/** Runs pushWorkflow and waits for it; with an embedded Temporal this process is the worker. */
export async function pushCommand(config: Config, opts: PushOptions, logger: Logger, progressOut: NodeJS.WritableStream | undefined = process.stderr): Promise<PushWorkflowResult> {
  requireCrm(config);
  const input: PushWorkflowInput = { from: opts.from, ledgerName: opts.ledgerName, createMissing: opts.createMissingTags, batchSize: opts.batchSize, batchSeconds: opts.batchSeconds };
  const workflowId = pushWorkflowId(parseSourceSpec(opts.from, opts.ledgerName).sourceId);
  quietTemporalRuntime(config.logLevel, logger);
  const interrupt = new AbortController();
  const onSignal = (): void => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.stderr.write('crmsync: cancelling the push; rows already pushed stay in the ledger (Ctrl-C again to quit at once)\n');
    interrupt.abort();
    process.once('SIGINT', () => process.exit(130));
    process.once('SIGTERM', () => process.exit(143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    // The push's last activity publishes the ledger to the lake, where readers see push_dead_letters.
    return await runPushWorkflow(config, input, workflowId, logger, progressOut, interrupt.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** One push per source at a time: the id is derived from the ledger's source id. */
export function pushWorkflowId(sourceId: string): string {
  const safe = sourceId.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 80);
  return `crmsync-push-${safe}-${createHash('sha256').update(sourceId).digest('hex').slice(0, 8)}`;
}

async function runPushWorkflow(
  config: Config,
  input: PushWorkflowInput,
  workflowId: string,
  logger: Logger,
  progressOut: NodeJS.WritableStream | undefined,
  signal: AbortSignal,
): Promise<PushWorkflowResult> {
  const embedded = !config.temporal.address;
  return await withTemporal(
    config,
    async (t) => {
      const start = () => t.client.workflow.start('pushWorkflow', { taskQueue: taskQueues(config).main, workflowId, args: [input] });
      const run = async (): Promise<PushWorkflowResult> => {
        let handle: WorkflowHandle;
        try {
          handle = await start();
        } catch (err) {
          if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
          // An earlier push of this source (its command killed, or still running elsewhere) is
          // followed to its end, this process serving it as a worker when Temporal is embedded;
          // then this push plans again and sends what that one did not.
          progressOut?.write(`crmsync: a push of this source is already running (workflow ${workflowId}): following it to the end first, then pushing what it did not\n`);
          await followRunning(t.client.workflow.getHandle(workflowId), signal, progressOut);
          handle = await start().catch((again: unknown) => {
            if (!(again instanceof WorkflowExecutionAlreadyStartedError)) throw again;
            throw new CrmsyncError(
              'PUSH_ALREADY_RUNNING',
              `Another push of this source started meanwhile (workflow ${workflowId}); run this one again once it ends, or stop it with \`temporal workflow cancel --workflow-id ${workflowId}\`.`,
            );
          });
        }
        const cancel = (): void => void handle.cancel().catch(() => undefined);
        signal.addEventListener('abort', cancel, { once: true });
        const stop = reportProgress(() => handle.query<PushProgress>('pushProgress'), progressOut);
        try {
          return (await handle.result()) as PushWorkflowResult;
        } catch (err) {
          throw pushFailureToError(err);
        } finally {
          stop();
          signal.removeEventListener('abort', cancel);
        }
      };
      if (!embedded) {
        const write = (l: string): boolean => process.stderr.write(l);
        return await runWatched(t, { queues: taskQueues(config), address: t.address, what: 'push', workflowId, signal, write }, run);
      }
      return await withInProcessWorkers({ config, logger, client: t.client, nativeConnection: t.nativeConnection, namespace: t.namespace }, run);
    },
    { worker: embedded && !lingers(config) },
  );
}

/** A progress line on stderr every few seconds while the workflow runs (counts only). */
/**
 * Waits for another command's push of the same source, with its progress; its outcome is its own
 * (a failure there leaves its rows to this push). Ctrl-C stops the waiting, not that push.
 */
async function followRunning(handle: WorkflowHandle, signal: AbortSignal, progressOut: NodeJS.WritableStream | undefined): Promise<void> {
  const stop = reportProgress(() => handle.query<PushProgress>('pushProgress'), progressOut);
  let onAbort = (): void => undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new CrmsyncError('PUSH_CANCELLED', 'Stopped waiting for the running push of this source; it goes on, and the next push of this source sends what it does not.'));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([handle.result().catch(() => undefined), aborted]);
  } finally {
    stop();
    signal.removeEventListener('abort', onAbort);
  }
}

function reportProgress(query: () => Promise<PushProgress>, out: NodeJS.WritableStream | undefined): () => void {
  if (!out) return () => undefined;
  const started = Date.now();
  const timer = setInterval(() => {
    query().then(
      (p) => out.write(`${formatProgress(p, Date.now() - started)}\n`),
      () => undefined, // a query can fail while a worker restarts; the next one will answer
    );
  }, 5_000);
  timer.unref();
  return () => clearInterval(timer);
}
