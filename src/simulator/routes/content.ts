import type { RouteCtx, RouteDef, SimResponse } from '../http-types.js';
import { ok } from '../http-types.js';
import { BLANK_MAILER, sequenceEmailJson, sequenceJson, templateJson } from '../marketing-serialize.js';
import type { MailerSettings, SequenceRec, TemplateRec } from '../model.js';
import { paginator, queryArray, readPaging } from '../paging.js';
import { invalidParam, SimError } from '../sim-error.js';

const EMAILS_READ = ['crm_read_emails', 'crm_manage_emails'];
const EMAILS_WRITE = ['crm_manage_emails'];
const TEMPLATES = ['crm_manage_email_templates'];

const id = (ctx: RouteCtx): number => Number(ctx.params.id);

function listTemplates(ctx: RouteCtx): SimResponse {
  const paging = readPaging(ctx, 15);
  const q = ctx.query;
  const types = queryArray(q, 'types');
  const statuses = types.length > 0 ? types : ['publish', 'draft'];
  const search = (q.get('search') ?? '').toLowerCase().slice(0, 200);
  // Two names for the sort parameters are documented; both are read.
  const by = q.get('order_by') ?? q.get('orderBy') ?? 'ID';
  const dir = (q.get('order_type') ?? q.get('order') ?? 'desc').toLowerCase() === 'asc' ? 1 : -1;
  const key = (t: TemplateRec): string | number => (by === 'post_title' || by === 'title' ? t.title.toLowerCase() : by === 'post_modified' ? t.updatedAt : t.id);
  const rows = [...ctx.marketing.templates.values()].filter((t) => statuses.includes(t.status) && (!search || t.title.toLowerCase().includes(search)));
  rows.sort((a, b) => (key(a) < key(b) ? -dir : key(a) > key(b) ? dir : (a.id - b.id) * dir));
  const offset = (paging.page - 1) * paging.perPage;
  return ok({
    templates: paginator(
      ctx,
      paging,
      rows.length,
      rows.slice(offset, offset + paging.perPage).map((t) => templateJson(ctx.ser, t)),
    ),
  });
}

function listSequences(ctx: RouteCtx): SimResponse {
  const paging = readPaging(ctx, 15);
  const q = ctx.query;
  const search = (q.get('search') ?? '').toLowerCase().slice(0, 200);
  const by = q.get('orderBy') ?? q.get('order_by') ?? 'id';
  const dir = (q.get('order') ?? q.get('order_type') ?? 'DESC').toUpperCase() === 'ASC' ? 1 : -1;
  const key = (s: SequenceRec): string | number => (by === 'title' ? s.title.toLowerCase() : by === 'created_at' ? s.createdAt : s.id);
  const rows = [...ctx.marketing.sequences.values()].filter((s) => !search || s.title.toLowerCase().includes(search));
  rows.sort((a, b) => (key(a) < key(b) ? -dir : key(a) > key(b) ? dir : (a.id - b.id) * dir));
  const stats = queryArray(q, 'with').includes('stats');
  const offset = (paging.page - 1) * paging.perPage;
  return ok({
    sequences: paginator(
      ctx,
      paging,
      rows.length,
      rows.slice(offset, offset + paging.perPage).map((s) => sequenceJson(ctx.ser, s, stats)),
    ),
  });
}

function getSequence(ctx: RouteCtx): SimResponse {
  const s = ctx.marketing.sequence(id(ctx));
  const withs = queryArray(ctx.query, 'with');
  const body: Record<string, unknown> = { sequence: sequenceJson(ctx.ser, s, false) };
  if (withs.includes('sequence_emails')) body.sequence_emails = s.emails.map((e) => sequenceEmailJson(s, e));
  if (withs.includes('email_stats')) body.email_stats = Object.fromEntries(s.emails.map((e) => [e.id, { sent: s.subscriberIds.length, opens: 0, clicks: 0 }]));
  return ok(body);
}

function sequenceSubscribers(ctx: RouteCtx): SimResponse {
  const s = ctx.marketing.sequence(id(ctx));
  const paging = readPaging(ctx, 15);
  const live = s.subscriberIds.filter((x) => ctx.state.contacts.has(x));
  const offset = (paging.page - 1) * paging.perPage;
  const data = live.slice(offset, offset + paging.perPage).map((cid, i) => {
    const c = ctx.state.contact(cid);
    return { id: offset + i + 1, campaign_id: ctx.ser.num(s.id), subscriber_id: ctx.ser.num(cid), status: 'active', subscriber: c ? ctx.ser.contact(c) : null };
  });
  return ok({ subscribers: paginator(ctx, paging, live.length, data) });
}

/**
 * PUT /sequences/{id}: `title` and `settings.mailer_settings` (the five strings; those not sent
 * keep their value). A mailer field that is not a string is a 400, before anything changes.
 */
