import type { RouteCtx, RouteDef, SimResponse } from '../http-types.js';
import { ok } from '../http-types.js';
import type { IncomingWebhookRec } from '../incoming-webhooks.js';
import { SimError } from '../sim-error.js';

const SETTINGS = ['crm_manage_settings'];

const noRoute = (): SimError => new SimError(404, 'rest_no_route', 'No route was found matching the URL and request method.');

/** Real mode: the incoming webhook as `GET /webhooks` lists it (site-ny/GET_webhooks.json). */
function incomingJson(ctx: RouteCtx, h: IncomingWebhookRec): Record<string, unknown> {
  return { id: h.id, object_type: 'webhook', object_id: null, key: h.key, value: structuredClone(h.value), created_at: ctx.ser.ts(h.createdAt), updated_at: ctx.ser.ts(h.updatedAt) };
}

function incomingList(ctx: RouteCtx): Record<string, unknown>[] {
  return [...ctx.webhooks.incoming.hooks.values()].map((h) => incomingJson(ctx, h));
}

/** The contact fields an incoming webhook can map (GET /webhooks `fields`, the same on both captured sites). */
const MAPPABLE_FIELDS: [string, string][] = [
  ['prefix', 'Name Prefix'],
  ['first_name', 'First Name'],
  ['last_name', 'Last Name'],
  ['full_name', 'Full Name'],
  ['email', 'Email'],
  ['timezone', 'Timezone'],
  ['address_line_1', 'Address Line 1'],
  ['address_line_2', 'Address Line 2'],
  ['city', 'City'],
  ['state', 'State'],
  ['postal_code', 'Postal Code'],
  ['country', 'Country'],
  ['ip', 'IP Address'],
  ['phone', 'Phone'],
  ['source', 'Source'],
  ['date_of_birth', 'Date of Birth (Y-m-d Format only)'],
  ['company_id', 'Primary Company'],
];

/** Real mode: the listing carries the webhook form's choices beside the webhooks (GET_webhooks). */
function formChoices(ctx: RouteCtx): Record<string, unknown> {
  const byId = <T extends { id: number }>(m: Map<number, T>): T[] => [...m.values()].sort((a, b) => a.id - b.id);
  return {
    fields: MAPPABLE_FIELDS.map(([key, field]) => ({ key, field })),
    custom_fields: ctx.state.customFields.map((f) => ({ key: f.slug, field: f.label })),
    lists: byId(ctx.state.lists).map((t) => ctx.ser.taxonomy(t, 'list')),
    tags: byId(ctx.state.tags).map((t) => ctx.ser.taxonomy(t, 'tag')),
    companies: byId(ctx.state.companies).map((c) => ctx.ser.company(c)),
  };
}

function list(ctx: RouteCtx): SimResponse {
  if (ctx.webhooks.incomingOnly) return ok({ webhooks: incomingList(ctx), ...formChoices(ctx) });
  return ok({ webhooks: [...ctx.webhooks.hooks.values()].map((h) => ctx.webhooks.json(h)) });
}

function create(ctx: RouteCtx): SimResponse {
  if (ctx.webhooks.incomingOnly) {
    const h = ctx.webhooks.incoming.create(ctx.body, ctx.origin);
    return ok({ id: h.id, webhook: structuredClone(h.value), webhooks: incomingList(ctx), message: 'Successfully created the WebHook' });
  }
  const h = ctx.webhooks.create(ctx.body);
  return ok({ id: h.id, webhook: ctx.webhooks.json(h), message: 'Successfully created the WebHook' });
}

function update(ctx: RouteCtx): SimResponse {
  if (ctx.webhooks.incomingOnly) {
    ctx.webhooks.incoming.update(Number(ctx.params.id), ctx.body);
    return ok({ webhooks: incomingList(ctx), message: 'Successfully updated the webhook' });
  }
  const h = ctx.webhooks.update(Number(ctx.params.id), ctx.body);
  return ok({ webhook: ctx.webhooks.json(h), message: 'Successfully updated the webhook' });
}

function remove(ctx: RouteCtx): SimResponse {
  if (ctx.webhooks.incomingOnly) {
    ctx.webhooks.incoming.delete(Number(ctx.params.id));
    return ok({ webhooks: incomingList(ctx), message: 'Successfully deleted the webhook' });
  }
  ctx.webhooks.delete(Number(ctx.params.id));
  return ok({ webhooks: [...ctx.webhooks.hooks.values()].map((h) => ctx.webhooks.json(h)), message: 'Successfully deleted the webhook' });
}

async function test(ctx: RouteCtx): Promise<SimResponse> {
  if (ctx.webhooks.incomingOnly) throw noRoute(); // the free plugin has no outbound delivery, hence no test or log
  const d = await ctx.webhooks.test(Number(ctx.params.id));
  return ok({ message: d.status === 'success' ? 'Test payload delivered' : 'Test payload could not be delivered', delivery: ctx.webhooks.deliveryJson(d) });
}

function deliveries(ctx: RouteCtx): SimResponse {
  if (ctx.webhooks.incomingOnly) throw noRoute();
  const id = Number(ctx.params.id);
  ctx.webhooks.require(id);
  const status = ctx.query.get('status');
  if (status !== null && !['success', 'failed', 'pending'].includes(status)) {
    throw new SimError(400, 'rest_invalid_param', 'Invalid parameter(s): status; use success, failed or pending.');
  }
  const perPage = Number(ctx.query.get('per_page') ?? 25);
  const page = Number(ctx.query.get('page') ?? 1);
  if (!Number.isInteger(perPage) || perPage < 1 || perPage > 1000) throw new SimError(400, 'rest_invalid_param', 'Invalid parameter(s): per_page; use 1 to 1000.');
  if (!Number.isInteger(page) || page < 1) throw new SimError(400, 'rest_invalid_param', 'Invalid parameter(s): page; use an integer >= 1.');
  const rows = [...ctx.webhooks.deliveries.values()].filter((d) => d.webhookId === id && (status === null || d.status === status)).sort((a, b) => b.id - a.id);
  const data = rows.slice((page - 1) * perPage, page * perPage).map((d) => ctx.webhooks.deliveryJson(d));
  return ok({ deliveries: data, pagination: { total: rows.length, per_page: perPage, current_page: page, last_page: Math.max(1, Math.ceil(rows.length / perPage)) } });
}

export const webhookRoutes: RouteDef[] = [
  // GET, POST and PUT /webhooks carry __bench as captured (DELETE was not captured).
  { method: 'GET', path: '/webhooks', caps: SETTINGS, handler: list },
  { method: 'POST', path: '/webhooks', caps: SETTINGS, handler: create },
  { method: 'PUT', path: '/webhooks/:id', caps: SETTINGS, handler: update },
  { method: 'DELETE', path: '/webhooks/:id', caps: SETTINGS, handler: remove },
  { method: 'POST', path: '/webhooks/:id/test', caps: SETTINGS, handler: test, bench: false },
  { method: 'GET', path: '/webhooks/:id/deliveries', caps: SETTINGS, handler: deliveries, bench: false },
];
