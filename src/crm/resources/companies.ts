import { checkId, checkPageQuery, type ClientContext } from '../client-context.js';
import { CrmArgumentError } from '../errors.js';
import { nullIfNotFound } from '../not-found.js';
import { asObject, parsePage, parseRecord } from '../parse.js';
import { execOneOf } from '../route-choice.js';
import type { Company, CompanyWrite, JsonObject, Page } from '../types.js';

export interface CompaniesApi {
  listPage(q: { page: number; perPage: number; search?: string; sortBy?: string; sortOrder?: 'asc' | 'desc' }): Promise<Page<Company>>;
  get(id: number): Promise<Company | null>;
  create(body: CompanyWrite): Promise<Company>;
  /** The updated company when the server returns it, else null (the response body is not specified). */
  update(id: number, body: Partial<CompanyWrite>): Promise<Company | null>;
  delete(id: number): Promise<void>;
  attachSubscribers(body: { subscriberIds: number[]; companyIds: number[] }): Promise<JsonObject>;
}

export function createCompaniesApi(ctx: ClientContext): CompaniesApi {
  const { exec, schemas } = ctx;

  function companyIn(res: unknown, route: string): Company | null {
    const o = asObject(res, route);
    const rec = o.company && typeof o.company === 'object' ? o.company : 'id' in o && 'name' in o ? o : null;
    return rec ? parseRecord(schemas.Company, rec, route) : null;
  }

  return {
    async listPage(q) {
      checkPageQuery(q, 'companies.listPage');
      const res = await exec({
        method: 'GET',
        path: '/companies',
        query: { page: q.page, per_page: q.perPage, search: q.search, sort_by: q.sortBy, sort_order: q.sortOrder?.toUpperCase() },
      });
      return parsePage(res, ['companies'], schemas.Company, q, 'GET /companies');
    },
    async get(id) {
      checkId(id, 'company id');
      return nullIfNotFound(async () => companyIn(await exec({ method: 'GET', path: `/companies/${id}` }), 'GET /companies/{id}'));
    },
    async create(body) {
      if (!body?.name) throw new CrmArgumentError('A company needs a name');
      const route = 'POST /companies';
      const c = companyIn(await exec({ method: 'POST', path: '/companies', body }), route);
      if (!c) throw new CrmArgumentError(`${route} returned no company`);
      return c;
    },
    async update(id, body) {
      checkId(id, 'company id');
      return companyIn(await exec({ method: 'PUT', path: `/companies/${id}`, body }, { idempotent: true }), 'PUT /companies/{id}');
    },
    async delete(id) {
      checkId(id, 'company id');
      await exec({ method: 'DELETE', path: `/companies/${id}` });
    },
    async attachSubscribers({ subscriberIds, companyIds }) {
      if (!subscriberIds?.length || !companyIds?.length) throw new CrmArgumentError('attachSubscribers needs subscriberIds and companyIds');
      const body = { subscriber_ids: subscriberIds, company_ids: companyIds };
      // The interface has this route on PUT; fluentcrm-2.9 only on POST (its route index and
      // POST_companies_attach-subscribers). Same path, same meaning: the plugin's method first.
      // Attaching contacts already attached changes nothing, so either may be sent again.
      const res = await execOneOf(
        ctx,
        'companies.attachSubscribers',
        [
          { method: 'POST', path: '/companies/attach-subscribers', body },
          { method: 'PUT', path: '/companies/attach-subscribers', body },
        ],
        { idempotent: true },
      );
      return asObject(res.body, res.route);
    },
  };
}
