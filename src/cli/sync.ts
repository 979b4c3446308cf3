import type { Command } from 'commander';
import { z } from 'zod';
import { loadConfig, requireCrm, type Config } from '../config.js';
import { crmClientFromConfig } from '../crm/index.js';
import { retryOutsideTemporal } from '../crm/retry-outside-temporal.js';
import { ConfigError } from '../errors.js';
import { createLogger, type Logger } from '../logger.js';
import { runSync, type JoinEvent } from '../sync/run-sync.js';
import { resolveStreams } from '../sync/streams.js';
import { withTemporal } from '../temporal/connect.js';
import { taskQueues } from '../temporal/task-queues.js';
import { lingers, withInProcessWorkers } from '../worker/with-in-process-workers.js';
import { syncWorkflowId } from '../../workflows/sync-ids.js';
import { DEFAULT_TUNING, type FreshSummary, type SyncResult, type SyncTuning } from '../../workflows/sync-types.js';
import { createProgressRenderer } from './progress.js';
import { runWatched } from './watch-workers.js';

const positiveInt = (flag: string) =>
  z.coerce
    .number({ error: `${flag} must be a positive whole number` })
    .int(`${flag} must be a whole number`)
    .positive(`${flag} must be positive`);

export const SyncOptions = z
  .object({
    stream: z.array(z.string()).default([]),
    full: z.boolean().default(false),
    reconcile: z.boolean().optional(),
    perPage: positiveInt('--per-page').max(1000, '--per-page must be at most 1000').optional(),
    parallelism: positiveInt('--parallelism').max(32, '--parallelism must be at most 32').optional(),
    sweepRuns: positiveInt('--sweep-runs').max(100_000, '--sweep-runs must be at most 100000').optional(),
  })
  .refine((o) => !(o.full && o.reconcile === false), { message: '`--full` already re-reads everything; drop `--no-reconcile`.' });
export type SyncOptions = z.infer<typeof SyncOptions>;

export function parseSyncOptions(raw: unknown): SyncOptions {
  const parsed = SyncOptions.safeParse(raw);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => i.message).join('; '));
  return parsed.data;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function registerSyncCommand(program: Command): void {
  program
    .command('sync')
    .description('Run one sync: a backfill the first time, incremental after (embedded Temporal and worker when TEMPORAL_ADDRESS is unset)')
    .option('--stream <name>', 'sync only this stream (repeatable)', collect, [])
    .option('--full', 're-read every stream from the start')
    .option('--reconcile', 'run the contacts reconciliation sweep now')
    .option('--no-reconcile', 'skip the contacts reconciliation sweep even when due')
    // Defaults shown, not set: an option left out stays out of the workflow's input, which then
    // takes DEFAULT_TUNING (the same values) on the worker.
    .option('--per-page <n>', `contacts per page request (default: ${DEFAULT_TUNING.perPage})`)
    .option('--sweep-runs <n>', `rolling sweep: re-read every contact within this many incremental runs (default: ${DEFAULT_TUNING.sweepRuns})`)
    .option('--parallelism <n>', `page ranges fetched at once (default: ${DEFAULT_TUNING.parallelism})`)
    .action(async (raw: unknown) => {
      const config = loadConfig();
      const result = await syncCommand(config, parseSyncOptions(raw), createLogger(config.logLevel, { cmd: 'sync' }));
      printSummary(result, process.stdout);
    });
}

