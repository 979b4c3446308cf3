import { campaignEmailsBody } from '../campaign-emails.js';
import { linkReportBody } from '../campaign-links.js';
import { emailRowCount } from '../email-row-count.js';
import type { RouteCtx, RouteDef, SimResponse } from '../http-types.js';
import { ok } from '../http-types.js';
import { campaignJson } from '../marketing-serialize.js';
import type { CampaignRec } from '../model.js';
import { paginator, queryArray, readPaging } from '../paging.js';
import { SimError } from '../sim-error.js';

const READ = ['crm_read_emails', 'crm_manage_emails'];
const WRITE = ['crm_manage_emails'];
const DELETE = ['crm_manage_email_delete'];
const SORTS: Record<string, (c: CampaignRec) => string | number> = {
  id: (c) => c.id,
  title: (c) => c.title.toLowerCase(),
  created_at: (c) => c.createdAt,
  updated_at: (c) => c.updatedAt,
  scheduled_at: (c) => c.scheduledAt ?? 0,
  status: (c) => c.status,
};

function list(ctx: RouteCtx): SimResponse {
  const paging = readPaging(ctx, 10);
  const by = ctx.query.get('sort_by') ?? 'id';
  const dir = (ctx.query.get('sort_type') ?? 'DESC').toUpperCase() === 'ASC' ? 1 : -1;
  const key = SORTS[by];
  if (!key) {
    throw new SimError(400, 'rest_invalid_param', `Invalid parameter(s): sort_by; use ${Object.keys(SORTS).join(', ')}.`, {
      status: 423,
      body: {
        message: `Unknown column '${by.slice(0, 40)}' in 'ORDER BY' (SQL: select * from \`wp_fc_campaigns\` where \`type\` = 'campaign' order by \`${by.slice(0, 40)}\` desc limit ${paging.perPage} offset ${(paging.page - 1) * paging.perPage})`,
      },
    });
  }
  const search = (ctx.query.get('search') ?? ctx.query.get('searchBy') ?? '').toLowerCase().slice(0, 200);
  const rows = [...ctx.marketing.campaigns.values()].filter((c) => !search || c.title.toLowerCase().includes(search));
  rows.sort((a, b) => (key(a) < key(b) ? -dir : key(a) > key(b) ? dir : (a.id - b.id) * dir));
  const stats = queryArray(ctx.query, 'with').includes('stats');
  const offset = (paging.page - 1) * paging.perPage;
  // fluentcrm-2.9's list rows also carry `next_step` (false on every captured row).
  const data = rows.slice(offset, offset + paging.perPage).map((c) => (ctx.real ? { ...campaignJson(ctx.ser, c, stats), next_step: false } : campaignJson(ctx.ser, c, stats)));
  return ok({ campaigns: paginator(ctx, paging, rows.length, data) });
}

const id = (ctx: RouteCtx): number => Number(ctx.params.id);

function get(ctx: RouteCtx): SimResponse {
  const c = ctx.marketing.campaign(id(ctx));
  return ok({ campaign: { ...campaignJson(ctx.ser, c), server_time: ctx.ser.ts(ctx.state.now) } });
}

function status(ctx: RouteCtx): SimResponse {
  const raw = ctx.query.get('request_counter') ?? '0';
  const counter = Number(raw);
  if (!Number.isInteger(counter) || counter < 0) throw new SimError(400, 'rest_invalid_param', 'Invalid parameter(s): request_counter; use a non-negative integer.');
  const { campaign: c } = ctx.marketing.pollCampaignStatus(id(ctx), counter);
  // fluentcrm-2.9's campaign here carries `sent_by` alone of the interface's extra status fields,
  // false until the campaign is sent (GET_campaigns_id_status) and then the sender's name.
  const campaign = ctx.real
    ? { ...campaignJson(ctx.ser, c), sent_by: c.status === 'draft' ? false : 'simulator' }
    : { ...campaignJson(ctx.ser, c), sent_by: 'simulator', open_tracking_status: 'yes', click_tracking_status: 'yes', scheduling_range: { start: null, end: null } };
  const { stat, sent_count, analytics } = sendingStats(ctx, c);
  return ok({ current_timestamp: ctx.ser.ts(ctx.state.now), stat, campaign, sent_count, analytics, subject_analytics: ctx.real ? [] : {} });
}

/**
 * The per-status email counts and the open/click figures of a campaign. fluentcrm-2.9 counts by
 * status as strings, and once the campaign is archived gives open and click totals with the
 * click-to-open rate (site-ny GET_campaigns_id_status, _overview_stats); before that, `[]`.
 */
function sendingStats(ctx: RouteCtx, c: CampaignRec): { stat: unknown[]; sent_count: number; analytics: unknown } {
  const s = c.stats;
  // A finished campaign's recipients without an email are in no status (site-ny: 493 recipients, stat 492 sent).
  const pending = emailRowCount(c) - s.sent;
  const stat = [{ status: 'sent', total: s.delivered }, { status: 'bounced', total: s.bounced }, ...(pending > 0 && c.status !== 'draft' ? [{ status: 'pending', total: pending }] : [])]
    .filter((x) => x.total > 0)
    .map((x) => (ctx.real ? { ...x, total: String(x.total) } : x));
  if (c.status !== 'archived') return { stat, sent_count: s.sent, analytics: ctx.real ? [] : {} };
  if (!ctx.real) return { stat, sent_count: s.sent, analytics: { open: { total: s.opened, subtitle: 'Opened' }, click: { total: s.clicked, subtitle: 'Clicked' } } };
  const rate = (kind: 'open' | 'click', total: number, label: string, icon: string) => ({ total, label: `${label} (${total})`, type: kind, is_percent: true, icon_class: icon });
  return {
    stat,
    sent_count: s.sent,
    analytics: {
      open: rate('open', s.opened, 'Open Rate', 'dashicons dashicons-buddicons-pm'),
      click: rate('click', s.clicked, 'Click Rate', 'el-icon el-icon-position'),
      ctor: { total: `${s.opened ? ((s.clicked / s.opened) * 100).toFixed(2) : '0.00'}%`, label: 'Click To Open Rate', type: 'ctor', icon_class: 'el-icon el-icon-chat-dot-square' },
    },
  };
}

