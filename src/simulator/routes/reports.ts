import type { RouteCtx, RouteDef, SimResponse } from '../http-types.js';
import { ok } from '../http-types.js';
import { isValidEmail } from '../contact-input.js';
import { funnelJson } from '../marketing-serialize.js';
import type { CampaignRec } from '../model.js';
import { queryArray } from '../paging.js';
import { contactsCreatedBefore, DATE_RANGES, rangeBounds, round2, startOfDay } from '../report-math.js';
import { SimError } from '../sim-error.js';
import { stepReportRows } from '../step-report.js';
import { realReportRoutes } from './real-reports.js';
import { options } from './report-options.js';

const DASH = ['crm_view_dashboard'];
const DAY = 86_400_000;

function readRange(ctx: RouteCtx): { start: number; end: number } {
  const range = ctx.query.get('date_range') ?? '30_days';
  if (!(DATE_RANGES as readonly string[]).includes(range)) {
    throw new SimError(400, 'rest_invalid_param', `Invalid parameter(s): date_range; use ${DATE_RANGES.join(', ')}.`, {
      status: 423,
      body: { message: `DateTime::__construct(): Failed to parse time string (${range.slice(0, 40)}) at position 0 (${range.slice(0, 1)}): The timezone could not be found in the database` },
    });
  }
  if (range !== 'custom') return rangeBounds(range, ctx.state.now);
  const s = ctx.query.get('start_date');
  const e = ctx.query.get('end_date');
  const start = s ? Date.parse(`${s.slice(0, 10)}T00:00:00Z`) : NaN;
  const end = e ? Date.parse(`${e.slice(0, 10)}T00:00:00Z`) : NaN;
  if (!Number.isFinite(start) || !Number.isFinite(end)) throw new SimError(400, 'rest_invalid_param', 'A custom date_range needs start_date and end_date as YYYY-MM-DD.');
  if (end < start) throw new SimError(400, 'invalid_date_range', 'end_date precedes start_date; swap them or pick another range.');
  return { start, end: end + DAY };
}

function overview(ctx: RouteCtx): SimResponse {
  const { start, end } = readRange(ctx);
  const len = end - start;
  const current = contactsCreatedBefore(ctx.state, end) - contactsCreatedBefore(ctx.state, start);
  const previous = contactsCreatedBefore(ctx.state, start) - contactsCreatedBefore(ctx.state, start - len);
  const lists = queryArray(ctx.query, 'lists').map(Number);
  const tags = queryArray(ctx.query, 'tags').map(Number);
  const counts = ctx.state.counts();
  let total = ctx.state.contacts.size;
  // With filters, the total is the largest matching tag or list count (an approximation of "in any of").
  if (lists.length > 0 || tags.length > 0) {
    total = Math.max(0, ...lists.map((l) => counts.total.get(`l:${l}`) ?? 0), ...tags.map((t) => counts.total.get(`t:${t}`) ?? 0));
  }
  let sent = 0;
  let opened = 0;
  let clicked = 0;
  let revenue = 0;
  for (const c of ctx.marketing.campaigns.values()) {
    sent += c.stats.sent;
    opened += c.stats.opened;
    clicked += c.stats.clicked;
    revenue += c.stats.revenue;
  }
  return ok({
    total_subscribers: total,
    subscriber_growth: { current_period: current, previous_period: previous, growth_rate: previous ? round2(((current - previous) / previous) * 100) : current ? 100 : 0 },
    email_stats: { emails_sent: sent, emails_opened: opened, emails_clicked: clicked, open_rate: sent ? round2((opened / sent) * 100) : 0, click_rate: sent ? round2((clicked / sent) * 100) : 0 },
    revenue: { total: revenue, growth: 0 },
  });
}

function growth(ctx: RouteCtx): SimResponse {
  const { start, end } = readRange(ctx);
  const groupBy = ctx.query.get('group_by') ?? 'day';
  const step = { hour: 3_600_000, day: DAY, week: 7 * DAY, month: 30 * DAY }[groupBy];
  if (!step) throw new SimError(400, 'rest_invalid_param', 'Invalid parameter(s): group_by; use hour, day, week or month.');
  const buckets: { date: string; count: number }[] = [];
  const first = groupBy === 'hour' ? Math.floor(start / step) * step : startOfDay(start);
  for (let t = first; t < end && buckets.length < 2000; t += step) {
    const count = contactsCreatedBefore(ctx.state, Math.min(end, t + step)) - contactsCreatedBefore(ctx.state, Math.max(start, t));
    buckets.push({ date: groupBy === 'hour' ? ctx.ser.ts(t)?.slice(0, 13) + ':00' : (ctx.ser.ts(t)?.slice(0, 10) as string), count });
  }
  return ok({ group_by: groupBy, growth: buckets });
}

