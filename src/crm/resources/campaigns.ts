import { checkId, checkPageQuery, type ClientContext } from '../client-context.js';
import { CrmArgumentError } from '../errors.js';
import { nullIfNotFound } from '../not-found.js';
import { asObject, parsePage, parseRecord, schemaError } from '../parse.js';
import type { Campaign, CampaignStatusReport, JsonObject, Page } from '../types.js';

export interface CampaignsApi {
  listPage(q: { page: number; perPage: number; withStats?: boolean; search?: string }): Promise<Page<Campaign>>;
  get(id: number): Promise<Campaign | null>;
  /** The status report. For working campaigns the server also recovers stuck emails on every 4th request_counter. */
  status(id: number, requestCounter?: number): Promise<CampaignStatusReport>;
  pause(id: number): Promise<JsonObject>;
  resume(id: number): Promise<JsonObject>;
  /** The copy, when the server returns it (bare or under `campaign`); null otherwise. */
  duplicate(id: number): Promise<Campaign | null>;
  setTitle(id: number, title: string): Promise<JsonObject>;
  delete(id: number): Promise<void>;
}

export function createCampaignsApi(ctx: ClientContext): CampaignsApi {
  const { exec, schemas } = ctx;
  const action = async (id: number, suffix: string, route: string): Promise<JsonObject> => {
    checkId(id, 'campaign id');
    return asObject((await exec({ method: 'POST', path: `/campaigns/${id}/${suffix}` })) ?? {}, route);
  };

  return {
    async listPage(q) {
      checkPageQuery(q, 'campaigns.listPage');
      const res = await exec({
        method: 'GET',
        path: '/campaigns',
        query: { page: q.page, per_page: q.perPage, searchBy: q.search, with: q.withStats ? ['stats'] : undefined },
      });
      return parsePage(res, ['campaigns'], schemas.Campaign, q, 'GET /campaigns');
    },
    async get(id) {
      checkId(id, 'campaign id');
      return nullIfNotFound(async () => {
        const route = 'GET /campaigns/{id}';
        const o = asObject(await exec({ method: 'GET', path: `/campaigns/${id}` }), route);
        const rec = o.campaign && typeof o.campaign === 'object' ? o.campaign : 'id' in o ? o : null;
        return rec ? parseRecord(schemas.Campaign, rec, route) : null;
      });
    },
    async status(id, requestCounter) {
      checkId(id, 'campaign id');
      const route = 'GET /campaigns/{id}/status';
      const res = await exec({ method: 'GET', path: `/campaigns/${id}/status`, query: { request_counter: requestCounter } });
      const r = schemas.CampaignStatus.safeParse(res);
      if (!r.success) throw schemaError(route, r.error);
      return { ...r.data, campaign: parseRecord(schemas.Campaign, r.data.campaign, route), raw: res as JsonObject };
    },
    pause: (id) => action(id, 'pause', 'POST /campaigns/{id}/pause'),
    resume: (id) => action(id, 'resume', 'POST /campaigns/{id}/resume'),
    async duplicate(id) {
      const route = 'POST /campaigns/{id}/duplicate';
      const o = await action(id, 'duplicate', route);
      const rec = o.campaign && typeof o.campaign === 'object' ? o.campaign : 'id' in o ? o : null;
      return rec ? parseRecord(schemas.Campaign, rec, route) : null;
    },
    async setTitle(id, title) {
      checkId(id, 'campaign id');
      if (!title || title.length > 500) throw new CrmArgumentError('A campaign title must be 1 to 500 characters');
      return asObject((await exec({ method: 'PUT', path: `/campaigns/${id}/title`, body: { title } }, { idempotent: true })) ?? {}, 'PUT /campaigns/{id}/title');
    },
    async delete(id) {
      checkId(id, 'campaign id');
      await exec({ method: 'DELETE', path: `/campaigns/${id}` });
    },
  };
}
