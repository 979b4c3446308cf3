import { randomUUID } from 'node:crypto';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { ReportSnapshot } from '../crm/types.js';
import { WarehouseInputError } from './errors.js';
import { quoteIdent } from './quote.js';
import { inTransaction, run } from './sql-run.js';
import type { LoadContext } from './types.js';

export const REPORT_TABLES = [
  'report_overview',
  'report_subscriber_growth',
  'report_campaign_email_stats',
  'report_funnel_conversion_stats',
  'report_automation_steps',
  'report_other',
  'report_dashboard_stats',
  'report_email_activity',
] as const;
export type ReportTable = (typeof REPORT_TABLES)[number];

const MAX_SNAPSHOT_BYTES = 16 << 20;

// Report names as the client may spell them: a short name or the endpoint path.
const PATTERNS: [RegExp, ReportTable][] = [
  [/^(reports\/)?overview$/, 'report_overview'],
  [/^(reports\/)?subscriber[-_]growth$/, 'report_subscriber_growth'],
  [/^(reports\/campaigns\/[^/]+\/)?(campaign[-_])?email[-_]stats$/, 'report_campaign_email_stats'],
  [/^(reports\/funnels\/[^/]+\/)?(funnel[-_])?conversion[-_]stats$/, 'report_funnel_conversion_stats'],
  [/^(reports\/automations\/[^/]+\/steps|(automation[-_])?steps|automation[-_]steps)$/, 'report_automation_steps'],
  // The plugin's routes (fluentcrm-2.9): the same data where the interface has a table for it.
  [/^(funnels\/[^/]+\/report|funnel[-_]report)$/, 'report_automation_steps'],
  [/^(reports\/)?subscribers$/, 'report_subscriber_growth'],
  [/^(reports\/)?dashboard[-_]stats$/, 'report_dashboard_stats'],
  [/^(reports\/)?email[-_](sents|opens|clicks)$/, 'report_email_activity'],
];

/** Reports whose data is a series (`stats: {key: int}` or the interface's `growth: [{date, count}]`). */
const SERIES = /^(subscribers|email_(sents|opens|clicks)|subscriber_growth)$/;

