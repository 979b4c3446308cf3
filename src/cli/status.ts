import type { Connection } from '@temporalio/client';
import type { Command } from 'commander';
import { loadConfig, type Config } from '../config.js';
import { buildStatusReport, formatAge, type StatusReport } from '../sync/status-report.js';
import { STREAMS } from '../../workflows/streams.js';
import { readEmbeddedServerRecord } from '../temporal/embedded-server-file.js';
import { taskQueues } from '../temporal/task-queues.js';
import { CatalogNotFoundError, readLakeFreshness, withCatalog, type TableFreshness } from '../warehouse/index.js';
import type { StreamProgress } from '../../workflows/sync-types.js';
import { formatProgressLine } from './progress.js';

export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description('Per-stream freshness, cursors, row counts, last errors, and live progress of a running sync')
    .option('--json', 'print the report as JSON')
    .action(async (raw: { json?: boolean }) => {
      const config = loadConfig();
      const now = Date.now();
      const report = await statusCommand(config, now);
      process.stdout.write(raw.json ? `${JSON.stringify(report, null, 2)}\n` : formatStatus(report, now));
    });
}

/** The status report plus each lake table's freshness: what readers see, and how old it is. */
export interface StatusOutput extends StatusReport {
  lake: (TableFreshness & { ageSeconds: number })[];
}

/** Reads the lake's catalog (never the DuckDB file, which a running worker owns). `nowMs` dates the ages. */
export async function statusCommand(config: Config, nowMs: number = Date.now()): Promise<StatusOutput> {
  let report: StatusOutput;
  try {
    report = await withCatalog({ catalogPath: config.catalogPath }, async (r) => {
      const source = `catalog ${r.source.path} of the Parquet lake (published ${r.source.kind === 'catalog' && r.source.publishedAt ? r.source.publishedAt : 'never'})`;
      const lake = (await readLakeFreshness(r)).map((t) => ({ ...t, ageSeconds: Math.max(0, Math.round((nowMs - Date.parse(t.publishedAt)) / 1000)) }));
      return { ...(await buildStatusReport(r, source)), source, lake };
    });
  } catch (err) {
    // Before the first publish there is no catalog: still show the live progress.
    if (!(err instanceof CatalogNotFoundError)) throw err;
    report = {
      source: `unavailable (${err.message})`,
      contacts: null,
      lake: [],
      streams: STREAMS.map((stream) => ({
        stream,
        rows: null,
        tombstoned: null,
        lastRun: null,
        lastSuccessAt: null,
        lastError: null,
        warning: null,
        staleness: { allReadSince: null, bound: 'nothing published yet' },
      })),
    };
  }
  for (const p of await liveProgress(config)) {
    const s = report.streams.find((x) => x.stream === p.stream);
    if (s && p.phase !== 'done' && p.phase !== 'failed' && p.phase !== 'cancelled') s.live = p;
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
    return await conn.withDeadline(Date.now() + 3_000, () =>
      readStreamProgress(
        client,
        running.map((r) => r.stream),
        scope,
      ),
    );
  } catch {
    return [];
  } finally {
    await connection?.close();
  }
}

export function formatStatus(report: StatusOutput, nowMs: number): string {
  const lines: string[] = [`warehouse: ${report.source}`];
  lines.push(`${'stream'.padEnd(18)} ${'rows'.padStart(9)} ${'deleted'.padStart(8)}  ${'last success'.padEnd(14)} last run`);
  for (const s of report.streams) {
    const run = s.lastRun ? `${s.lastRun.status} ${s.lastRun.mode} ${formatAge(s.lastRun.finishedAt ?? s.lastRun.startedAt, nowMs)}` : 'never run';
    lines.push(`${s.stream.padEnd(18)} ${String(s.rows ?? '?').padStart(9)} ${String(s.tombstoned ?? '').padStart(8)}  ${formatAge(s.lastSuccessAt, nowMs).padEnd(14)} ${run}`);
    if (s.warning) lines.push(`${''.padEnd(18)} warning: ${s.warning}`);
    if (s.lastError) lines.push(`${''.padEnd(18)} last error ${formatAge(s.lastError.at, nowMs)}: ${s.lastError.error}`);
    if (s.stream === 'contacts' && s.staleness) {
      const since = s.staleness.allReadSince ? `every contact read ${formatAge(s.staleness.allReadSince, nowMs)} or later; ` : '';
      lines.push(`${''.padEnd(18)} staleness: ${since}${s.staleness.bound}`);
    }
    if (s.live) lines.push(`${''.padEnd(18)} running: ${formatProgressLine(s.live, nowMs, true)}`);
  }
  const c = report.contacts;
  if (c) {
    lines.push(
      `contacts cursor: max id ${c.maxId}, backfill ${c.backfillDone ? 'done' : 'not done'}, last reconciliation ${
        c.lastReconcileAtMs === null ? 'never' : formatAge(new Date(c.lastReconcileAtMs).toISOString(), nowMs)
      }${c.needsReconcile ? ', reconciliation pending (the CRM changed during the last scan)' : ''}`,
    );
    if (c.activeScan)
      lines.push(
        `contacts scan in progress: ${c.activeScan.mode}, ${c.activeScan.lastPage} pages of ${c.activeScan.perPage}, started ${formatAge(new Date(c.activeScan.startedAtMs).toISOString(), nowMs)}`,
      );
  }
  if (report.lake.length > 0) {
    lines.push(`lake freshness (what query, report and analysts read):`);
    for (const t of report.lake) lines.push(`  ${t.table.padEnd(30)} ${String(t.rows).padStart(9)} rows  published ${t.publishedAt} (${formatAge(t.publishedAt, nowMs)})`);
  }
  return `${lines.join('\n')}\n`;
}