function updateSequence(ctx: RouteCtx): SimResponse {
  const s = ctx.marketing.sequence(id(ctx));
  const settings = ctx.body.settings;
  const sent = typeof settings === 'object' && settings !== null ? (settings as Record<string, unknown>).mailer_settings : undefined;
  let mailer: MailerSettings | undefined;
  if (sent !== undefined) {
    if (typeof sent !== 'object' || sent === null || Array.isArray(sent)) throw invalidParam('settings', 'settings.mailer_settings must be an object of strings.');
    const m = sent as Record<string, unknown>;
    mailer = { ...(s.mailer ?? BLANK_MAILER) };
    for (const k of Object.keys(BLANK_MAILER) as (keyof MailerSettings)[]) {
      if (m[k] === undefined) continue;
      if (typeof m[k] !== 'string') throw invalidParam('settings', `settings.mailer_settings.${k} must be a string.`);
      mailer[k] = (m[k] as string).slice(0, 190);
    }
  }
  if (typeof ctx.body.title === 'string' && ctx.body.title.trim()) s.title = ctx.body.title.trim().slice(0, 190);
  if (mailer) s.mailer = mailer;
  s.updatedAt = ctx.state.now;
  return ok({ sequence: sequenceJson(ctx.ser, s, false), message: 'Sequence has been updated' });
}

function bulk(ctx: RouteCtx): SimResponse {
  const ids = ctx.body.sequence_ids;
  if (!Array.isArray(ids) || ids.length === 0)
    throw new SimError(400, 'rest_missing_callback_param', 'Missing parameter(s): sequence_ids; send an array of sequence ids.', {
      status: 422,
      body: { sequence_ids: { required: 'Sequence ids are required' } },
    });
  let deleted = 0;
  for (const x of ids.slice(0, 10_000)) if (ctx.marketing.sequences.delete(Number(x))) deleted++;
  return ok({ message: `${deleted} sequence(s) deleted` });
}

export function contentRoutes(real: boolean): RouteDef[] {
  const routes: RouteDef[] = [
    { method: 'GET', path: '/templates', caps: TEMPLATES, handler: listTemplates },
    {
      method: 'POST',
      path: '/templates',
      caps: TEMPLATES,
      handler: (ctx) => ok({ template: templateJson(ctx.ser, ctx.marketing.saveTemplate(undefined, ctx.body)), message: 'Template has been created' }),
    },
    {
      method: 'PUT',
      path: '/templates/:id',
      caps: TEMPLATES,
      handler: (ctx) => ok({ template: templateJson(ctx.ser, ctx.marketing.saveTemplate(id(ctx), ctx.body)), message: 'Template has been updated' }),
    },
    {
      method: 'DELETE',
      path: '/templates/:id',
      caps: TEMPLATES,
      handler: (ctx) => {
        ctx.marketing.template(id(ctx));
        ctx.marketing.templates.delete(id(ctx));
        return ok({ message: 'Template has been deleted' });
      },
    },
    {
      method: 'POST',
      path: '/templates/duplicate/:id',
      caps: TEMPLATES,
      handler: (ctx) => ok({ template: templateJson(ctx.ser, ctx.marketing.duplicateTemplate(id(ctx))), message: 'Template has been duplicated' }),
    },
  ];
  // Email sequences are the pro add-on's: the free plugin's route index (GET_wp-json_namespace_fluent-crm_v2)
  // has no /sequences route, so real mode answers them 404 rest_no_route, as the captured site would.
  return real ? routes : [...routes, ...sequenceRoutes];
}

const sequenceRoutes: RouteDef[] = [
  { method: 'GET', path: '/sequences', caps: EMAILS_READ, handler: listSequences },
  { method: 'POST', path: '/sequences/do-bulk-action', caps: ['crm_manage_email_delete'], handler: bulk },
  { method: 'GET', path: '/sequences/:id', caps: EMAILS_READ, handler: getSequence },
  { method: 'GET', path: '/sequences/:id/subscribers', caps: EMAILS_READ, handler: sequenceSubscribers },
  {
    method: 'GET',
    path: '/sequences/subscriber/:id/sequences',
    caps: EMAILS_READ,
    handler: (ctx) => {
      // An unknown contact is the interface's 404, as on the contact's other routes.
      ctx.state.requireContact(id(ctx));
      return ok({ sequences: [...ctx.marketing.sequences.values()].filter((s) => s.subscriberIds.includes(id(ctx))).map((s) => sequenceJson(ctx.ser, s, false)) });
    },
  },
  {
    method: 'POST',
    path: '/sequences/:id/duplicate',
    caps: EMAILS_WRITE,
    handler: (ctx) => ok({ sequence: sequenceJson(ctx.ser, ctx.marketing.duplicateSequence(id(ctx)), false), message: 'Sequence has been duplicated' }),
  },
  {
    method: 'DELETE',
    path: '/sequences/:id',
    caps: ['crm_manage_email_delete'],
    handler: (ctx) => {
      ctx.marketing.sequence(id(ctx));
      ctx.marketing.sequences.delete(id(ctx));
      return ok({ message: 'Sequence has been deleted' });
    },
  },
  { method: 'PUT', path: '/sequences/:id', caps: EMAILS_READ.concat(EMAILS_WRITE), handler: updateSequence },
];