/** fluentcrm-2.9: the sending figures of the status poll alone, without polling (site-ny GET_campaigns_id_overview_stats). */
function overviewStats(ctx: RouteCtx): SimResponse {
  const { stat, sent_count, analytics } = sendingStats(ctx, ctx.marketing.campaign(id(ctx)));
  return ok({ sent_count, stat, analytics });
}

/**
 * The campaign analytics routes: email rows modelled from the counters (campaign-emails.ts);
 * unsubscribes and orders, which the simulator keeps no rows for, as fluentcrm-2.9's envelopes
 * with empty row lists. The captured site had no shop plugin, so its revenue report is empty too.
 */
function realAnalytics(ctx: RouteCtx, what: 'emails' | 'link-report' | 'revenues' | 'unsubscribers' | 'estimate'): SimResponse {
  const c = ctx.marketing.campaign(id(ctx));
  switch (what) {
    case 'emails':
      return ok(campaignEmailsBody(ctx, c));
    case 'link-report':
      return ok(linkReportBody(ctx, c));
    case 'revenues':
      return ok({ orders: [], labels: { order: '#', title: 'Customer', status: 'Status', date: 'Date', total: 'Total' }, total: 0 });
    case 'unsubscribers':
      return ok({ unsubscribes: paginator(ctx, readPaging(ctx, 15), 0, []) });
    case 'estimate':
      return ok({ estimated_count: c.recipientsCount });
  }
}

export const campaignRoutes: RouteDef[] = [
  { method: 'GET', path: '/campaigns', caps: READ, handler: list },
  { method: 'GET', path: '/campaigns/:id', caps: READ, handler: get },
  { method: 'POST', path: '/campaigns/:id/pause', caps: WRITE, handler: (ctx) => ok({ message: 'Campaign has been paused', campaign: campaignJson(ctx.ser, ctx.marketing.pauseCampaign(id(ctx))) }) },
  {
    method: 'POST',
    path: '/campaigns/:id/resume',
    caps: WRITE,
    handler: (ctx) => ok({ message: 'Campaign has been resumed', campaign: campaignJson(ctx.ser, ctx.marketing.resumeCampaign(id(ctx))) }),
  },
  {
    method: 'POST',
    path: '/campaigns/:id/duplicate',
    caps: WRITE,
    handler: (ctx) => ok({ message: 'Campaign has been duplicated', campaign: campaignJson(ctx.ser, ctx.marketing.duplicateCampaign(id(ctx))) }),
  },
  {
    method: 'PUT',
    path: '/campaigns/:id/title',
    caps: WRITE,
    handler: (ctx) => ok({ message: 'Title has been updated', campaign: campaignJson(ctx.ser, ctx.marketing.renameCampaign(id(ctx), ctx.body.title)) }),
  },
  { method: 'DELETE', path: '/campaigns/:id', caps: DELETE, handler: (ctx) => (ctx.marketing.deleteCampaign(id(ctx)), ok({ message: 'Campaign has been deleted' })) },
  { method: 'GET', path: '/campaigns/:id/status', caps: READ, handler: status },
  {
    method: 'GET',
    path: '/campaigns/:id/estimated-recipients-count',
    caps: READ,
    handler: (ctx) => (ctx.real ? realAnalytics(ctx, 'estimate') : ok({ count: ctx.marketing.campaign(id(ctx)).recipientsCount })),
  },
  {
    method: 'GET',
    path: '/campaigns/:id/emails',
    caps: READ,
    handler: (ctx) => {
      if (ctx.real) return realAnalytics(ctx, 'emails');
      const c = ctx.marketing.campaign(id(ctx));
      const paging = readPaging(ctx, 10);
      return ok({ emails: paginator(ctx, paging, 0, []), campaign_id: c.id });
    },
  },
  {
    method: 'GET',
    path: '/campaigns/:id/link-report',
    caps: READ,
    handler: (ctx) => (ctx.real ? realAnalytics(ctx, 'link-report') : ok({ links: [{ url: 'https://example.test/', total: ctx.marketing.campaign(id(ctx)).stats.clicked }] })),
  },
  {
    method: 'GET',
    path: '/campaigns/:id/revenues',
    caps: READ,
    handler: (ctx) => {
      if (ctx.real) return realAnalytics(ctx, 'revenues');
      const s = ctx.marketing.campaign(id(ctx)).stats;
      return ok({ revenues: [{ currency: 'USD', total: s.revenue.toFixed(2), orders: s.orders }] });
    },
  },
  {
    method: 'GET',
    path: '/campaigns/:id/unsubscribers',
    caps: READ,
    handler: (ctx) => (ctx.real ? realAnalytics(ctx, 'unsubscribers') : ok({ unsubscribers: { total: ctx.marketing.campaign(id(ctx)).stats.unsubscribed, data: [] } })),
  },
];

/** Routes of fluentcrm-2.9's campaign screen that the interface lacks. */
export const realCampaignRoutes: RouteDef[] = [{ method: 'GET', path: '/campaigns/:id/overview_stats', caps: READ, handler: overviewStats }];