function topSubscribers(ctx: RouteCtx): SimResponse {
  const metric = ctx.query.get('metric') ?? 'engagement';
  if (!['engagement', 'revenue', 'activity'].includes(metric)) throw new SimError(400, 'rest_invalid_param', 'Invalid parameter(s): metric; use engagement, revenue or activity.');
  const limit = Number(ctx.query.get('limit') ?? 10);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new SimError(400, 'rest_invalid_param', 'Invalid parameter(s): limit; use 1 to 1000.');
  const score = (s: { emails: number; opens: number; clicks: number }): number => (metric === 'activity' ? s.emails : metric === 'revenue' ? s.clicks * 10 : s.opens + 2 * s.clicks);
  // A bounded top-k over every live contact.
  const top: { id: number; score: number }[] = [];
  for (const c of ctx.state.contacts.cores()) {
    const v = score(c.stats);
    if (top.length < limit || v > (top[top.length - 1] as { score: number }).score) {
      top.push({ id: c.id, score: v });
      top.sort((a, b) => b.score - a.score || a.id - b.id);
      if (top.length > limit) top.pop();
    }
  }
  return ok(
    top.map(({ id, score: v }) => {
      const c = ctx.state.contact(id);
      return { id, email: c?.email, full_name: [c?.firstName, c?.lastName].filter(Boolean).join(' '), metric, value: v };
    }),
  );
}

function emailStats(ctx: RouteCtx): SimResponse {
  const c = ctx.marketing.campaign(Number(ctx.params.id));
  const s = c.stats;
  const pct = (a: number, b: number): number => (b ? round2((a / b) * 100) : 0);
  return ok({
    campaign_id: c.id,
    campaign_title: c.title,
    stats: {
      sent: s.sent,
      delivered: s.delivered,
      opened: s.opened,
      clicked: s.clicked,
      unsubscribed: s.unsubscribed,
      bounced: s.bounced,
      delivery_rate: pct(s.delivered, s.sent),
      open_rate: pct(s.opened, s.delivered),
      click_rate: pct(s.clicked, s.delivered),
      unsubscribe_rate: pct(s.unsubscribed, s.delivered),
    },
    revenue: { total: s.revenue, orders: s.orders, conversion_rate: pct(s.orders, s.clicked) },
  });
}

function conversionStats(ctx: RouteCtx): SimResponse {
  const f = ctx.marketing.funnel(Number(ctx.params.id));
  const subs = [...ctx.marketing.funnelSubscribers.values()].filter((s) => s.funnelId === f.id);
  const completed = subs.filter((s) => s.status === 'completed').length;
  return ok({
    funnel_id: f.id,
    funnel_title: f.title,
    subscribers: {
      total_entered: subs.length,
      currently_active: subs.filter((s) => s.status === 'active').length,
      completed,
      completion_rate: subs.length ? round2((completed / subs.length) * 100) : 0,
    },
    sequence_performance: f.steps
      .filter((st) => st.actionName === 'send_custom_email')
      .map((st) => {
        const sent = subs.filter((s) => s.metrics.some((m) => m.sequenceId === st.id)).length;
        const opened = Math.floor(sent * 0.45);
        const clicked = Math.floor(sent * 0.12);
        return { sequence_id: st.id, title: st.title, sent, opened, clicked, open_rate: sent ? round2((opened / sent) * 100) : 0, click_rate: sent ? round2((clicked / sent) * 100) : 0 };
      }),
  });
}

/** The automation step report and its five rules (spec, Reports). */
function automationSteps(ctx: RouteCtx): SimResponse {
  const f = ctx.marketing.funnel(Number(ctx.params.id));
  const funnel = funnelJson(ctx.ser, f);
  funnel.created_by = String(f.createdBy);
  return ok({ funnel, stats: stepReportRows(ctx.marketing, f) });
}

function revenue(ctx: RouteCtx): SimResponse {
  const camps = [...ctx.marketing.campaigns.values()];
  const total = camps.reduce((n, c) => n + c.stats.revenue, 0);
  const orders = camps.reduce((n, c) => n + c.stats.orders, 0);
  return ok({
    total_revenue: total,
    total_orders: orders,
    average_order_value: orders ? round2(total / orders) : 0,
    attribution: { campaigns: total, funnels: 0 },
    top_campaigns: camps
      .filter((c) => c.stats.revenue > 0)
      .sort((a, b) => b.stats.revenue - a.stats.revenue)
      .slice(0, 5)
      .map((c) => ({ campaign_id: c.id, title: c.title, revenue: c.stats.revenue, orders: c.stats.orders })),
  });
}

