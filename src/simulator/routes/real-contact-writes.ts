import type { Taxonomy } from '../catalog.js';
import { CONTACT_STATUSES, isValidEmail } from '../contact-input.js';
import type { RouteCtx, RouteDef, SimResponse } from '../http-types.js';
import { ok } from '../http-types.js';
import type { ContactRec } from '../model.js';
import { criticalError, SimError } from '../sim-error.js';

const WRITE = ['crm_manage_contacts'];

type Body = Record<string, unknown>;

const isObject = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);
const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined || v === null || v === '' ? [] : [v]);
/** What PHP's `empty()` and `array_filter` drop. */
const phpEmpty = (v: unknown): boolean => v === undefined || v === null || v === '' || v === '0' || v === 0 || v === false || (Array.isArray(v) && v.length === 0);

/** Columns of the tags and lists tables a `find_by` may name. */
const FIND_BY = ['id', 'title', 'slug', 'description'] as const;

/**
 * The ids of the tags or lists whose `findBy` column equals one of `values`, compared
 * case-insensitively as MariaDB's collation does. Not captured: another column is the plugin's
 * SQL error, answered like the captured 423 of an unknown ORDER BY column (GET_campaigns_sort_by_bogus).
 */
function segmentIds(ctx: RouteCtx, kind: Taxonomy, values: unknown[], findBy: string): number[] {
  if (values.length === 0) return [];
  const column = FIND_BY.find((c) => c === findBy);
  if (!column) {
    const list = values.map((v) => (typeof v === 'number' ? String(v) : `'${String(v)}'`)).join(', ');
    const message = `Unknown column '${findBy.slice(0, 64)}' in 'WHERE' (SQL: select \`id\` from \`wp_fc_${kind}s\` where \`${findBy.slice(0, 64)}\` in (${list}))`;
    throw new SimError(423, null, message, { status: 423, body: { message } });
  }
  const wanted = new Set(values.map((v) => String(v).toLowerCase()));
  return [...ctx.state.taxonomy(kind).values()].filter((t) => wanted.has(String(t[column]).toLowerCase())).map((t) => t.id);
}

/** A contact as `Subscriber::with('tags', 'lists')` serializes it: no company relations. */
function withSegments(ctx: RouteCtx, c: ContactRec): Body {
  const { company: _company, companies: _companies, ...out } = ctx.ser.contact(c);
  return out;
}

/**
 * POST /subscribers/sync-segments (site-ny captures): attaches `attach` and detaches `detach`
 * (slugs, or the `find_by` column) of `type` tags, else lists, for each id in `subscribers`,
 * through the same write as PUT /subscribers/{id} with attach_tags and the like: pivot rows dated
 * now, counts and webhook events, and updated_at and last_activity untouched (site-ny README,
 * "updated_at vs membership"). Answers those contacts that exist, in id order.
 */
function syncSegments(ctx: RouteCtx): SimResponse {
  const b = ctx.body;
  const kind: Taxonomy = b.type === 'tags' ? 'tag' : 'list';
  const findBy = typeof b.find_by === 'string' && b.find_by !== '' ? b.find_by : 'slug';
  const attach = segmentIds(ctx, kind, asList(b.attach), findBy);
  const detach = segmentIds(ctx, kind, asList(b.detach), findBy);
  // Not captured: the plugin counts `subscribers` for its message, a PHP TypeError unless an array.
  if (!Array.isArray(b.subscribers)) throw criticalError('subscribers must be an array of contact ids.');
  const ids = b.subscribers.map(Number);
  const change = kind === 'tag' ? { attach_tags: attach, detach_tags: detach } : { attach_lists: attach, detach_lists: detach };
  // With nothing matched the plugin touches no contact, known or not.
  const writes = attach.length > 0 || detach.length > 0 ? ids : [];
  for (const id of writes) {
    // Not captured: the plugin changes the contacts before an unknown id, then calls attachTags on
    // Subscriber::find's null, a fatal error.
    if (!Number.isInteger(id) || !ctx.state.contact(id)) throw criticalError(`No contact with id ${String(id).slice(0, 20)}.`);
    ctx.state.updateContact(id, change);
  }
  const rows = [...new Set(ids.filter((id) => Number.isInteger(id) && id > 0))]
    .sort((x, y) => x - y)
    .map((id) => ctx.state.contact(id))
    .filter((c): c is ContactRec => c !== undefined)
    .map((c) => withSegments(ctx, c));
  return ok({ message: `Successfully updated the ${ids.length === 1 ? 'subscriber' : 'subscribers'}.`, subscribers: rows });
}

