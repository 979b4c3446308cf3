import { checkId, type ClientContext } from '../client-context.js';
import { CrmArgumentError } from '../errors.js';
import { asObject } from '../parse.js';
import type { QueryValue } from '../transport.js';
import type { JsonObject, ReportSnapshot } from '../types.js';

export type DateRange = 'today' | 'yesterday' | '7_days' | '30_days' | '90_days' | '12_months' | 'custom';

export interface ReportsApi {
  /** Option data (tags, lists, statuses, ...); the real deployment requires `fields`. */
  options(fields: string[]): Promise<ReportSnapshot>;
  overview(q?: { dateRange?: DateRange; startDate?: string; endDate?: string; compareWith?: string; lists?: number[]; tags?: number[] }): Promise<ReportSnapshot>;
  subscriberGrowth(q?: { dateRange?: DateRange; groupBy?: 'hour' | 'day' | 'week' | 'month' }): Promise<ReportSnapshot>;
  topSubscribers(q?: { metric?: 'engagement' | 'revenue' | 'activity'; limit?: number }): Promise<ReportSnapshot>;
  campaignEmailStats(campaignId: number): Promise<ReportSnapshot>;
  funnelConversionStats(funnelId: number): Promise<ReportSnapshot>;
  /** Step report of an automation: `funnel` and `stats` (entrance row first; unreached steps omitted). */
  automationSteps(funnelId: number): Promise<ReportSnapshot>;
  /** The plugin's dashboard counters (fluentcrm-2.9; the interface has `overview` instead). */
  dashboardStats(): Promise<ReportSnapshot>;
  /** A plugin series, `{stats: {day: int}}` over the last 30 days and today (fluentcrm-2.9). */
  series(name: PluginSeries): Promise<ReportSnapshot>;
  /** The plugin's per-step counts and drop-off of a funnel (`GET /funnels/{id}/report`, `stats.metrics`). */
  funnelReport(funnelId: number): Promise<ReportSnapshot>;
  /** Any other GET report under /reports (e.g. "revenue", "bounces"), kept whole. */
  get(report: string, params?: Record<string, QueryValue>): Promise<ReportSnapshot>;
}

export const PLUGIN_SERIES = ['subscribers', 'email-sents', 'email-opens', 'email-clicks'] as const;
export type PluginSeries = (typeof PLUGIN_SERIES)[number];

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export function createReportsApi(ctx: ClientContext): ReportsApi {
  async function snapshot(report: string, path: string, params: Record<string, QueryValue>, recorded?: JsonObject): Promise<ReportSnapshot> {
    const res = await ctx.exec({ method: 'GET', path, query: params });
    const data = Array.isArray(res) ? { items: res } : asObject(res, `GET ${path}`);
    // The server's timing field changes on every call and is not report data.
    const { __bench: _bench, ...rest } = data as JsonObject;
    const kept = recorded ?? Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined));
    return { report, params: kept, data: rest };
  }
  const checkDates = (...ds: Array<string | undefined>) => {
    for (const d of ds) if (d !== undefined && !DATE.test(d)) throw new CrmArgumentError(`Report dates must be YYYY-MM-DD, got "${d}"`);
  };
  return {
    async options(fields) {
      if (!fields.length || fields.some((f) => !/^[a-z_]+$/.test(f))) throw new CrmArgumentError('reports.options needs field names like "tags", "lists", "statuses"');
      return snapshot('options', '/reports/options', { fields: fields.join(',') });
    },
    async overview(q = {}) {
      checkDates(q.startDate, q.endDate);
      return snapshot('overview', '/reports/overview', {
        date_range: q.dateRange,
        start_date: q.startDate,
        end_date: q.endDate,
        compare_with: q.compareWith,
        lists: q.lists,
        tags: q.tags,
      });
    },
    async subscriberGrowth(q = {}) {
      return snapshot('subscriber_growth', '/reports/subscriber-growth', { date_range: q.dateRange, group_by: q.groupBy });
    },
    async topSubscribers(q = {}) {
      if (q.limit !== undefined && (!Number.isInteger(q.limit) || q.limit < 1 || q.limit > 1000)) throw new CrmArgumentError('topSubscribers limit must be 1 to 1000');
      return snapshot('top_subscribers', '/reports/top-subscribers', { metric: q.metric, limit: q.limit });
    },
    async campaignEmailStats(id) {
      checkId(id, 'campaign id');
      return snapshot('campaign_email_stats', `/reports/campaigns/${id}/email-stats`, {}, { campaign_id: id });
    },
    async funnelConversionStats(id) {
      checkId(id, 'funnel id');
      return snapshot('funnel_conversion_stats', `/reports/funnels/${id}/conversion-stats`, {}, { funnel_id: id });
    },
    async automationSteps(id) {
      checkId(id, 'funnel id');
      return snapshot('automation_steps', `/reports/automations/${id}/steps`, {}, { funnel_id: id });
    },
    async dashboardStats() {
      return snapshot('dashboard_stats', '/reports/dashboard-stats', {});
    },
    async series(name) {
      if (!PLUGIN_SERIES.includes(name)) throw new CrmArgumentError(`Unknown report series "${String(name).slice(0, 40)}"; use one of ${PLUGIN_SERIES.join(', ')}`);
      return snapshot(name.replace(/-/g, '_'), `/reports/${name}`, {});
    },
    async funnelReport(id) {
      checkId(id, 'funnel id');
      return snapshot('funnel_report', `/funnels/${id}/report`, {}, { funnel_id: id });
    },
    async get(report, params = {}) {
      if (!/^[a-z0-9_-]+(\/[a-z0-9_-]+)*$/i.test(report)) throw new CrmArgumentError(`Unknown report path "${report.slice(0, 80)}"`);
      return snapshot(report.replace(/[/-]/g, '_'), `/reports/${report}`, params);
    },
  };
}