const FREQUENCIES = ['daily', 'weekly', 'monthly', 'quarterly'];

function createScheduled(ctx: RouteCtx): SimResponse {
  const b = ctx.body;
  const missing = ['title', 'type', 'frequency'].filter((k) => typeof b[k] !== 'string' || !(b[k] as string).trim());
  if (!Array.isArray(b.recipients) || b.recipients.length === 0) missing.push('recipients');
  if (missing.length > 0)
    throw new SimError(400, 'rest_missing_callback_param', `Missing parameter(s): ${missing.join(', ')}.`, {
      status: 422,
      body: Object.fromEntries(missing.map((k) => [k, { required: `${k} is required` }])),
    });
  if (!FREQUENCIES.includes(b.frequency as string)) throw new SimError(400, 'rest_invalid_param', `Invalid parameter(s): frequency; use ${FREQUENCIES.join(', ')}.`);
  const bad = (b.recipients as unknown[]).filter((r) => !isValidEmail(r));
  if (bad.length > 0) throw new SimError(400, 'rest_invalid_param', 'Invalid parameter(s): recipients; use email addresses.');
  const rec = {
    id: ctx.state.scheduledReports.length + 1,
    title: b.title,
    type: b.type,
    frequency: b.frequency,
    recipients: b.recipients,
    settings: typeof b.settings === 'object' && b.settings !== null ? b.settings : {},
    created_at: ctx.ser.ts(ctx.state.now),
  };
  ctx.state.scheduledReports.push(rec);
  return ok({ report: rec, message: 'Scheduled report has been created' });
}

const KNOWN_SIMPLE = [
  'subscriber-activity',
  'subscribers/export',
  'revenue/campaigns',
  'revenue/contacts',
  'bounces',
  'spam-complaints',
  'unsubscribes',
  'lists',
  'tags',
  'segmentation-analysis',
  'ab-testing',
  'engagement-scores',
  'campaigns',
  'funnels',
];

/**
 * GET /reports/campaigns's optional `start_date`/`end_date` (YYYY-MM-DD, either or both): the
 * campaigns created from the first day to the end of the last. The interface gives the parameters
 * and the 400 invalid_date_range for an end before the start; which date of a campaign they bound
 * it does not say (here its creation).
 */
function campaignRange(ctx: RouteCtx): { start: number; end: number } {
  const day = (k: string): number | undefined => {
    const v = ctx.query.get(k);
    if (v === null || v === '') return undefined;
    const t = /^\d{4}-\d{2}-\d{2}$/.test(v) ? Date.parse(`${v}T00:00:00Z`) : NaN;
    if (!Number.isFinite(t)) throw new SimError(400, 'rest_invalid_param', `Invalid parameter(s): ${k}. ${k} must be a date as YYYY-MM-DD.`);
    return t;
  };
  const start = day('start_date') ?? -Infinity;
  const last = day('end_date');
  if (last !== undefined && last < start) throw new SimError(400, 'invalid_date_range', 'end_date precedes start_date; swap them or pick another range.');
  return { start, end: last === undefined ? Infinity : last + DAY };
}

function simple(name: string) {
  return (ctx: RouteCtx): SimResponse => {
    const counts = ctx.state.counts();
    const body: Record<string, unknown> = { report: name, generated_at: ctx.ser.ts(ctx.state.now) };
    if (name === 'bounces') body.total = counts.total.get('s:bounced') ?? 0;
    if (name === 'spam-complaints') body.total = counts.total.get('s:complained') ?? 0;
    if (name === 'unsubscribes') body.total = counts.total.get('s:unsubscribed') ?? 0;
    if (name === 'lists') body.lists = [...ctx.state.lists.values()].map((l) => ({ id: l.id, title: l.title, total: counts.total.get(`l:${l.id}`) ?? 0 }));
    if (name === 'tags') body.tags = [...ctx.state.tags.values()].map((t) => ({ id: t.id, title: t.title, total: counts.total.get(`t:${t.id}`) ?? 0 }));
    if (name === 'campaigns') {
      const { start, end } = campaignRange(ctx);
      body.campaigns = [...ctx.marketing.campaigns.values()].filter((c) => c.createdAt >= start && c.createdAt < end).map((c) => ({ id: c.id, title: c.title, status: c.status, sent: c.stats.sent }));
    }
    if (name === 'funnels') body.funnels = [...ctx.marketing.funnels.values()].map((f) => ({ id: f.id, title: f.title, status: f.status }));
    return ok(body);
  };
}

