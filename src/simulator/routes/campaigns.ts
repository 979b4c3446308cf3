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
  const data = rows.slice(offset, offset + paging.perPage).map((c) => campaignJson(ctx.ser, c, stats));
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
  const s = c.stats;
  const pending = Math.max(0, c.recipientsCount - s.sent);
  const stat = [{ status: 'sent', total: s.delivered }, { status: 'bounced', total: s.bounced }, ...(pending > 0 && c.status !== 'draft' ? [{ status: 'pending', total: pending }] : [])].filter(
    (x) => x.total > 0,
  );
  const campaign = {
    ...campaignJson(ctx.ser, c),
    sent_by: 'simulator',
    open_tracking_status: 'yes',
    click_tracking_status: 'yes',
    scheduling_range: { start: null, end: null },
  };
  const archived = c.status === 'archived';
  return ok({
    current_timestamp: ctx.ser.ts(ctx.state.now),
    stat,
    campaign,
    sent_count: s.sent,
    analytics: archived ? { open: { total: s.opened, subtitle: 'Opened' }, click: { total: s.clicked, subtitle: 'Clicked' } } : ctx.real ? [] : {},
    subject_analytics: ctx.real ? [] : {},
  });
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
  { method: 'GET', path: '/campaigns/:id/estimated-recipients-count', caps: READ, handler: (ctx) => ok({ count: ctx.marketing.campaign(id(ctx)).recipientsCount }) },
  {
    method: 'GET',
    path: '/campaigns/:id/emails',
    caps: READ,
    handler: (ctx) => {
      const c = ctx.marketing.campaign(id(ctx));
      const paging = readPaging(ctx, 10);
      return ok({ emails: paginator(ctx, paging, 0, []), campaign_id: c.id });
    },
  },
  { method: 'GET', path: '/campaigns/:id/link-report', caps: READ, handler: (ctx) => ok({ links: [{ url: 'https://example.test/', total: ctx.marketing.campaign(id(ctx)).stats.clicked }] }) },
  {
    method: 'GET',
    path: '/campaigns/:id/revenues',
    caps: READ,
    handler: (ctx) => {
      const s = ctx.marketing.campaign(id(ctx)).stats;
      return ok({ revenues: [{ currency: 'USD', total: s.revenue.toFixed(2), orders: s.orders }] });
    },
  },
  { method: 'GET', path: '/campaigns/:id/unsubscribers', caps: READ, handler: (ctx) => ok({ unsubscribers: { total: ctx.marketing.campaign(id(ctx)).stats.unsubscribed, data: [] } }) },
];
