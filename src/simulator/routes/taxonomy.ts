import type { RouteCtx, RouteDef, SimResponse } from '../http-types.js';
import { ok } from '../http-types.js';
import type { TaxonomyRec } from '../model.js';
import { paginator, queryBool, readPaging } from '../paging.js';
import type { Taxonomy } from '../state.js';
import { criticalError, SimError } from '../sim-error.js';

const CATS = ['crm_manage_contact_cats'];
const CATS_DELETE = ['crm_manage_contact_cats_delete'];
const READ_CATS = ['crm_manage_contact_cats', 'crm_read_contacts'];

function sorted(ctx: RouteCtx, kind: Taxonomy): { rows: TaxonomyRec[]; counts: boolean } {
  const q = ctx.query;
  const by = q.get('sort_by') ?? 'id';
  const order = (q.get('sort_order') ?? 'DESC').toUpperCase();
  if (!ctx.real) {
    if (!['id', 'title', 'subscribers'].includes(by)) throw new SimError(400, 'rest_invalid_param', 'Invalid parameter(s): sort_by; use id, title or subscribers.');
    if (order !== 'ASC' && order !== 'DESC') throw new SimError(400, 'rest_invalid_param', 'Invalid parameter(s): sort_order; use ASC or DESC.');
  }
  const search = (q.get('search') ?? '').toLowerCase().slice(0, 200);
  const counts = !queryBool(q, 'exclude_counts');
  const c = counts || by === 'subscribers' ? ctx.state.counts() : undefined;
  const prefix = kind === 'tag' ? 't' : 'l';
  const rows = [...ctx.state.taxonomy(kind).values()].filter((t) => !search || `${t.title} ${t.slug} ${t.description}`.toLowerCase().includes(search));
  const dir = order === 'ASC' ? 1 : -1;
  const key = (t: TaxonomyRec): string | number => (by === 'title' ? t.title.toLowerCase() : by === 'subscribers' ? (c?.total.get(`${prefix}:${t.id}`) ?? 0) : t.id);
  rows.sort((a, b) => (key(a) < key(b) ? -dir : key(a) > key(b) ? dir : (a.id - b.id) * dir));
  return { rows, counts };
}

function withCounts(ctx: RouteCtx, kind: Taxonomy, t: TaxonomyRec, counts: boolean): Record<string, unknown> {
  const out = ctx.ser.taxonomy(t, kind);
  if (counts) {
    const c = ctx.state.counts();
    const k = `${kind === 'tag' ? 't' : 'l'}:${t.id}`;
    // fluentcrm-2.9's tags listing carries subscribersCount alone; its lists carry both.
    if (kind === 'list' || !ctx.real) out.totalCount = c.total.get(k) ?? 0;
    out.subscribersCount = c.subscribed.get(k) ?? 0;
  }
  return out;
}

function listTags(ctx: RouteCtx): SimResponse {
  const { rows, counts } = sorted(ctx, 'tag');
  const body: Record<string, unknown> = {};
  if (ctx.real) {
    // fluentcrm-2.9 pages tags (per_page 15) although the spec describes an array.
    const paging = readPaging(ctx, 15);
    const offset = (paging.page - 1) * paging.perPage;
    body.tags = paginator(
      ctx,
      paging,
      rows.length,
      rows.slice(offset, offset + paging.perPage).map((t) => withCounts(ctx, 'tag', t, counts)),
    );
  } else {
    body.tags = rows.map((t) => withCounts(ctx, 'tag', t, counts));
  }
  if (queryBool(ctx.query, 'all_tags')) {
    body.all_tags = [...ctx.state.tags.values()].sort((a, b) => a.id - b.id).map((t) => ({ id: ctx.real ? String(t.id) : t.id, title: t.title, slug: t.slug }));
  }
  return ok(body);
}

