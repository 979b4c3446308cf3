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

/**
 * Adds one dated snapshot. Step reports (the interface's automation steps, the plugin's funnel
 * report) are also flattened into report_automation_step_rows (one row per step) for drop-off
 * queries, and series into report_daily_counts (one row per day or month).
 */
export async function insertReportSnapshot(connection: DuckDBConnection, snapshot: ReportSnapshot, ctx: LoadContext): Promise<number> {
  const table = reportTableFor(snapshot.report);
  const params = JSON.stringify(snapshot.params ?? {});
  const data = JSON.stringify(snapshot.data ?? {});
  if (params.length + data.length > MAX_SNAPSHOT_BYTES) {
    throw new WarehouseInputError(`Report ${snapshot.report} snapshot is ${params.length + data.length} bytes; the limit is ${MAX_SNAPSHOT_BYTES}.`);
  }
  const snapshotId = randomUUID();
  const values = [snapshotId, ctx.syncedAt.toISOString(), snapshot.report, params, data, ctx.loadId];
  return inTransaction(connection, async () => {
    await run(connection, `INSERT INTO ${quoteIdent(table)} VALUES ($1, CAST($2 AS TIMESTAMPTZ), $3, CAST($4 AS JSON), CAST($5 AS JSON), $6, CAST($2 AS TIMESTAMPTZ))`, values);
    await run(connection, `INSERT OR IGNORE INTO _lake_dirty VALUES ($1, $2)`, [table, snapshotId]);
    if (table === 'report_automation_steps') await insertStepRows(connection, snapshotId, snapshot.report, params, data, ctx);
    const name = snapshot.report.replace(/-/g, '_');
    if (SERIES.test(name)) await insertDailyCounts(connection, snapshotId, name, data, ctx);
    return 1;
  });
}

/**
 * One row per step: from `stats` (the interface's step report) or `stats.metrics` (the plugin's
 * /funnels/{id}/report). The funnel id comes from the snapshot's parameters.
 */
async function insertStepRows(connection: DuckDBConnection, snapshotId: string, report: string, params: string, data: string, ctx: LoadContext): Promise<void> {
  const path = /funnel[-_]report|\/report$/.test(report) ? '$.stats.metrics' : '$.stats';
  await run(
    connection,
    `INSERT INTO report_automation_step_rows
     SELECT $1, CAST($2 AS TIMESTAMPTZ), TRY_CAST(coalesce(json_extract_string($3, '$.funnel_id'), json_extract_string($3, '$.id'), json_extract_string($4, '$.funnel.id')) AS BIGINT),
       TRY_CAST(s->>'sequence_id' AS BIGINT), s->>'label', s->>'type', TRY_CAST(s->>'count' AS BIGINT),
       TRY_CAST(s->>'percent' AS DOUBLE), TRY_CAST(s->>'percent_text' AS DOUBLE), TRY_CAST(s->>'previous_step_count' AS BIGINT),
       TRY_CAST(s->>'drop_count' AS BIGINT), TRY_CAST(s->>'drop_percent' AS DOUBLE), $5, CAST($2 AS TIMESTAMPTZ)
     FROM (SELECT unnest(CAST(coalesce(json_extract(CAST($4 AS JSON), $6), '[]') AS JSON[])) AS s)`,
    [snapshotId, ctx.syncedAt.toISOString(), params, data, ctx.loadId, path],
  );
  await run(connection, `INSERT OR IGNORE INTO _lake_dirty VALUES ('report_automation_step_rows', $1)`, [snapshotId]);
}

/** A series flattened: the plugin's `stats` map (day or "Nov 2025" keys) or the interface's `growth` list. */
async function insertDailyCounts(connection: DuckDBConnection, snapshotId: string, report: string, data: string, ctx: LoadContext): Promise<void> {
  await run(
    connection,
    `INSERT INTO report_daily_counts
     WITH kv AS (
       SELECT e.key AS k, e.value AS n FROM (SELECT unnest(map_entries(coalesce(TRY_CAST(json_extract(CAST($3 AS JSON), '$.stats') AS MAP(VARCHAR, BIGINT)), MAP {}))) AS e)
       UNION ALL
       SELECT g->>'date', TRY_CAST(g->>'count' AS BIGINT) FROM (SELECT unnest(CAST(coalesce(json_extract(CAST($3 AS JSON), '$.growth'), '[]') AS JSON[])) AS g)
     )
     SELECT $1, CAST($2 AS TIMESTAMPTZ), $4, k, coalesce(TRY_CAST(k AS DATE), CAST(TRY_STRPTIME(k, '%b %Y') AS DATE)),
       CASE WHEN TRY_CAST(k AS DATE) IS NOT NULL THEN 'day' ELSE 'month' END, n, $5, CAST($2 AS TIMESTAMPTZ)
     FROM kv WHERE k IS NOT NULL`,
    [snapshotId, ctx.syncedAt.toISOString(), data, report, ctx.loadId],
  );
  await run(connection, `INSERT OR IGNORE INTO _lake_dirty VALUES ('report_daily_counts', $1)`, [snapshotId]);
}
