import type { Connection } from '@temporalio/client';
import type { Command } from 'commander';
import { loadConfig, type Config } from '../config.js';
import { buildStatusReport, formatAge, type StatusReport } from '../sync/status-report.js';
import { STREAMS } from '../../workflows/streams.js';
import { readEmbeddedServerRecord } from '../temporal/embedded-server-file.js';
import { taskQueues } from '../temporal/task-queues.js';
import { WarehouseLockedError, WarehouseNotFoundError, withWarehouse } from '../warehouse/index.js';
import type { StreamProgress } from '../../workflows/sync-types.js';
import { formatProgressLine } from './progress.js';

export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description('Per-stream freshness, cursors, row counts, last errors, and live progress of a running sync')
    .option('--json', 'print the report as JSON')
    .action(async (raw: { json?: boolean }) => {
      const config = loadConfig();
      const report = await statusCommand(config);
      process.stdout.write(raw.json ? `${JSON.stringify(report, null, 2)}\n` : formatStatus(report, Date.now()));
    });
}

export async function statusCommand(config: Config): Promise<StatusReport> {
  let source = 'warehouse file';
  let report: StatusReport;
  try {
    report = await withWarehouse(
      { dbPath: config.dbPath, lakePath: config.lakePath, write: false, onSource: (s) => (source = s.kind === 'duckdb' ? `DuckDB file ${s.path}` : `Parquet lake ${s.path} (published ${s.publishedAt ?? 'never'}; a sync holds the file)`) },
      (w) => buildStatusReport(w, source),
    );
    report.source = source;
  } catch (err) {
    // During the first sync there is no lake to fall back to: still show the live progress.
    if (!(err instanceof WarehouseLockedError || err instanceof WarehouseNotFoundError)) throw err;
    report = { source: `unavailable (${err.message})`, contacts: null, streams: STREAMS.map((stream) => ({ stream, rows: null, tombstoned: null, lastRun: null, lastSuccessAt: null, lastError: null, warning: null, staleness: { allReadSince: null, bound: 'unknown' } })) };
  }
  for (const p of await liveProgress(config)) {
    const s = report.streams.find((x) => x.stream === p.stream);
    if (s && (p.phase !== 'done' && p.phase !== 'failed' && p.phase !== 'cancelled')) s.live = p;
  }
  return report;
}

/**
 * Live progress from the running stream workflows, when a Temporal is known: TEMPORAL_ADDRESS,
 * or an embedded server another crmsync process runs. Status never starts a server itself.
 */
async function liveProgress(config: Config): Promise<StreamProgress[]> {
  const address = config.temporal.address ?? (await readEmbeddedServerRecord(config.dataDir))?.address;
  if (!address) return [];
  let connection: Connection | undefined;
  try {
    // Loaded only when a Temporal is known: status without one stays quick.
    const { Client, Connection } = await import('@temporalio/client');
    const { readStreamProgress } = await import('../sync/run-sync.js');
    const { findRunningStreams } = await import('../sync/running-runs.js');
    connection = await Connection.connect({ address, connectTimeout: 2_000 });
    const client = new Client({ connection, namespace: config.temporal.namespace });
    const scope = taskQueues(config).main;
    // Only running streams have live progress; a query needs a worker, so ask only those, and
    // give up soon when no worker answers (an embedded server kept between commands has none).
    const running = await findRunningStreams(client, STREAMS, scope);
    if (running.length === 0) return [];
    const conn = connection;
    return await conn.withDeadline(Date.now() + 3_000, () => readStreamProgress(client, running.map((r) => r.stream), scope));
  } catch {
    return [];
  } finally {
    await connection?.close();
  }
}

export function formatStatus(report: StatusReport, nowMs: number): string {
  const lines: string[] = [`warehouse: ${report.source}`];
  lines.push(`${'stream'.padEnd(18)} ${'rows'.padStart(9)} ${'deleted'.padStart(8)}  ${'last success'.padEnd(14)} last run`);
  for (const s of report.streams) {
    const run = s.lastRun ? `${s.lastRun.status} ${s.lastRun.mode} ${formatAge(s.lastRun.finishedAt ?? s.lastRun.startedAt, nowMs)}` : 'never run';
    lines.push(
      `${s.stream.padEnd(18)} ${String(s.rows ?? '?').padStart(9)} ${String(s.tombstoned ?? '').padStart(8)}  ${formatAge(s.lastSuccessAt, nowMs).padEnd(14)} ${run}`,
    );
    if (s.warning) lines.push(`${''.padEnd(18)} warning: ${s.warning}`);
    if (s.lastError) lines.push(`${''.padEnd(18)} last error ${formatAge(s.lastError.at, nowMs)}: ${s.lastError.error}`);
    if (s.stream === 'contacts' && s.staleness) lines.push(`${''.padEnd(18)} staleness: every contact read ${formatAge(s.staleness.allReadSince, nowMs)} or later; ${s.staleness.bound}`);
    if (s.live) lines.push(`${''.padEnd(18)} running: ${formatProgressLine(s.live, nowMs, true)}`);
  }
  const c = report.contacts;
  if (c) {
    lines.push(
      `contacts cursor: max id ${c.maxId}, backfill ${c.backfillDone ? 'done' : 'not done'}, last reconciliation ${
        c.lastReconcileAtMs === null ? 'never' : formatAge(new Date(c.lastReconcileAtMs).toISOString(), nowMs)
      }${c.needsReconcile ? ', reconciliation pending (the CRM changed during the last scan)' : ''}`,
    );
    if (c.activeScan) lines.push(`contacts scan in progress: ${c.activeScan.mode}, ${c.activeScan.lastPage} pages of ${c.activeScan.perPage}, started ${formatAge(new Date(c.activeScan.startedAtMs).toISOString(), nowMs)}`);
  }
  return `${lines.join('\n')}\n`;
}
