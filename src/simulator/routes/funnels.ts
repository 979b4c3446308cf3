import type { RouteCtx, RouteDef, SimResponse } from '../http-types.js';
import { ok } from '../http-types.js';
import { funnelJson, funnelSubscriberJson, stepJson } from '../marketing-serialize.js';
import type { FunnelRec, FunnelSubscriberRec } from '../model.js';
import { paginator, queryArray, readPaging } from '../paging.js';
import { SimError } from '../sim-error.js';
import { stepReportRows } from '../step-report.js';

const READ = ['crm_read_funnels', 'crm_write_funnels'];
const WRITE = ['crm_write_funnels'];
const DELETE = ['crm_delete_funnels'];
const FS_STATUSES = ['all', 'active', 'completed', 'cancelled', 'pending', 'waiting'];

const id = (ctx: RouteCtx): number => Number(ctx.params.id);

function subscribersCount(ctx: RouteCtx, f: FunnelRec): number {
  let n = 0;
  for (const s of ctx.marketing.funnelSubscribers.values()) if (s.funnelId === f.id && ctx.state.contacts.has(s.subscriberId)) n++;
  return n;
}

function list(ctx: RouteCtx): SimResponse {
  const paging = readPaging(ctx, 10);
  const q = ctx.query;
  const search = (q.get('search') ?? '').toLowerCase().slice(0, 200);
  const status = q.get('status');
  const by = q.get('sort_by') ?? 'id';
  const dir = (q.get('sort_type') ?? 'DESC').toUpperCase() === 'ASC' ? 1 : -1;
  const key = (f: FunnelRec): string | number => (by === 'title' ? f.title.toLowerCase() : by === 'created_at' ? f.createdAt : by === 'updated_at' ? f.updatedAt : f.id);
  const withs = queryArray(q, 'with');
  const rows = [...ctx.marketing.funnels.values()].filter((f) => (!search || f.title.toLowerCase().includes(search)) && (!status || status === 'all' || f.status === status));
  rows.sort((a, b) => (key(a) < key(b) ? -dir : key(a) > key(b) ? dir : (a.id - b.id) * dir));
  const offset = (paging.page - 1) * paging.perPage;
  const data = rows
    .slice(offset, offset + paging.perPage)
    .map((f) => funnelJson(ctx.ser, f, { ...(withs.includes('subscribers_count') || ctx.real ? { subscribersCount: subscribersCount(ctx, f) } : {}), sequences: withs.includes('sequences') }));
  // Spec: funnels is an array beside total/per_page/current_page/last_page; real: a paginator.
  const body: Record<string, unknown> = ctx.real
    ? { funnels: paginator(ctx, paging, rows.length, data) }
    : { funnels: data, total: rows.length, per_page: paging.perPage, current_page: paging.page, last_page: Math.max(1, Math.ceil(rows.length / paging.perPage)) };
  if (withs.includes('triggers')) {
    body.triggers = Object.fromEntries([...new Set([...ctx.marketing.funnels.values()].map((f) => f.triggerName))].map((t) => [t, { label: t.replace(/_/g, ' '), category: 'Simulator' }]));
  }
  return ok(body);
}

function matchesStatus(s: FunnelSubscriberRec, status: string, now: number): boolean {
  switch (status) {
    case 'all':
      return true;
    // No step has run yet for this contact.
    case 'pending':
      return s.status === 'active' && s.lastSequenceId === null;
    // Active, with the next step scheduled in the future (a wait step or delay).
    case 'waiting':
      return s.status === 'active' && s.nextExecutionTime !== null && s.nextExecutionTime > now;
    default:
      return status.startsWith('=') ? s.status === status.slice(1) : s.status === status;
  }
}

