import { ScheduleNotFoundError, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { loadConfig, type Config } from '../config.js';
import { crmClientFromConfig } from '../crm/index.js';
import { retryOutsideTemporal } from '../crm/retry-outside-temporal.js';
import { ConfigError, CrmsyncError } from '../errors.js';
import { formatDuration, parseDuration } from '../sync/parse-duration.js';
import { resolveStreams } from '../sync/streams.js';
import type { StreamName } from '../../workflows/streams.js';
import { withTemporal } from '../temporal/connect.js';
import { taskQueues } from '../temporal/task-queues.js';
import type { syncWorkflow } from '../../workflows/sync-workflow.js';
import type { SyncWorkflowInput } from '../../workflows/sync-types.js';

export const DEFAULT_SCHEDULE_ID = 'crmsync-sync-schedule';

export class ScheduleMissingError extends CrmsyncError {
  constructor(id: string) {
    super('SCHEDULE_NOT_FOUND', `No schedule "${id}"; list them with \`crmsync schedule list\` or create one with \`crmsync schedule create --every 15m\`.`);
  }
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Longest interval a schedule takes: a year and a day. */
const MAX_EVERY_MS = 366 * 86_400_000;

/** A duration option of `schedule create`, at most a year. */
function interval(value: string, flag: string): number {
  const ms = parseDuration(value, flag);
  if (ms > MAX_EVERY_MS) throw new ConfigError(`${flag} "${value}" is longer than a year; use at most 366d.`);
  return ms;
}

/** A schedule id as Temporal keeps it: not empty, one line, at most 200 characters. */
function scheduleId(id: string): string {
  const trimmed = id.trim();
  if (trimmed.length === 0 || trimmed.length > 200 || [...trimmed].some((ch) => ch.charCodeAt(0) < 32 || ch === '\u007f')) {
    throw new ConfigError(`--id "${id.slice(0, 40)}" is not a schedule id; use 1 to 200 characters on one line, for example --id nightly (default ${DEFAULT_SCHEDULE_ID}).`);
  }
  return trimmed;
}

async function checkCrmConnection(config: Config): Promise<void> {
  if (!config.crm.baseUrl && !config.crm.username && !config.crm.password) {
    throw new ConfigError(
      "The CRM connection is not configured, so the schedule's runs would fail: set CRM_BASE_URL, CRM_USERNAME and CRM_PASSWORD (in the environment or a .env file), or pass --no-check-crm when the worker that runs the schedule has them and this machine does not.",
    );
  }
  const crm = crmClientFromConfig(config);
  try {
    await retryOutsideTemporal(() => crm.verifyCredentials());
  } finally {
    await crm.close();
  }
}

export function registerScheduleCommand(program: Command): void {
  const schedule = program.command('schedule').description('Scheduled incremental syncs as Temporal Schedules (overlapping runs are skipped)');
  schedule
    .command('create')
    .description('create (or replace) the sync schedule')
    .requiredOption('--every <duration>', 'interval between incremental syncs, e.g. 15m')
    .option('--reconcile-every <duration>', 'contacts reconciliation sweep cadence', '24h')
    .option('--stream <name>', 'only this stream (repeatable)', collect, [])
    .option('--id <id>', 'schedule id', DEFAULT_SCHEDULE_ID)
    .option('--no-check-crm', 'create without checking the CRM connection here (the worker that runs the schedule uses its own)')
    .action(async (raw: { every: string; reconcileEvery: string; stream: string[]; id: string; checkCrm: boolean }) => {
      const id = scheduleId(raw.id);
      const everyMs = interval(raw.every, '--every');
      const reconcileEveryMs = interval(raw.reconcileEvery, '--reconcile-every');
      const streams = resolveStreams(raw.stream);
      const config = loadConfig();
      // A schedule whose every run fails (no CRM set, a wrong URL or password) is refused now,
      // not found out from its runs' records later.
      if (raw.checkCrm) await checkCrmConnection(config);
      await withScheduleClient(config, async (client) => {
        await createSchedule(client, config, { id, everyMs, every: raw.every.trim(), reconcileEveryMs, streams });
        process.stdout.write(`schedule ${id}: sync every ${raw.every}, contacts reconciliation every ${raw.reconcileEvery}\n`);
        if (!config.temporal.address) {
          process.stdout.write('note: TEMPORAL_ADDRESS is unset, so the schedule lives in the embedded server and fires only while `crmsync worker` runs.\n');
        }
      });
    });
  schedule
    .command('list')
    .description('list crmsync schedules')
    .action(async () => {
      const config = loadConfig();
      // No embedded state yet: nothing is scheduled, and looking must not create ./data or start a server.
      if (!hasScheduleState(config)) {
        process.stdout.write('no schedules\n');
        return;
      }
      await withScheduleClient(config, async (client) => {
        const rows = await listSchedules(client);
        if (rows.length === 0) process.stdout.write('no schedules\n');
        for (const r of rows) process.stdout.write(`${r.id}  ${r.paused ? 'paused' : 'active'}  every ${r.every}  last ${r.last ?? '-'}  next ${r.next ?? '-'}\n`);
      });
    });
  for (const [name, verb] of [
    ['pause', 'pause'],
    ['resume', 'resume'],
    ['delete', 'delete'],
  ] as const) {
    schedule
      .command(name)
      .description(`${verb} a schedule`)
      .option('--id <id>', 'schedule id', DEFAULT_SCHEDULE_ID)
      .action(async (raw: { id: string }) => {
        const id = scheduleId(raw.id);
        const config = loadConfig();
        if (!hasScheduleState(config)) throw new ScheduleMissingError(id);
        await withScheduleClient(config, async (client) => {
          await changeSchedule(client, id, verb);
          process.stdout.write(`schedule ${id}: ${verb === 'delete' ? 'deleted' : verb === 'pause' ? 'paused' : 'resumed'}\n`);
        });
      });
  }
}

/** False when schedules would live in an embedded server that has never run on this data directory. */
function hasScheduleState(config: Config): boolean {
  return Boolean(config.temporal.address) || existsSync(join(config.dataDir, 'temporal.sqlite'));
}

async function withScheduleClient<T>(config: Config, fn: (client: Client) => Promise<T>): Promise<T> {
  return await withTemporal(config, (t) => fn(t.client));
}

/** Runs started by the schedule get ids `<schedule id>-run-<time>`; their streams share the manual runs' ids. */
export async function createSchedule(
  client: Client,
  config: Pick<Config, 'temporal'>,
  opts: { id: string; everyMs: number; every?: string; reconcileEveryMs: number; streams: StreamName[] },
): Promise<void> {
  const queues = taskQueues(config);
  const input: SyncWorkflowInput = {
    streams: opts.streams,
    reconcile: 'auto',
    reconcileEveryMs: opts.reconcileEveryMs,
    warehouseTaskQueue: queues.warehouse,
    idScope: queues.main,
  };
  // Replacing keeps one schedule per id: create after deleting an old one with other settings.
  await client.schedule
    .getHandle(opts.id)
    .delete()
    .catch((err: unknown) => {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    });
  await client.schedule.create<typeof syncWorkflow>({
    scheduleId: opts.id,
    spec: { intervals: [{ every: opts.everyMs }] },
    action: { type: 'startWorkflow', workflowType: 'syncWorkflow', taskQueue: queues.main, workflowId: `${opts.id}-run`, args: [input] },
    // Slots missed while the server was down fire at most once when it is back: the catch-up window
    // is shorter than one interval (Temporal's minimum is 10 s), so it holds at most one missed
    // slot, and overlapping runs are skipped. A manual sync joins that run rather than failing.
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: catchupWindowMs(opts.everyMs) },
    // The interval as the user wrote it, for `schedule list`.
    ...(opts.every ? { memo: { [EVERY_MEMO]: opts.every } } : {}),
  });
}

/** Shorter than one interval, so at most one missed slot is caught up. */
export function catchupWindowMs(everyMs: number): number {
  return Math.max(everyMs - 1_000, 10_000);
}

const EVERY_MEMO = 'crmsyncEvery';

export interface ScheduleRow {
  id: string;
  paused: boolean;
  /** The interval as given to `create` (older schedules: the shortest text for it). */
  every: string;
  /** When the last run started, if any. */
  last: string | undefined;
  /** When the next run starts; none while paused. */
  next: string | undefined;
}

/** The namespace's schedules that start crmsync syncs, whatever their ids. */
export async function listSchedules(client: Client): Promise<ScheduleRow[]> {
  const out: ScheduleRow[] = [];
  for await (const s of client.schedule.list()) {
    if (s.action?.type !== 'startWorkflow' || s.action.workflowType !== 'syncWorkflow') continue;
    const d = await client.schedule.getHandle(s.scheduleId).describe();
    const every = d.spec.intervals?.[0]?.every;
    const given = d.memo?.[EVERY_MEMO];
    const last = d.info.recentActions.at(-1);
    out.push({
      id: s.scheduleId,
      paused: d.state.paused,
      every: typeof given === 'string' ? given : every === undefined ? '?' : formatDuration(Number(every)),
      last: last?.takenAt.toISOString(),
      next: d.state.paused ? undefined : d.info.nextActionTimes[0]?.toISOString(),
    });
  }
  return out;
}

export async function changeSchedule(client: Client, id: string, verb: 'pause' | 'resume' | 'delete'): Promise<void> {
  const handle = client.schedule.getHandle(id);
  try {
    if (verb === 'pause') await handle.pause('paused with crmsync schedule pause');
    else if (verb === 'resume') await handle.unpause('resumed with crmsync schedule resume');
    else await handle.delete();
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) throw new ScheduleMissingError(id);
    throw err;
  }
}