const CSV_COLUMNS = ['campaign_id', 'title', 'status', 'recipients_count', 'sent', 'delivered', 'opened', 'clicked', 'unsubscribed', 'bounced'] as const;

/** The export's default, csv with `include[]=basic`: a header line, then the campaign's row (the interface does not name the columns). */
function campaignCsv(c: CampaignRec): SimResponse {
  const cell = (v: string | number): string => (/[",\r\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));
  const s = c.stats;
  const row = [c.id, c.title, c.status, c.recipientsCount, s.sent, s.delivered, s.opened, s.clicked, s.unsubscribed, s.bounced];
  return { status: 200, body: null, raw: `${CSV_COLUMNS.join(',')}\r\n${row.map(cell).join(',')}\r\n`, contentType: 'text/csv; charset=UTF-8' };
}

const notFoundReport: RouteDef['handler'] = () => {
  throw new SimError(404, 'report_not_found', 'Unknown report; see the Reports table of the interface for the names.', {
    status: 404,
    body: { code: 'rest_no_route', message: 'No route was found matching the URL and request method.', data: { status: 404 } },
  });
};

/** The interface's report routes (spec mode), or the real plugin's (real mode: the interface's answer 404 rest_no_route). */
export function reportRoutes(real: boolean): RouteDef[] {
  if (real) return realReportRoutes(notFoundReport);
  const r = (path: string, handler: RouteDef['handler']): RouteDef => ({ method: 'GET', path: `/reports/${path}`, caps: DASH, handler, report: true });
  return [
    r('options', options),
    r('ping', () => ok({ message: 'pong' })),
    r('overview', overview),
    r('subscriber-growth', growth),
    r('top-subscribers', topSubscribers),
    r('revenue', revenue),
    r('campaigns/:id', (ctx) => ok({ campaign: { id: ctx.marketing.campaign(Number(ctx.params.id)).id, stats: ctx.marketing.campaign(Number(ctx.params.id)).stats } })),
    r('campaigns/:id/email-stats', emailStats),
    r('campaigns/:id/live', (ctx) =>
      ok({ campaign_id: Number(ctx.params.id), status: ctx.marketing.campaign(Number(ctx.params.id)).status, sent: ctx.marketing.campaign(Number(ctx.params.id)).stats.sent }),
    ),
    r('campaigns/:id/export', (ctx) => {
      const c = ctx.marketing.campaign(Number(ctx.params.id));
      const format = ctx.query.get('format') ?? 'csv';
      if (!['csv', 'xlsx', 'json'].includes(format)) throw new SimError(400, 'rest_invalid_param', 'Invalid parameter(s): format; use csv, xlsx or json.');
      if (format === 'csv') return campaignCsv(c);
      return ok({ campaign_id: c.id, format, include: queryArray(ctx.query, 'include').length ? queryArray(ctx.query, 'include') : ['basic'], rows: [{ title: c.title, sent: c.stats.sent }] });
    }),
    r('funnels/:id', (ctx) => ok({ funnel: funnelJson(ctx.ser, ctx.marketing.funnel(Number(ctx.params.id))) })),
    r('funnels/:id/conversion-stats', conversionStats),
    r('funnels/:id/live', (ctx) =>
      ok({
        funnel_id: ctx.marketing.funnel(Number(ctx.params.id)).id,
        active: [...ctx.marketing.funnelSubscribers.values()].filter((s) => s.funnelId === Number(ctx.params.id) && s.status === 'active').length,
      }),
    ),
    r('automations/:id/steps', automationSteps),
    r('lists/:id', (ctx) => {
      const l = ctx.state.lists.get(Number(ctx.params.id));
      if (!l) throw new SimError(404, 'rest_post_invalid_id', 'Invalid list ID.');
      return ok({ list: { id: l.id, title: l.title, total: ctx.state.counts().total.get(`l:${l.id}`) ?? 0 } });
    }),
    r('tags/:id', (ctx) => {
      const t = ctx.state.tags.get(Number(ctx.params.id));
      if (!t) throw new SimError(404, 'rest_post_invalid_id', 'Invalid tag ID.');
      return ok({ tag: { id: t.id, title: t.title, total: ctx.state.counts().total.get(`t:${t.id}`) ?? 0 } });
    }),
    r('scheduled', (ctx) => ok({ reports: ctx.state.scheduledReports })),
    { method: 'POST', path: '/reports/scheduled', caps: DASH, handler: createScheduled, report: true },
    ...KNOWN_SIMPLE.map((name) => r(name, simple(name))),
    r('*', notFoundReport),
  ];
}