function subscribers(ctx: RouteCtx): SimResponse {
  const f = ctx.marketing.funnel(id(ctx));
  const paging = readPaging(ctx, 15);
  const q = ctx.query;
  // The interface lists `all` among the filter values; fluentcrm-2.9 filters literally by the
  // status given (`all` matches no row) and returns every row only when no status is sent.
  const given = q.get('status');
  const status = ctx.real ? (given === null || given === '' ? 'all' : `=${given}`) : (given ?? 'all');
  if (!ctx.real && !FS_STATUSES.includes(status)) throw new SimError(400, 'rest_invalid_param', `Invalid parameter(s): status; use ${FS_STATUSES.join(', ')}.`);
  const seqRaw = q.get('sequence_id');
  const sequenceId = seqRaw === null || seqRaw === '' ? undefined : Number(seqRaw);
  if (sequenceId !== undefined && !Number.isInteger(sequenceId)) throw new SimError(400, 'rest_invalid_param', 'Invalid parameter(s): sequence_id; use an integer step id.');
  const search = (q.get('search') ?? '').toLowerCase().slice(0, 200);
  const now = ctx.state.now;
  const rows: FunnelSubscriberRec[] = [];
  for (const s of ctx.marketing.funnelSubscribers.values()) {
    if (s.funnelId !== f.id || !matchesStatus(s, status, now)) continue;
    if (sequenceId !== undefined && !s.metrics.some((m) => m.sequenceId === sequenceId)) continue;
    const c = ctx.state.contact(s.subscriberId);
    if (!c) continue;
    if (search && !`${c.firstName ?? ''} ${c.lastName ?? ''} ${c.email}`.toLowerCase().includes(search)) continue;
    rows.push(s);
  }
  rows.sort((a, b) => b.id - a.id);
  const offset = (paging.page - 1) * paging.perPage;
  const data = rows.slice(offset, offset + paging.perPage).map((s) => {
    const c = ctx.state.contact(s.subscriberId);
    const sub = c ? ctx.ser.bareContact(c) : null;
    return funnelSubscriberJson(ctx.ser, s, f, sub, { metrics: true });
  });
  const withs = queryArray(q, 'with');
  const body: Record<string, unknown> = { funnel_subscribers: paginator(ctx, paging, rows.length, data) };
  if (withs.includes('funnel')) body.funnel = funnelJson(ctx.ser, f);
  if (withs.includes('sequences')) body.sequences = f.steps.map((s) => stepJson(ctx.ser, s));
  return ok(body);
}

function oneSubscriber(ctx: RouteCtx): SimResponse {
  const f = ctx.marketing.funnel(id(ctx));
  const contactId = Number(ctx.params.contactId);
  const s = ctx.marketing.subscriberOf(f.id, contactId);
  const c = ctx.state.contact(contactId);
  if (!s || !c)
    throw new SimError(404, 'rest_post_invalid_id', 'This contact is not in the automation; check the funnel and contact ids.', {
      status: 404,
      body: { message: 'No query results for model [FluentCrm\\App\\Models\\FunnelSubscriber].' },
    });
  return ok({ funnel_subscriber: funnelSubscriberJson(ctx.ser, s, f, ctx.ser.contact(c), { metrics: true, funnel: true }), sequences: f.steps.map((st) => stepJson(ctx.ser, st)) });
}

function report(ctx: RouteCtx): SimResponse {
  const f = ctx.marketing.funnel(id(ctx));
  // fluentcrm-2.9 (site-ny capture): the per-step counts with drop-off, and revenue fields.
  if (ctx.real) return ok({ stats: { metrics: stepReportRows(ctx.marketing, f), total_revenue: 0, total_revenue_formatted: '0.00', revenue_currency: 'USD' } });
  const subs = [...ctx.marketing.funnelSubscribers.values()].filter((s) => s.funnelId === f.id);
  return ok({
    report: {
      total: subs.length,
      active: subs.filter((s) => s.status === 'active').length,
      completed: subs.filter((s) => s.status === 'completed').length,
      cancelled: subs.filter((s) => s.status === 'cancelled').length,
    },
  });
}

/**
 * The interface's funnel writes fluentcrm-2.9 lacks (its route index, GET_wp-json_namespace_fluent-crm_v2):
 * real mode answers them 404 rest_no_route and serves the plugin's own instead (real-funnels.ts).
 */
