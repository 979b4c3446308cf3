import type { DuckDBConnection } from '@duckdb/node-api';
import { readRows } from './sql-run.js';

/** How many of the latest runs, campaigns, failures and webhook days the report reads. */
export const REPORT_LIMITS = { runs: 30, campaigns: 40, failures: 50, webhookDays: 30, deadLetters: 50 } as const;

export type Period = 'day' | 'week' | 'month';
export interface GrowthRow {
  period: Period;
  period_start: string;
  status: string;
  new_contacts: number;
  total_contacts: number;
}
export interface CampaignRow {
  id: number;
  title: string | null;
  status: string | null;
  sent: number | null;
  opens: number | null;
  clicks: number | null;
  unsubscribes: number | null;
  open_rate: number | null;
  click_rate: number | null;
  unsubscribe_rate: number | null;
}
export interface FunnelStepRow {
  funnel_id: number;
  funnel_title: string | null;
  sequence_id: number;
  label: string | null;
  reached: number | null;
  dropped: number | null;
  drop_percent: number | null;
  percent_of_entrants: number | null;
}
export interface TaxonomyRow {
  kind: 'tag' | 'list';
  id: number;
  title: string;
  members: number;
  previous_members: number | null;
  change: number | null;
  crm_subscribers: number | null;
  previous_sync_at: Date | null;
}
export interface RunRow {
  run_id: string;
  stream: string;
  mode: string;
  status: string;
  started_at: Date;
  finished_at: Date | null;
  duration_s: number | null;
  rows_read: number;
  requests: number;
  pages: number;
  error: string | null;
}
export interface FreshnessRow {
  stream: string;
  last_success_at: Date | null;
  last_run_at: Date;
  last_status: string;
  runs: number;
  failed_runs: number;
}
export interface FailureRow {
  run_id: string;
  stream: string;
  mode: string;
  started_at: Date;
  finished_at: Date | null;
  error: string | null;
}
export interface WebhookLagRow {
  day: string;
  deliveries: number;
  failed: number;
  delivery_lag_p50_s: number | null;
  delivery_lag_p95_s: number | null;
  apply_lag_p50_s: number | null;
  apply_lag_p95_s: number | null;
}
export interface DeadLetterRow {
  delivery_id: string;
  event: string | null;
  received_at: Date | null;
  error: string | null;
}

export interface ReportData {
  growth: GrowthRow[];
  campaigns: { rows: CampaignRow[]; total: number };
  funnels: FunnelStepRow[];
  taxonomy: TaxonomyRow[];
  runs: { rows: RunRow[]; totalRuns: number };
  freshness: FreshnessRow[];
  failures: { rows: FailureRow[]; total: number };
  /** Null when the warehouse (or the lake) has no webhook tables. */
  webhooks: { lag: WebhookLagRow[]; deadLetters: DeadLetterRow[]; deadLetterTotal: number } | null;
  /** Analyst views the report needs that this warehouse lacks (e.g. the lake has not published their tables). */
  missingViews: string[];
}

const NEEDED_VIEWS = ['subscriber_growth_by_period', 'campaign_performance', 'funnel_step_dropoff', 'tag_list_member_counts', 'sync_run_health', 'sync_stream_freshness', 'sync_failures'] as const;
const DEAD_LETTERS_VIEW = 'webhook_dead_letters_open';

/**
 * Everything `crmsync report` draws, read from the analyst views of sql/views/ (the same
 * numbers `crmsync query` gives), bounded so a large warehouse costs a few small queries.
 */
export async function readReportData(connection: DuckDBConnection): Promise<ReportData> {
  const views = new Set((await readRows(connection, 'SELECT view_name FROM duckdb_views() WHERE NOT internal')).map((r) => String(r.view_name)));
  const has = (v: string): boolean => views.has(v);
  const rows = async <T>(view: string, sql: string, params: unknown[] = []): Promise<T[]> => (has(view) ? ((await readRows(connection, sql, params)) as T[]) : []);
  const count = async (view: string, sql: string): Promise<number> => Number((await rows<{ n: number }>(view, sql))[0]?.n ?? 0);
  const L = REPORT_LIMITS;

  const growth = await rows<GrowthRow>(
    'subscriber_growth_by_period',
    `SELECT period, strftime(period_start, '%Y-%m-%d') AS period_start, status, new_contacts, total_contacts
     FROM subscriber_growth_by_period ORDER BY period, period_start, status`,
  );
  const campaigns = await rows<CampaignRow>(
    'campaign_performance',
    `SELECT id, title, status, sent, opens, clicks, unsubscribes, open_rate, click_rate, unsubscribe_rate
     FROM campaign_performance ORDER BY coalesce(scheduled_at, created_at) DESC NULLS LAST, id DESC LIMIT ${L.campaigns}`,
  );
  const campaignTotal = await count('campaign_performance', 'SELECT count(*) AS n FROM campaign_performance');
  const funnels = await rows<FunnelStepRow>(
    'funnel_step_dropoff',
    `SELECT funnel_id, funnel_title, sequence_id, label, reached, dropped, drop_percent, percent_of_entrants
     FROM funnel_step_dropoff ORDER BY funnel_id, sequence_id = 0 DESC, sequence_id`,
  );
  const taxonomy = await rows<TaxonomyRow>('tag_list_member_counts', 'SELECT * FROM tag_list_member_counts ORDER BY kind DESC, members DESC, id');
  const runs = await rows<RunRow>(
    'sync_run_health',
    `SELECT run_id, stream, mode, status, started_at, finished_at, duration_s, rows_read, requests, pages, error FROM sync_run_health
     WHERE run_id IN (SELECT run_id FROM sync_run_health GROUP BY run_id ORDER BY min(started_at) DESC LIMIT ${L.runs})
     ORDER BY started_at, stream`,
  );
  const totalRuns = await count('sync_run_health', 'SELECT count(DISTINCT run_id) AS n FROM sync_run_health');
  const freshness = await rows<FreshnessRow>('sync_stream_freshness', 'SELECT * FROM sync_stream_freshness ORDER BY stream');
  const failures = await rows<FailureRow>('sync_failures', `SELECT * FROM sync_failures ORDER BY started_at DESC, stream LIMIT ${L.failures}`);
  const failureTotal = await count('sync_failures', 'SELECT count(*) AS n FROM sync_failures');

  let webhooks: ReportData['webhooks'] = null;
  if (has('webhook_lag_daily')) {
    const lag = await rows<WebhookLagRow>(
      'webhook_lag_daily',
      `SELECT * FROM (SELECT strftime(day, '%Y-%m-%d') AS day, * EXCLUDE (day) FROM webhook_lag_daily ORDER BY day DESC LIMIT ${L.webhookDays}) ORDER BY day`,
    );
    const deadLetters = await rows<DeadLetterRow>(DEAD_LETTERS_VIEW, `SELECT delivery_id, event, received_at, error FROM ${DEAD_LETTERS_VIEW} LIMIT ${L.deadLetters}`);
    webhooks = { lag, deadLetters, deadLetterTotal: await count(DEAD_LETTERS_VIEW, `SELECT count(*) AS n FROM ${DEAD_LETTERS_VIEW}`) };
  }
  return {
    growth,
    campaigns: { rows: campaigns, total: campaignTotal },
    funnels,
    taxonomy,
    runs: { rows: runs, totalRuns },
    freshness,
    failures: { rows: failures, total: failureTotal },
    webhooks,
    missingViews: NEEDED_VIEWS.filter((v) => !has(v)),
  };
}
