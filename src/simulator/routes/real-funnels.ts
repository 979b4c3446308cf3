import type { RouteCtx, RouteDef, SimResponse } from '../http-types.js';
import { ok } from '../http-types.js';
import { funnelJson, funnelSubscriberJson, stepJson } from '../marketing-serialize.js';
import type { FunnelSubscriberRec } from '../model.js';
import { paginator, readPaging } from '../paging.js';

const READ = ['crm_read_funnels', 'crm_write_funnels'];

/** A page of funnel-subscriber rows, newest first, serialized by `row`. */
function page(ctx: RouteCtx, rows: FunnelSubscriberRec[], row: (s: FunnelSubscriberRec) => Record<string, unknown> | undefined): Record<string, unknown> {
  const paging = readPaging(ctx, 15);
  rows.sort((a, b) => b.id - a.id);
  const offset = (paging.page - 1) * paging.perPage;
  const data = rows
    .slice(offset, offset + paging.perPage)
    .map(row)
    .filter((x) => x !== undefined);
  return paginator(ctx, paging, rows.length, data);
}

/** The contact as a funnel-subscriber row embeds it: without tags, lists and companies. */
function bareContact(ctx: RouteCtx, id: number): Record<string, unknown> | null {
  const c = ctx.state.contact(id);
  if (!c) return null;
  const out = ctx.ser.contact(c);
  for (const k of ['tags', 'lists', 'company', 'companies']) delete out[k];
  return out;
}

/** GET /funnels/subscriber/{contact}/automations: the contact's runs in every funnel, each with its funnel (site-ny capture). */
function automations(ctx: RouteCtx): SimResponse {
  const contactId = Number(ctx.params.id);
  const rows = [...ctx.marketing.funnelSubscribers.values()].filter((s) => s.subscriberId === contactId);
  return ok({
    automations: page(ctx, rows, (s) => {
      const f = ctx.marketing.funnels.get(s.funnelId);
      if (!f) return undefined;
      const { subscriber: _s, ...out } = funnelSubscriberJson(ctx.ser, s, f, null, { funnel: true });
      return out;
    }),
  });
}

/** GET /funnels/all-activities: every funnel's runs, `status` filtering literally as on the per-funnel listing. */
function allActivities(ctx: RouteCtx): SimResponse {
  const status = ctx.query.get('status');
  const rows = [...ctx.marketing.funnelSubscribers.values()].filter((s) => (status === null || status === '' || s.status === status) && ctx.state.contacts.has(s.subscriberId));
  return ok({
    activities: page(ctx, rows, (s) => {
      const f = ctx.marketing.funnels.get(s.funnelId);
      if (!f) return undefined;
      const funnel = { ...funnelJson(ctx.ser, f), actions: f.steps.map((st) => stepJson(ctx.ser, st)) };
      return { ...funnelSubscriberJson(ctx.ser, s, f, bareContact(ctx, s.subscriberId), { metrics: true }), funnel };
    }),
  });
}

/** Funnel routes of fluentcrm-2.9's admin screens that the interface lacks. */
export const realFunnelRoutes: RouteDef[] = [
  { method: 'GET', path: '/funnels/subscriber/:id/automations', caps: READ, handler: automations },
  { method: 'GET', path: '/funnels/all-activities', caps: READ, handler: allActivities },
];
