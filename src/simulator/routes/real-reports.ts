import type { RouteCtx, RouteDef, SimResponse } from '../http-types.js';
import { ok } from '../http-types.js';
import { queryArray } from '../paging.js';
import { contactsCreatedBefore } from '../report-math.js';
import { SimError } from '../sim-error.js';
import { parseTimestamp } from '../time.js';
import { options } from './reports.js';

const DASH = ['crm_view_dashboard'];
const DAY = 86_400_000;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const addDays = (key: string, n: number): string => new Date(Date.parse(`${key}T00:00:00Z`) + n * DAY).toISOString().slice(0, 10);
const monthKey = (key: string): string => `${MONTHS[Number(key.slice(5, 7)) - 1]} ${key.slice(0, 4)}`;

/**
 * The date keys of a series, as fluentcrm-2.9 reads `date_range[]`: with none, the last 30 days
 * and today (31 keys); with `[from, to]`, from up to the day before `to` (the end day is
 * excluded, as captured). A date PHP cannot parse is a 423 with DateTime's message.
 */
function readDays(ctx: RouteCtx): { from: string; to: string } {
  const today = ctx.ser.ts(ctx.state.now)?.slice(0, 10) as string;
  const range = queryArray(ctx.query, 'date_range');
  if (range.length < 2) return { from: addDays(today, -30), to: addDays(today, 1) };
  for (const d of range.slice(0, 2)) {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(d) || Number.isNaN(Date.parse(`${d}T00:00:00Z`))) {
      throw new SimError(400, 'rest_invalid_param', 'date_range must be two YYYY-MM-DD dates.', {
        status: 423,
        body: { message: `DateTime::__construct(): Failed to parse time string (${d.slice(0, 40)}) at position 0 (${d.slice(0, 1)}): The timezone could not be found in the database` },
      });
    }
  }
  return { from: range[0] as string, to: range[1] as string };
}

/**
 * `{stats: {key: int}}`: daily keys, or "Nov 2025" month keys when the range is longer than 92
 * days (a final partial month only when it has rows). `add` is called with a bump per day key.
 */
function series(ctx: RouteCtx, fill: (from: string, to: string, bump: (day: string, n: number) => void) => void): SimResponse {
  const { from, to } = readDays(ctx);
  const days = new Map<string, number>();
  for (let d = from; d < to && days.size < 5_000; d = addDays(d, 1)) days.set(d, 0);
  fill(from, to, (day, n) => {
    if (days.has(day)) days.set(day, (days.get(day) ?? 0) + n);
  });
  if (days.size <= 92) return ok({ stats: Object.fromEntries(days) });
  const months = new Map<string, number>();
  const lastMonth = monthKey(addDays(to, -1));
  for (const [d, n] of days) months.set(monthKey(d), (months.get(monthKey(d)) ?? 0) + n);
  if (months.get(lastMonth) === 0 && to.slice(8) !== '01') months.delete(lastMonth);
  return ok({ stats: Object.fromEntries(months) });
}

/** Contacts with status subscribed, by the site-local day they were created. */
function subscribers(ctx: RouteCtx): SimResponse {
  return series(ctx, (from, to, bump) => {
    const tz = ctx.state.opts.timezone;
    const store = ctx.state.contacts;
    const lo = contactsCreatedBefore(ctx.state, parseTimestamp(from, tz));
    const hi = contactsCreatedBefore(ctx.state, parseTimestamp(to, tz));
    for (let i = lo; i < hi; i++) {
      const c = ctx.state.contacts.get(store.idAt(i));
      if (c && c.status === 'subscribed') bump(ctx.ser.ts(c.createdAt)?.slice(0, 10) as string, 1);
    }
  });
}

/** Email counts per day: each campaign's counters on the day it was scheduled (else last updated). */
function emailSeries(pick: 'sent' | 'opened' | 'clicked') {
  return (ctx: RouteCtx): SimResponse =>
    series(ctx, (_from, _to, bump) => {
      for (const c of ctx.marketing.campaigns.values()) {
        if (c.stats[pick] > 0) bump(ctx.ser.ts(c.scheduledAt ?? c.updatedAt)?.slice(0, 10) as string, c.stats[pick]);
      }
    });
}

function dashboardStats(ctx: RouteCtx): SimResponse {
  const counts = ctx.state.counts();
  const camps = [...ctx.marketing.campaigns.values()];
  const stat = (title: string, count: number, route: string) => ({ title, count, route: { name: route } });
  return ok({
    stats: {
      total_subscribers: stat('Active Contacts', counts.total.get('s:subscribed') ?? 0, 'subscribers'),
      total_campaigns: stat('Campaigns', camps.length, 'campaigns'),
      email_sent: stat(
        'Emails Sent',
        camps.reduce((n, c) => n + c.stats.sent, 0),
        'all_emails',
      ),
      tags: stat('Tags', ctx.state.tags.size, 'tags'),
      total_templates: stat('Email Templates', ctx.marketing.templates.size, 'templates'),
      total_automations: stat('Active Automations', [...ctx.marketing.funnels.values()].filter((f) => f.status === 'published').length, 'funnels'),
    },
    sales: [],
    dashboard_notices: [],
    onboarding: { total: 5, completed: 4, steps: [] },
    quick_links: [],
    ff_config: { is_installed: false, create_form_link: '' },
    recommendation: false,
    system_tips: '',
  });
}

/**
 * The report routes of the free plugin (site-ny capture): the interface's report routes are
 * absent there and answer 404 rest_no_route (`missing`, the catch-all).
 */
export function realReportRoutes(missing: RouteDef['handler']): RouteDef[] {
  const r = (path: string, handler: RouteDef['handler']): RouteDef => ({ method: 'GET', path: `/reports/${path}`, caps: DASH, handler, report: true });
  return [
    r('options', options),
    r('ping', () => ok({ message: 'pong' })),
    r('dashboard-stats', dashboardStats),
    r('subscribers', subscribers),
    r('email-sents', emailSeries('sent')),
    r('email-opens', emailSeries('opened')),
    r('email-clicks', emailSeries('clicked')),
    r('*', missing),
  ];
}
