import type { RouteCtx, SimResponse } from '../http-types.js';
import { ok } from '../http-types.js';
import { SimError } from '../sim-error.js';

const titled = (s: string): { id: string; slug: string; title: string } => ({ id: s, slug: s, title: s[0]?.toUpperCase() + s.slice(1) });
const byTitle = (a: { title: string }, b: { title: string }): number => a.title.localeCompare(b.title);

/** The option lists fluentcrm-2.9 offers (fixtures GET_reports_options_fields_*), one builder per field name. */
const REAL_FIELDS: Record<string, (ctx: RouteCtx) => unknown> = {
  tags: (ctx) => [...ctx.state.tags.values()].sort(byTitle).map((t) => ({ id: t.id, slug: t.slug, title: t.title, value: String(t.id), label: t.title })),
  lists: (ctx) => [...ctx.state.lists.values()].sort(byTitle).map((t) => ({ id: t.id, slug: t.slug, title: t.title })),
  statuses: () => ['subscribed', 'pending', 'unsubscribed', 'transactional', 'bounced', 'complained', 'spammed'].map(titled),
  editable_statuses: () => ['subscribed', 'pending', 'unsubscribed', 'transactional'].map(titled),
  contact_types: () => ['lead', 'customer'].map(titled),
  custom_fields: (ctx) =>
    ctx.state.customFields.map((f) => ({ label: f.label, slug: f.slug, type: f.type, field_key: f.fieldKey, ...(f.options ? { options: [...f.options] } : {}), group: 'default' })),
  companies: (ctx) => [...ctx.state.companies.values()].sort((a, b) => b.id - a.id).map((c) => ({ id: c.id, title: c.name })),
  campaigns: (ctx) => [...ctx.marketing.campaigns.values()].sort((a, b) => b.id - a.id).map((c) => ({ id: c.id, title: c.title })),
  automation_funnels: (ctx) => [...ctx.marketing.funnels.values()].sort((a, b) => b.id - a.id).map((f) => ({ id: f.id, title: `${f.title} (${f.status})`, status: f.status })),
};

/**
 * GET /reports/options. Real mode: `fields` is required (422 without it) and the answer has the
 * requested lists in the order asked, sorted and labelled as captured (tags and lists by title,
 * the rest newest first, automation titles suffixed with their status). Spec mode: every list
 * when `fields` is absent.
 */
export function options(ctx: RouteCtx): SimResponse {
  const fields = (ctx.query.get('fields') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (ctx.real) {
    if (fields.length === 0) throw new SimError(400, 'rest_invalid_param', 'Missing requested fields field.', { status: 422, body: { message: 'Missing requested fields field.' } });
    const out: Record<string, unknown> = {};
    for (const f of fields) if (Object.hasOwn(REAL_FIELDS, f)) out[f] = REAL_FIELDS[f]!(ctx);
    return ok({ options: out });
  }
  const want = (k: string): boolean => fields.length === 0 || fields.includes(k);
  const out: Record<string, unknown> = {};
  if (want('tags')) out.tags = [...ctx.state.tags.values()].map((t) => ({ id: t.id, slug: t.slug, title: t.title, value: String(t.id), label: t.title }));
  if (want('lists')) out.lists = [...ctx.state.lists.values()].map((t) => ({ id: t.id, slug: t.slug, title: t.title }));
  if (want('statuses')) out.statuses = ['subscribed', 'pending', 'unsubscribed', 'bounced', 'complained'].map(titled);
  if (want('contact_types')) out.contact_types = ['lead', 'customer'].map(titled);
  if (want('custom_fields'))
    out.custom_fields = ctx.state.customFields.map((f) => ({ label: f.label, slug: f.slug, type: f.type, field_key: f.fieldKey, ...(f.options ? { options: f.options } : {}) }));
  if (want('campaigns')) out.campaigns = [...ctx.marketing.campaigns.values()].map((c) => ({ id: c.id, title: c.title }));
  if (want('automation_funnels')) out.automation_funnels = [...ctx.marketing.funnels.values()].map((f) => ({ id: f.id, title: f.title }));
  return ok({ options: out });
}