/** PHP's FILTER_VALIDATE_BOOLEAN, which reads `force_update`. */
function phpBool(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  return ['1', 'true', 'on', 'yes'].includes(
    String(v ?? '')
      .trim()
      .toLowerCase(),
  );
}

/** `contacts` as the plugin's getJson reads it: an array, or a JSON string of one. */
function readContacts(v: unknown): unknown[] {
  if (typeof v === 'string') {
    try {
      return readContacts(JSON.parse(v) as unknown);
    } catch {
      return [];
    }
  }
  return Array.isArray(v) ? v : isObject(v) ? Object.values(v) : [];
}

/** The contact as the plugin's Sanitize::contact leaves it, which `invalids` echoes: sanitize_email gives '' for a non-address, an unknown status is dropped. */
function sanitize(raw: Body): Body {
  const data = { ...raw };
  if (!phpEmpty(data.email)) data.email = isValidEmail(data.email) ? data.email.trim() : '';
  if (!phpEmpty(data.status) && !(CONTACT_STATUSES as readonly unknown[]).includes(data.status)) delete data.status;
  return data;
}

/**
 * One contact of a bulk write, as the plugin's updateOrCreate merges it: empty values are
 * dropped, tags and lists (ids only: it casts them to int) are added, custom field slugs sent at
 * the top level count as custom_values, and a subscribed contact keeps its status unless
 * `force_update` (any other status is replaced). A new contact without a status is subscribed,
 * the column's default (as POST_subscribers_unknown_status shows).
 */
function upsert(ctx: RouteCtx, data: Body, force: boolean): ContactRec {
  const fields: Body = {};
  for (const [k, v] of Object.entries(data)) if (!phpEmpty(v) && !['tags', 'lists', 'custom_values', 'status', '__force_update'].includes(k)) fields[k] = v;
  const ids = (v: unknown): number[] =>
    asList(v)
      .map(Number)
      .filter((n) => Number.isInteger(n) && n > 0);
  const sent = isObject(data.custom_values) ? data.custom_values : Object.fromEntries(ctx.state.customFields.map((f) => [f.slug, data[f.slug]]));
  const custom = Object.fromEntries(Object.entries(sent).filter(([, v]) => !phpEmpty(v)));
  if (Object.keys(custom).length > 0) fields.custom_values = custom;
  const existingId = ctx.state.contacts.findIdByEmail(data.email as string);
  const existing = existingId === undefined ? undefined : ctx.state.contact(existingId);
  const status = phpEmpty(data.status) || (existing?.status === 'subscribed' && !force) ? undefined : data.status;
  if (!existing) return ctx.state.createContact({ ...fields, status: status ?? 'subscribed', tags: ids(data.tags), lists: ids(data.lists) }).contact;
  return ctx.state.updateContact(existing.id, { ...fields, ...(status ? { status } : {}), attach_tags: ids(data.tags), attach_lists: ids(data.lists) }).contact;
}

/**
 * POST /subscribers/bulk-add-update (capture and README): creates or updates each of `contacts`
 * through the simulator's create and update. The plugin reads `wasRecentlyCreated` off the request
 * row instead of the model (the PHP warning per contact the README notes), so every contact is
 * reported under `updated` and `created` stays empty. A contact without a valid email goes to
 * `invalids` as sanitized. Not captured: a field the simulator's create or update refuses (a
 * malformed date_of_birth) answers as POST /subscribers does, after the contacts before it.
 */
function bulkAddUpdate(ctx: RouteCtx): SimResponse {
  const force = phpBool(ctx.body.force_update);
  const updated: Body[] = [];
  const invalids: unknown[] = [];
  for (const raw of readContacts(ctx.body.contacts)) {
    const data = isObject(raw) ? sanitize(raw) : raw;
    if (!isObject(data) || phpEmpty(data.email)) {
      invalids.push(data);
      continue;
    }
    const c = upsert(ctx, data, force);
    updated.push({ id: c.id, email: c.email, status: c.status });
  }
  return ok({ message: 'Successfully added/updated the subscribers.', created: [], updated, invalids });
}

/** Contact writes of fluentcrm-2.9 that the interface lacks: its admin screens' bulk edits. */
export const realContactWriteRoutes: RouteDef[] = [
  { method: 'POST', path: '/subscribers/sync-segments', caps: WRITE, handler: syncSegments },
  { method: 'POST', path: '/subscribers/bulk-add-update', caps: WRITE, handler: bulkAddUpdate },
];