// The interface's funnel routes that fluentcrm-2.9's route index (GET_wp-json_namespace_fluent-crm_v2) lacks.
const NOT_IN_PLUGIN = new Set([
  'PUT /funnels/:id/status',
  'POST /funnels/:id/subscribers',
  'DELETE /funnels/:id/subscribers/:contactId',
  'POST /funnels/:id/duplicate',
  'GET /funnels/:id/sequences/:sequenceId',
  'GET /funnels/:id/conversion-rates',
]);

export function funnelRoutes(real: boolean): RouteDef[] {
  return real ? routes.filter((r) => !NOT_IN_PLUGIN.has(`${r.method} ${r.path}`)) : routes;
}

const routes: RouteDef[] = [
  { method: 'GET', path: '/funnels', caps: READ, handler: list },
  { method: 'GET', path: '/funnels/:id', caps: READ, handler: (ctx) => ok({ funnel: funnelJson(ctx.ser, ctx.marketing.funnel(id(ctx)), { sequences: true }) }) },
  {
    method: 'PUT',
    path: '/funnels/:id/status',
    caps: WRITE,
    handler: (ctx) => ok({ message: 'Status has been updated', funnel: funnelJson(ctx.ser, ctx.marketing.setFunnelStatus(id(ctx), ctx.body.status)) }),
  },
  { method: 'POST', path: '/funnels/:id/duplicate', caps: WRITE, handler: (ctx) => ok({ message: 'Funnel has been duplicated', funnel: funnelJson(ctx.ser, ctx.marketing.duplicateFunnel(id(ctx))) }) },
  { method: 'DELETE', path: '/funnels/:id', caps: DELETE, handler: (ctx) => (ctx.marketing.deleteFunnel(id(ctx)), ok({ message: 'Funnel has been deleted' })) },
  { method: 'GET', path: '/funnels/:id/subscribers', caps: READ, handler: subscribers },
  {
    method: 'POST',
    path: '/funnels/:id/subscribers',
    caps: WRITE,
    handler: (ctx) => {
      const added = ctx.marketing.addFunnelSubscribers(id(ctx), ctx.body.subscribers);
      return ok({ message: `${added.length} contact(s) added to the automation`, funnel_subscribers: added.map((s) => s.id) });
    },
  },
  {
    method: 'DELETE',
    path: '/funnels/:id/subscribers/:contactId',
    caps: WRITE,
    handler: (ctx) => (ctx.marketing.removeFunnelSubscriber(id(ctx), Number(ctx.params.contactId)), ok({ message: 'Contact has been removed from the automation' })),
  },
  { method: 'GET', path: '/funnels/:id/subscribers/:contactId', caps: READ, handler: oneSubscriber },
  { method: 'GET', path: '/funnels/:id/sequences', caps: READ, handler: (ctx) => ok({ sequences: ctx.marketing.funnel(id(ctx)).steps.map((s) => stepJson(ctx.ser, s)) }) },
  {
    method: 'GET',
    path: '/funnels/:id/sequences/:sequenceId',
    caps: READ,
    handler: (ctx) => {
      const st = ctx.marketing.funnel(id(ctx)).steps.find((s) => s.id === Number(ctx.params.sequenceId));
      if (!st) throw new SimError(404, 'rest_post_invalid_id', 'Invalid sequence ID for this funnel.');
      return ok({ sequence: stepJson(ctx.ser, st) });
    },
  },
  { method: 'GET', path: '/funnels/:id/report', caps: READ, handler: report },
  {
    method: 'GET',
    path: '/funnels/:id/conversion-rates',
    caps: READ,
    handler: (ctx) => {
      const f = ctx.marketing.funnel(id(ctx));
      const subs = [...ctx.marketing.funnelSubscribers.values()].filter((s) => s.funnelId === f.id);
      const done = subs.filter((s) => s.status === 'completed').length;
      return ok({ conversion_rate: subs.length ? Math.round((done / subs.length) * 10_000) / 100 : 0, total: subs.length, completed: done });
    },
  },
];