/** `crmsync sync`: checks the CRM first (errors name the fix), then runs the workflow with live progress. */
export async function syncCommand(config: Config, opts: SyncOptions, logger: Logger, out: NodeJS.WriteStream = process.stdout): Promise<SyncResult> {
  requireCrm(config);
  const streams = resolveStreams(opts.stream);
  const crm = crmClientFromConfig(config);
  // Ctrl-C cancels the workflow cleanly (its runs are recorded as cancelled) instead of leaving it running.
  const interrupt = new AbortController();
  const onSigint = (): void => {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigint);
    process.stderr.write('crmsync: cancelling the sync (Ctrl-C again to quit at once)\n');
    interrupt.abort();
    process.once('SIGINT', () => process.exit(130));
    process.once('SIGTERM', () => process.exit(143));
  };
  process.once('SIGINT', onSigint);
  process.once('SIGTERM', onSigint);
  try {
    // Outside Temporal: a deadlock or 429 on this one request must not fail the whole command.
    await retryOutsideTemporal(() => crm.verifyCredentials());
    const tuning: Partial<SyncTuning> = {};
    if (opts.perPage) tuning.perPage = opts.perPage;
    if (opts.parallelism) tuning.parallelism = opts.parallelism;
    if (opts.sweepRuns) tuning.sweepRuns = opts.sweepRuns;
    const renderer = createProgressRenderer(out);
    const embedded = !config.temporal.address;
    // Workers in this process (CRMSYNC_EMBEDDED_IDLE=0) need the worker package; a client does not.
    const inProcess = embedded && !lingers(config);
    if (inProcess) (await import('../sync/quiet-temporal-runtime.js')).quietTemporalRuntime(config.logLevel, logger);
    return await withTemporal(
      config,
      async (t) => {
        const run = () =>
          runSync({
            client: t.client,
            taskQueues: taskQueues(config),
            input: { streams, full: opts.full, reconcile: opts.reconcile === undefined ? 'auto' : opts.reconcile ? 'always' : 'never', tuning },
            onProgress: (p) => renderer.update(p),
            onJoin: (e) => out.write(`${describeJoin(e)}\n`),
            signal: interrupt.signal,
          });
        if (!embedded) {
          const queues = taskQueues(config);
          const write = (l: string): boolean => process.stderr.write(l);
          return await runWatched(t, { queues, address: t.address, what: 'sync', workflowId: syncWorkflowId(queues.main), signal: interrupt.signal, write }, run);
        }
        return await withInProcessWorkers({ config, logger, client: t.client, nativeConnection: t.nativeConnection, namespace: t.namespace }, run);
      },
      { worker: inProcess },
    );
  } finally {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigint);
    await crm.close();
  }
}

/** The freshness checks of an incremental contacts run, one line each: which ran and what each found. */
export function describeFresh(f: FreshSummary): string[] {
  const up = f.updatedFirst;
  const m = f.memberships;
  return [
    up
      ? `updated-first scan: ${up.rows} recently updated read, ${up.updated} changed (${up.requests} requests)${up.orderBroken ? '; rows came out of updated_at order, so the next run sweeps' : ''}`
      : 'updated-first scan: not run (the CRM does not order contacts by updated_at)',
    `membership repair: ${m.checked} tags and lists compared, ${m.differing.length} differed${m.sweepInstead ? ' (too many members to re-read)' : ''}${m.differing.length ? ` (${m.differing.slice(0, 5).join(', ')}${m.differing.length > 5 ? ', …' : ''}), ${m.rows} members re-read, ${m.updated} changed, ${m.deleted} deleted` : ''} (${m.requests} requests)`,
    f.slice
      ? `rolling sweep: ids ${f.slice.fromId}–${f.slice.toId}, ${f.slice.rows} re-read, ${f.slice.updated} changed (${f.slice.requests} requests)${f.slice.cycleDone ? '; every contact re-read this cycle' : ''}`
      : 'rolling sweep: not run (more members to re-read than contacts held: the run swept every contact instead)',
  ];
}

/** What a manual sync tells a person when it joins work already in progress. */
export function describeJoin(e: JoinEvent): string {
  if (e.kind === 'run') {
    const which = e.streams.length > 0 ? `streams ${e.streams.join(', ')}` : 'its streams unknown';
    return `a sync is already running (${e.workflowId}, ${which}): following it to the end, then syncing the rest`;
  }
  return e.streams.map((s) => `${s.stream}: already being synced by ${s.startedBy ?? 'another run'}; joining it and using its result`).join('\n');
}

export function printSummary(result: SyncResult, out: NodeJS.WritableStream): void {
  out.write(`sync ${result.runId} finished\n`);
  for (const s of result.streams) {
    // A stream the CRM lacks is a warning: the run still succeeded (exit 0).
    if (s.skipped) {
      out.write(`  ${s.stream.padEnd(18)} warning: ${s.skipped}\n`);
      continue;
    }
    const joined = result.joined?.includes(s.stream) ? '  (joined the run in progress)' : '';
    out.write(
      `  ${s.stream.padEnd(18)} ${s.mode.padEnd(11)} rows ${s.rows}  inserted ${s.inserted}  updated ${s.updated}  deleted ${s.deleted}  requests ${s.requests}${s.drift ? `  (CRM changed during the run; ${s.reconcileNext ? 'the next run reconciles' : 'this run caught up with it'})` : ''}${joined}\n`,
    );
    if (s.rejected) out.write(`  ${''.padEnd(18)} ${s.rejected} row(s) did not fit the contact schema and were not loaded; the table _contact_rejects in the warehouse file names each and why\n`);
    if (s.fresh) for (const line of describeFresh(s.fresh)) out.write(`  ${''.padEnd(18)} ${line}\n`);
  }
}
