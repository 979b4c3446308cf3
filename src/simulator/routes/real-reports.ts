import type { RouteCtx, RouteDef, SimResponse } from '../http-types.js';
import { deleteEmailRows, reportEmailsBody } from '../campaign-emails.js';
import { ok } from '../http-types.js';
import { queryArray } from '../paging.js';
import { contactsCreatedBefore } from '../report-math.js';
import { SimError } from '../sim-error.js';
import { addDays, bucketSeries, type SeriesRow } from '../report-series.js';
import { parseTimestamp } from '../time.js';
import { options } from './report-options.js';

const DASH = ['crm_view_dashboard'];

/**
 * The date range of a series, as fluentcrm-2.9 reads `date_range[]`: with none, the last 30 days
 * and today (to = tomorrow); with `[from, to]`, from up to the day before `to` (the end day is
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
        body: { message: `Failed to parse time string (${d.slice(0, 40)}) at position 0 (${d.slice(0, 1)}): The timezone could not be found in the database` },
      });
    }
  }
  return { from: range[0] as string, to: range[1] as string };
}

/** `{stats: {key: int}}` over the requested range, keyed as the plugin keys it (see report-series.ts). */
function series(ctx: RouteCtx, rows: (from: string, to: string) => Iterable<SeriesRow>): SimResponse {
  const { from, to } = readDays(ctx);
  return ok({ stats: bucketSeries(from, to, rows(from, to)) });
}

/** Contacts with status subscribed, by the site-local day they were created. */
function subscribers(ctx: RouteCtx): SimResponse {
  return series(ctx, function* (from, to) {
    const tz = ctx.state.opts.timezone;
    const store = ctx.state.contacts;
    const lo = contactsCreatedBefore(ctx.state, parseTimestamp(from, tz));
    const hi = contactsCreatedBefore(ctx.state, parseTimestamp(to, tz));
    for (let i = lo; i < hi; i++) {
      const c = ctx.state.contacts.get(store.idAt(i));
      if (c && c.status === 'subscribed') yield { day: ctx.ser.ts(c.createdAt)?.slice(0, 10) as string, n: 1 };
    }
  });
}

/** Email counts per day: each campaign's counters on the day it was scheduled (else last updated). */
function emailSeries(pick: 'sent' | 'opened' | 'clicked') {
  return (ctx: RouteCtx): SimResponse =>
    series(ctx, function* () {
      for (const c of ctx.marketing.campaigns.values()) {
        if (c.stats[pick] > 0) yield { day: ctx.ser.ts(c.scheduledAt ?? c.updatedAt)?.slice(0, 10) as string, n: c.stats[pick] };
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
    r('emails', (ctx) => ok(reportEmailsBody(ctx))),
    // Deleting email rows is an email manager's, not the dashboard's (not captured).
    { method: 'DELETE', path: '/reports/emails', caps: ['crm_manage_emails'], handler: (ctx) => ok(deleteEmailRows(ctx)) },
    // Admin-UI helpers, answered as on both captured sites (no add-ons, only WordPress's default
    // post category; ajax-options gave [] even for option_key=tags): they do not read CRM data.
    r('ajax-options', () => ok({ options: [] })),
    r('cascade_selections', () => ok({ options: [], has_more: true })),
    r('advanced-providers', () => ok({ providers: [] })),
    r('taxonomy-terms', () => ok({ options: [{ id: '1', title: 'Uncategorized' }] })),
    r('*', missing),
  ];
}
