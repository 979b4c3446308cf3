import { checkId, checkPageQuery, type ClientContext } from '../client-context.js';
import { nullIfNotFound } from '../not-found.js';
import { asObject, parsePage, parseRecord } from '../parse.js';
import type { Page, Sequence, SequenceSubscriber, Template } from '../types.js';

export interface TemplatesApi {
  listPage(q: { page: number; perPage: number; search?: string; types?: string[]; order?: 'asc' | 'desc' }): Promise<Page<Template>>;
}

export interface SequencesApi {
  listPage(q: { page: number; perPage: number; search?: string; withStats?: boolean }): Promise<Page<Sequence>>;
  get(id: number, opts?: { with?: Array<'sequence_emails' | 'email_stats'> }): Promise<Sequence | null>;
  subscribersPage(id: number, q: { page: number; perPage: number }): Promise<Page<SequenceSubscriber>>;
}

export function createTemplatesApi(ctx: ClientContext): TemplatesApi {
  return {
    async listPage(q) {
      checkPageQuery(q, 'templates.listPage');
      const dir = q.order;
      const res = await ctx.exec({
        method: 'GET',
        path: '/templates',
        query: {
          page: q.page,
          per_page: q.perPage,
          search: q.search,
          types: q.types,
          // Two names are documented for the sort parameters; send both.
          order_by: dir ? 'ID' : undefined,
          order_type: dir,
          orderBy: dir ? 'ID' : undefined,
          order: dir,
        },
      });
      return parsePage(res, ['templates'], ctx.schemas.Template, q, 'GET /templates');
    },
  };
}

export function createSequencesApi(ctx: ClientContext): SequencesApi {
  const { exec, schemas } = ctx;
  return {
    async listPage(q) {
      checkPageQuery(q, 'sequences.listPage');
      const res = await exec({
        method: 'GET',
        path: '/sequences',
        query: { page: q.page, per_page: q.perPage, search: q.search, with: q.withStats ? ['stats'] : undefined },
      });
      return parsePage(res, ['sequences'], schemas.Sequence, q, 'GET /sequences');
    },
    async get(id, opts = {}) {
      checkId(id, 'sequence id');
      return nullIfNotFound(async () => {
        const route = 'GET /sequences/{id}';
        const o = asObject(await exec({ method: 'GET', path: `/sequences/${id}`, query: { with: opts.with } }), route);
        const rec = o.sequence && typeof o.sequence === 'object' ? o.sequence : 'id' in o ? o : null;
        return rec ? parseRecord(schemas.Sequence, rec, route) : null;
      });
    },
    async subscribersPage(id, q) {
      checkId(id, 'sequence id');
      checkPageQuery(q, 'sequences.subscribersPage');
      const res = await exec({ method: 'GET', path: `/sequences/${id}/subscribers`, query: { page: q.page, per_page: q.perPage } });
      return parsePage(res, ['subscribers', 'sequence_subscribers'], schemas.SequenceSubscriber, q, 'GET /sequences/{id}/subscribers');
    },
  };
}
