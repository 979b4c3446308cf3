import { readSequenceSave, savedSequencesJson } from '../funnel-editor.js';
import type { RouteCtx, RouteDef, SimResponse } from '../http-types.js';
import { ok } from '../http-types.js';
import { funnelJson, funnelSubscriberJson, stepJson } from '../marketing-serialize.js';
import type { FunnelSubscriberRec } from '../model.js';
import { paginator, queryArray, readPaging } from '../paging.js';
import { SimError } from '../sim-error.js';

const READ = ['crm_read_funnels', 'crm_write_funnels'];
const WRITE = ['crm_write_funnels'];

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

/** The contact as a funnel-subscriber row embeds it, or null when it is gone. */
function bareContactOf(ctx: RouteCtx, id: number): Record<string, unknown> | null {
  const c = ctx.state.contact(id);
  return c ? ctx.ser.bareContact(c) : null;
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
      return { ...funnelSubscriberJson(ctx.ser, s, f, bareContactOf(ctx, s.subscriberId), { metrics: true }), funnel };
    }),
  });
}

/**
 * PUT /funnels/{id}: the plugin's status change (the interface's is PUT /funnels/{id}/status, which
 * the plugin lacks). It reads `status`; the answer is not captured: a message, as its other writes.
 */
function setStatus(ctx: RouteCtx): SimResponse {
  const f = ctx.marketing.setFunnelStatus(Number(ctx.params.id), ctx.body.status);
  return ok({ message: `Status has been updated to ${f.status}` });
}

/**
 * DELETE /funnels/{id}/subscribers: the plugin removes the contacts named by `subscriber_ids`
 * (query or body) from the funnel, skipping those not in it; it has no per-contact DELETE. Not
 * captured: the answers follow the plugin's FunnelController (423 is its framework's error status).
 */
function removeSubscribers(ctx: RouteCtx): SimResponse {
  const funnelId = Number(ctx.params.id);
  ctx.marketing.funnel(funnelId);
  const fromBody = Array.isArray(ctx.body.subscriber_ids) ? ctx.body.subscriber_ids.map(String) : [];
  const ids = [...queryArray(ctx.query, 'subscriber_ids'), ...fromBody].map(Number).filter((n) => Number.isInteger(n) && n > 0);
  if (ids.length === 0) {
    throw new SimError(400, 'rest_missing_callback_param', 'Missing parameter(s): subscriber_ids.', { status: 423, body: { message: 'subscriber_ids parameter is required' } });
  }
  for (const contactId of new Set(ids)) if (ctx.marketing.subscriberOf(funnelId, contactId)) ctx.marketing.removeFunnelSubscriber(funnelId, contactId);
  return ok({ message: 'Subscribed has been removed from this automation funnel' });
}

/**
 * GET /funnels/{id}/email_reports and /syncable-counts, the funnel screen's panels: the site-ny
 * capture answers `{email_sequences: []}` and `{syncable_count: 0}` for a funnel with contacts in
 * it. What a listed email sequence holds is not captured, so every funnel answers as captured
 * (the simulator's funnels send no real email); an unknown funnel is the plugin's 404.
 */
function emailReports(ctx: RouteCtx): SimResponse {
  ctx.marketing.funnel(Number(ctx.params.id));
  return ok({ email_sequences: [] });
}

function syncableCounts(ctx: RouteCtx): SimResponse {
  ctx.marketing.funnel(Number(ctx.params.id));
  return ok({ syncable_count: 0 });
}

/**
 * POST /funnels: the plugin validates `funnel.title` and `funnel.trigger_name` (required) and
 * answers the model it created: a draft with empty settings and conditions, `created_by` an int,
 * and the description kept apart (POST_funnels). A missing field is not captured: the validator's
 * `required` map, as POST_tags_missing_title.
 */
function createFunnel(ctx: RouteCtx): SimResponse {
  const input = (ctx.body.funnel !== null && typeof ctx.body.funnel === 'object' ? ctx.body.funnel : {}) as Record<string, unknown>;
  const text = (k: string): string => (typeof input[k] === 'string' ? (input[k] as string).trim().slice(0, 190) : '');
  const missing: Record<string, unknown> = {};
  if (!text('title')) missing.title = { required: 'The title field is required.' };
  if (!text('trigger_name')) missing.trigger_name = { required: 'The trigger name field is required.' };
  if (Object.keys(missing).length > 0) throw new SimError(400, 'rest_missing_callback_param', `Missing parameter(s): ${Object.keys(missing).join(', ')}.`, { status: 422, body: missing });
  const description = typeof input.description === 'string' ? input.description.slice(0, 10_000) : '';
  const f = ctx.marketing.createFunnel(text('title'), text('trigger_name'), description);
  const when = ctx.ser.ts(f.createdAt);
  return ok({
    funnel: { title: f.title, trigger_name: f.triggerName, status: f.status, settings: [], conditions: [], created_by: f.createdBy, type: 'funnels', updated_at: when, created_at: when, id: f.id },
    message: 'Funnel has been created. Please configure now',
  });
}

/** POST /funnels/{id}/sequences: the editor's save (funnel-book.ts), answered with the steps as saved (POST_funnels_id_sequences). */
function saveSequences(ctx: RouteCtx): SimResponse {
  const id = Number(ctx.params.id);
  ctx.marketing.funnel(id);
  const f = ctx.marketing.saveFunnelSequences(id, readSequenceSave(ctx.body));
  return ok({ sequences: savedSequencesJson(ctx.ser, f.steps), message: 'Sequence successfully updated' });
}

/** Funnel routes of fluentcrm-2.9 that the interface lacks: its admin screens' and its own writes. */
export const realFunnelRoutes: RouteDef[] = [
  { method: 'POST', path: '/funnels', caps: WRITE, handler: createFunnel },
  { method: 'POST', path: '/funnels/:id/sequences', caps: WRITE, handler: saveSequences },
  { method: 'GET', path: '/funnels/subscriber/:id/automations', caps: READ, handler: automations },
  { method: 'GET', path: '/funnels/all-activities', caps: READ, handler: allActivities },
  { method: 'GET', path: '/funnels/:id/email_reports', caps: READ, handler: emailReports },
  { method: 'GET', path: '/funnels/:id/syncable-counts', caps: READ, handler: syncableCounts },
  { method: 'PUT', path: '/funnels/:id', caps: WRITE, handler: setStatus },
  { method: 'DELETE', path: '/funnels/:id/subscribers', caps: WRITE, handler: removeSubscribers },
];