function listLists(ctx: RouteCtx): SimResponse {
  const { rows, counts } = sorted(ctx, 'list');
  if (!ctx.real) return ok({ lists: rows.map((t) => withCounts(ctx, 'list', t, counts)) });
  // fluentcrm-2.9 answers a plain array beside `pagination.total` (no paginator), yet serves only
  // the page asked for (GET_lists_per_page_2_page_2: the third list alone, total 3). Without
  // per_page and page it sent every list; whether a default page size applies was not captured.
  const paged = ctx.query.has('per_page') || ctx.query.has('page');
  const paging = paged ? readPaging(ctx, 15) : { page: 1, perPage: rows.length };
  const offset = (paging.page - 1) * paging.perPage;
  return ok({ lists: rows.slice(offset, offset + paging.perPage).map((t) => withCounts(ctx, 'list', t, counts)), pagination: { total: rows.length } });
}

function getTag(ctx: RouteCtx): SimResponse {
  const t = ctx.state.tags.get(Number(ctx.params.id));
  if (!t) {
    if (ctx.real) return ok({ tag: null });
    throw new SimError(404, 'rest_post_invalid_id', 'Invalid tag ID; check the id (it may have been deleted).');
  }
  return ok({ tag: ctx.ser.taxonomy(t, 'tag') });
}

function getList(ctx: RouteCtx): SimResponse {
  const t = ctx.state.lists.get(Number(ctx.params.id));
  if (!t) {
    if (ctx.real) return { status: 200, body: null, raw: '' };
    throw new SimError(404, 'rest_post_invalid_id', 'Invalid list ID; check the id (it may have been deleted).');
  }
  // fluentcrm-2.9 sends the bare list row, without the listing's member counts (GET_lists_id).
  return ok(ctx.real ? ctx.ser.taxonomy(t, 'list') : withCounts(ctx, 'list', t, true));
}

const create =
  (kind: Taxonomy) =>
  (ctx: RouteCtx): SimResponse => {
    const rec = ctx.state.createTaxonomy(kind, ctx.body);
    const out = { title: rec.title, slug: rec.slug, description: rec.description, updated_at: ctx.ser.ts(rec.updatedAt), created_at: ctx.ser.ts(rec.createdAt), id: rec.id };
    const body: Record<string, unknown> = kind === 'tag' && !ctx.real ? { tags: out } : { lists: out };
    if (ctx.real) body.item = out;
    body.message = `Successfully saved the ${kind}.`;
    return ok(body);
  };

const update =
  (kind: Taxonomy) =>
  (ctx: RouteCtx): SimResponse => {
    const rec = ctx.state.updateTaxonomy(kind, Number(ctx.params.id), ctx.body);
    // Spec: the id as a string under `tags` / `lists`; fluentcrm-2.9 answers `lists: 1` for both.
    const body: Record<string, unknown> = ctx.real ? { lists: 1 } : { [kind === 'tag' ? 'tags' : 'lists']: String(rec.id) };
    body.message = `Successfully saved the ${kind}.`;
    return ok(body);
  };

const remove =
  (kind: Taxonomy) =>
  (ctx: RouteCtx): SimResponse => {
    const id = Number(ctx.params.id);
    if (ctx.real && !ctx.state.taxonomy(kind).has(id)) {
      if (kind === 'list') return ok({ message: 'Successfully removed the list.' });
      throw criticalError('Unknown tag.');
    }
    ctx.state.deleteTaxonomy(kind, id);
    return ok({ message: `Successfully removed the ${kind}.` });
  };

export const taxonomyRoutes: RouteDef[] = [
  { method: 'GET', path: '/tags', caps: READ_CATS, handler: listTags },
  { method: 'POST', path: '/tags', caps: CATS, handler: create('tag') },
  { method: 'GET', path: '/tags/:id', caps: READ_CATS, handler: getTag, bench: false },
  { method: 'PUT', path: '/tags/:id', caps: CATS, handler: update('tag') },
  { method: 'DELETE', path: '/tags/:id', caps: CATS_DELETE, handler: remove('tag') },
  { method: 'GET', path: '/lists', caps: READ_CATS, handler: listLists, bench: false },
  { method: 'POST', path: '/lists', caps: CATS, handler: create('list'), bench: false },
  { method: 'GET', path: '/lists/:id', caps: READ_CATS, handler: getList, bench: false },
  { method: 'PUT', path: '/lists/:id', caps: CATS, handler: update('list'), bench: false },
  { method: 'DELETE', path: '/lists/:id', caps: CATS_DELETE, handler: remove('list'), bench: false },
];