/** The report_* table a snapshot lands in (report_other when the report has no table of its own). */
export function reportTableFor(report: string): ReportTable {
  const name = report
    .trim()
    .replace(/^\/+|\/+$/g, '')
    .replace(/^v2\//, '')
    .toLowerCase();
  return PATTERNS.find(([re]) => re.test(name))?.[1] ?? 'report_other';
}

/** Adds one dated snapshot (see `insertReportSnapshots`). */
export async function insertReportSnapshot(connection: DuckDBConnection, snapshot: ReportSnapshot, ctx: LoadContext): Promise<number> {
  return insertReportSnapshots(connection, [snapshot], ctx);
}

/** Snapshots per round of statements: 4 bound values each, well under the statement's limit. */
const SNAPSHOTS_PER_STATEMENT = 500;

interface SnapshotRow {
  id: string;
  table: ReportTable;
  report: string;
  params: string;
  data: string;
}

/**
 * Adds dated snapshots, all in one transaction and a handful of statements whatever their number
 * (one insert per report table, one for the step rows, one for the series, one marking the lake
 * dirty): the warehouse has one writer, and a snapshot per transaction held every write queued
 * behind it. Step reports (the interface's automation steps, the plugin's funnel report) are also
 * flattened into report_automation_step_rows (one row per step) for drop-off queries, and series
 * into report_daily_counts (one row per day or month). Returns the snapshots added.
 */
export async function insertReportSnapshots(connection: DuckDBConnection, snapshots: readonly ReportSnapshot[], ctx: LoadContext): Promise<number> {
  const rows: SnapshotRow[] = snapshots.map((snapshot) => {
    const params = JSON.stringify(snapshot.params ?? {});
    const data = JSON.stringify(snapshot.data ?? {});
    if (params.length + data.length > MAX_SNAPSHOT_BYTES) {
      throw new WarehouseInputError(`Report ${snapshot.report} snapshot is ${params.length + data.length} bytes; the limit is ${MAX_SNAPSHOT_BYTES}.`);
    }
    return { id: randomUUID(), table: reportTableFor(snapshot.report), report: snapshot.report, params, data };
  });
  if (rows.length === 0) return 0;
  const at = ctx.syncedAt.toISOString();
  await inTransaction(connection, async () => {
    for (let i = 0; i < rows.length; i += SNAPSHOTS_PER_STATEMENT) {
      const chunk = rows.slice(i, i + SNAPSHOTS_PER_STATEMENT);
      const dirty: [string, string][] = [];
      for (const table of new Set(chunk.map((r) => r.table))) {
        const mine = chunk.filter((r) => r.table === table);
        // $1 the load time, $2 the load id, then four values per snapshot.
        const values = mine.map((_, j) => `($${3 + 4 * j}, CAST($1 AS TIMESTAMPTZ), $${4 + 4 * j}, CAST($${5 + 4 * j} AS JSON), CAST($${6 + 4 * j} AS JSON), $2, CAST($1 AS TIMESTAMPTZ))`);
        await run(connection, `INSERT INTO ${quoteIdent(table)} VALUES ${values.join(', ')}`, [at, ctx.loadId, ...mine.flatMap((r) => [r.id, r.report, r.params, r.data])]);
        for (const r of mine) dirty.push([table, r.id]);
      }
      const steps = chunk.filter((r) => r.table === 'report_automation_steps');
      if (steps.length > 0) {
        await insertStepRows(connection, steps, at, ctx.loadId);
        for (const r of steps) dirty.push(['report_automation_step_rows', r.id]);
      }
      const series = chunk.map((r) => ({ ...r, name: r.report.replace(/-/g, '_') })).filter((r) => SERIES.test(r.name));
      if (series.length > 0) {
        await insertDailyCounts(connection, series, at, ctx.loadId);
        for (const r of series) dirty.push(['report_daily_counts', r.id]);
      }
      await run(connection, `INSERT OR IGNORE INTO _lake_dirty VALUES ${dirty.map((_, j) => `($${1 + 2 * j}, $${2 + 2 * j})`).join(', ')}`, dirty.flat());
    }
  });
  return rows.length;
}

/**
 * One row per step: from `stats` (the interface's step report) or `stats.metrics` (the plugin's
 * /funnels/{id}/report). The funnel id comes from the snapshot's parameters.
 */
async function insertStepRows(connection: DuckDBConnection, steps: readonly SnapshotRow[], at: string, loadId: string): Promise<void> {
  // $1 the load time, $2 the load id, then four values per snapshot.
  const values = steps.map((_, j) => `(CAST($${3 + 4 * j} AS VARCHAR), CAST($${4 + 4 * j} AS VARCHAR), CAST($${5 + 4 * j} AS VARCHAR), CAST($${6 + 4 * j} AS VARCHAR))`);
  await run(
    connection,
    `INSERT INTO report_automation_step_rows
     SELECT snapshot_id, CAST($1 AS TIMESTAMPTZ), TRY_CAST(coalesce(json_extract_string(params, '$.funnel_id'), json_extract_string(params, '$.id'), json_extract_string(data, '$.funnel.id')) AS BIGINT),
       TRY_CAST(s->>'sequence_id' AS BIGINT), s->>'label', s->>'type', TRY_CAST(s->>'count' AS BIGINT),
       TRY_CAST(s->>'percent' AS DOUBLE), TRY_CAST(s->>'percent_text' AS DOUBLE), TRY_CAST(s->>'previous_step_count' AS BIGINT),
       TRY_CAST(s->>'drop_count' AS BIGINT), TRY_CAST(s->>'drop_percent' AS DOUBLE), $2, CAST($1 AS TIMESTAMPTZ)
     FROM (SELECT snapshot_id, params, data, unnest(CAST(coalesce(json_extract(CAST(data AS JSON), path), '[]') AS JSON[])) AS s
           FROM (VALUES ${values.join(', ')}) AS src(snapshot_id, params, data, path))`,
    [at, loadId, ...steps.flatMap((r) => [r.id, r.params, r.data, /funnel[-_]report|\/report$/.test(r.report) ? '$.stats.metrics' : '$.stats'])],
  );
}

/** Series flattened: the plugin's `stats` map (day or "Nov 2025" keys) or the interface's `growth` list. */
async function insertDailyCounts(connection: DuckDBConnection, series: readonly (SnapshotRow & { name: string })[], at: string, loadId: string): Promise<void> {
  // $1 the load time, $2 the load id, then three values per snapshot.
  const values = series.map((_, j) => `(CAST($${3 + 3 * j} AS VARCHAR), CAST($${4 + 3 * j} AS VARCHAR), CAST($${5 + 3 * j} AS VARCHAR))`);
  await run(
    connection,
    `INSERT INTO report_daily_counts
     WITH src AS (SELECT * FROM (VALUES ${values.join(', ')}) AS t(snapshot_id, report, data)),
     kv AS (
       SELECT snapshot_id, report, e.key AS k, e.value AS n
       FROM (SELECT snapshot_id, report, unnest(map_entries(coalesce(TRY_CAST(json_extract(CAST(data AS JSON), '$.stats') AS MAP(VARCHAR, BIGINT)), MAP {}))) AS e FROM src)
       UNION ALL
       SELECT snapshot_id, report, g->>'date', TRY_CAST(g->>'count' AS BIGINT)
       FROM (SELECT snapshot_id, report, unnest(CAST(coalesce(json_extract(CAST(data AS JSON), '$.growth'), '[]') AS JSON[])) AS g FROM src)
     )
     SELECT snapshot_id, CAST($1 AS TIMESTAMPTZ), report, k, coalesce(TRY_CAST(k AS DATE), CAST(TRY_STRPTIME(k, '%b %Y') AS DATE)),
       CASE WHEN TRY_CAST(k AS DATE) IS NOT NULL THEN 'day' ELSE 'month' END, n, $2, CAST($1 AS TIMESTAMPTZ)
     FROM kv WHERE k IS NOT NULL`,
    [at, loadId, ...series.flatMap((r) => [r.id, r.name, r.data])],
  );
}
