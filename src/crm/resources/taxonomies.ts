import { checkId, type ClientContext } from '../client-context.js';
import { CrmArgumentError } from '../errors.js';
import { nullIfNotFound } from '../not-found.js';
import { paginate } from '../paginate.js';
import { asObject, parsePage, parseRecord } from '../parse.js';
import type { List, Tag, TaxonomyWrite } from '../types.js';

export interface TaxonomyListQuery {
  search?: string;
  sortBy?: 'id' | 'title' | 'subscribers';
  sortOrder?: 'asc' | 'desc';
  /** Leave out the per-item contact counts (cheaper). */
  excludeCounts?: boolean;
}

export interface TaxonomyApi<T> {
  /** Every item, reading all pages when the server paginates (the real deployment pages tags by 15). */
  list(q?: TaxonomyListQuery): Promise<T[]>;
  /** null when unknown (404, `{tag: null}`, or an empty body as the real deployment sends for lists). */
  get(id: number): Promise<T | null>;
  create(body: TaxonomyWrite): Promise<T>;
  update(id: number, body: Partial<TaxonomyWrite>): Promise<void>;
  delete(id: number): Promise<void>;
}

const PER_PAGE = 500;
const MAX_PAGES = 1000;

function createTaxonomyApi<T extends Tag>(ctx: ClientContext, kind: 'tags' | 'lists'): TaxonomyApi<T> {
  // Looked up per call: the schemas are built on first use.
  const schemaOf = () => (kind === 'tags' ? ctx.schemas.Tag : ctx.schemas.List) as typeof ctx.schemas.Tag;
  const one = kind === 'tags' ? 'tag' : 'list';
  const { exec } = ctx;

  function checkWrite(body: Partial<TaxonomyWrite>, create: boolean): void {
    if (create && (!body?.title || typeof body.title !== 'string')) throw new CrmArgumentError(`A ${one} needs a title`);
    for (const [k, v] of Object.entries(body ?? {})) {
      if (v !== undefined && (typeof v !== 'string' || v.length > 1000)) throw new CrmArgumentError(`${one} ${k} must be a string of at most 1000 characters`);
    }
  }

  return {
    async list(q = {}) {
      const out: T[] = [];
      const seen = new Set<number>();
      const fetchPage = async (page: number, perPage: number) => {
        const res = await exec({
          method: 'GET',
          path: `/${kind}`,
          query: {
            search: q.search,
            sort_by: q.sortBy,
            sort_order: q.sortOrder?.toUpperCase(),
            exclude_counts: q.excludeCounts ? 'true' : undefined,
            page,
            per_page: perPage,
          },
        });
        return parsePage(res, [kind], schemaOf(), { page, perPage }, `GET /${kind}`);
      };
      // The one paginator: last_page and total, a per_page the server may cap, a server ignoring `page`.
      for await (const p of paginate(fetchPage, { perPage: PER_PAGE, maxPages: MAX_PAGES })) {
        for (const item of p.items) {
          if (seen.has(item.id)) continue; // a server that ignores `page` returns the same rows again
          seen.add(item.id);
          out.push(item as unknown as T);
        }
      }
      return out;
    },

    async get(id) {
      checkId(id, `${one} id`);
      return nullIfNotFound(async () => {
        const route = `GET /${kind}/{id}`;
        const res = await exec({ method: 'GET', path: `/${kind}/${id}` }, { allowEmpty: true });
        if (res === null) return null;
        const o = asObject(res, route);
        // Tags come wrapped ({tag}); lists come bare. Accept either for both.
        const rec = one in o ? o[one] : 'id' in o ? o : null;
        return rec ? (parseRecord(schemaOf(), rec, route) as unknown as T) : null;
      });
    },

    async create(body) {
      checkWrite(body, true);
      const route = `POST /${kind}`;
      const res = asObject(await exec({ method: 'POST', path: `/${kind}`, body }), route);
      // The interface returns the created item under the plural key; the real one also under `item`
      // (and tags under `lists`).
      const rec = [res[kind], res.item, res[one], res.lists, res.tags].find((v) => v && typeof v === 'object' && !Array.isArray(v)) ?? res;
      return parseRecord(schemaOf(), rec, route) as unknown as T;
    },

    async update(id, body) {
      checkId(id, `${one} id`);
      checkWrite(body, false);
      await exec({ method: 'PUT', path: `/${kind}/${id}`, body }, { idempotent: true });
    },

    async delete(id) {
      checkId(id, `${one} id`);
      await exec({ method: 'DELETE', path: `/${kind}/${id}` });
    },
  };
}

export const createTagsApi = (ctx: ClientContext): TaxonomyApi<Tag> => createTaxonomyApi<Tag>(ctx, 'tags');
export const createListsApi = (ctx: ClientContext): TaxonomyApi<List> => createTaxonomyApi<List>(ctx, 'lists');
