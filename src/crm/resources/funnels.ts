import { checkId, checkPageQuery, type ClientContext } from '../client-context.js';
import { CrmArgumentError } from '../errors.js';
import { nullIfNotFound } from '../not-found.js';
import { asObject, parsePage, parseRecord } from '../parse.js';
import { execOneOf } from '../route-choice.js';
import type { Funnel, FunnelSubscriber, FunnelSubscriberDetail, JsonObject, Page } from '../types.js';

export const FUNNEL_STATUSES = ['published', 'draft', 'paused'] as const;
export type FunnelSubscriberFilter = 'all' | 'active' | 'completed' | 'cancelled' | 'pending' | 'waiting';

export interface FunnelsApi {
  listPage(q: { page: number; perPage: number; withSubscribersCount?: boolean; search?: string; status?: string }): Promise<Page<Funnel>>;
  get(id: number): Promise<Funnel | null>;
  setStatus(id: number, status: (typeof FUNNEL_STATUSES)[number]): Promise<JsonObject>;
  subscribersPage(funnelId: number, q: { page: number; perPage: number; status?: FunnelSubscriberFilter; sequenceId?: number; search?: string }): Promise<Page<FunnelSubscriber>>;
  subscriber(funnelId: number, contactId: number): Promise<FunnelSubscriberDetail | null>;
  addSubscribers(funnelId: number, contactIds: number[]): Promise<JsonObject>;
  removeSubscriber(funnelId: number, contactId: number): Promise<void>;
}

export function createFunnelsApi(ctx: ClientContext): FunnelsApi {
  const { exec, schemas } = ctx;
  return {
    async listPage(q) {
      checkPageQuery(q, 'funnels.listPage');
      const res = await exec({
        method: 'GET',
        path: '/funnels',
        query: {
          page: q.page,
          per_page: q.perPage,
          search: q.search,
          status: q.status,
          with: q.withSubscribersCount ? ['subscribers_count'] : undefined,
        },
      });
      // The interface puts `funnels` (array) beside total/per_page/...; the real deployment nests a paginator.
      return parsePage(res, ['funnels'], schemas.Funnel, q, 'GET /funnels');
    },
    async get(id) {
      checkId(id, 'funnel id');
      return nullIfNotFound(async () => {
        const route = 'GET /funnels/{id}';
        const o = asObject(await exec({ method: 'GET', path: `/funnels/${id}` }), route);
        const rec = o.funnel && typeof o.funnel === 'object' ? o.funnel : 'id' in o ? o : null;
        return rec ? parseRecord(schemas.Funnel, rec, route) : null;
      });
    },
    async setStatus(id, status) {
      checkId(id, 'funnel id');
      if (!FUNNEL_STATUSES.includes(status)) throw new CrmArgumentError(`Funnel status must be one of ${FUNNEL_STATUSES.join(', ')}, got "${status}"`);
      // fluentcrm-2.9 has no /funnels/{id}/status (its route index): PUT /funnels/{id} with `status`
      // sets it there (FunnelController@updateFunnelProperty). The interface's route first: the
      // interface lists no PUT /funnels/{id}, which on such a CRM may update other fields.
      const res = await execOneOf(
        ctx,
        'funnels.setStatus',
        [
          { method: 'PUT', path: `/funnels/${id}/status`, body: { status } },
          { method: 'PUT', path: `/funnels/${id}`, body: { status } },
        ],
        { idempotent: true },
      );
      return asObject(res.body ?? {}, res.route);
    },
    async subscribersPage(funnelId, q) {
      checkId(funnelId, 'funnel id');
      checkPageQuery(q, 'funnels.subscribersPage');
      const res = await exec({
        method: 'GET',
        path: `/funnels/${funnelId}/subscribers`,
        // `all` is every subscriber in the interface, but fluentcrm-2.9 filters status=all literally
        // and answers none (site-ny/GET_funnels_id_subscribers_status_all): no status means all on both.
        query: { page: q.page, per_page: q.perPage, status: q.status === 'all' ? undefined : q.status, sequence_id: q.sequenceId, search: q.search },
      });
      return parsePage(res, ['funnel_subscribers'], schemas.FunnelSubscriber, q, 'GET /funnels/{id}/subscribers');
    },
    async subscriber(funnelId, contactId) {
      checkId(funnelId, 'funnel id');
      checkId(contactId, 'contact id');
      return nullIfNotFound(async () => {
        const route = 'GET /funnels/{id}/subscribers/{contact_id}';
        const o = asObject(await exec({ method: 'GET', path: `/funnels/${funnelId}/subscribers/${contactId}` }), route);
        if (!o.funnel_subscriber || typeof o.funnel_subscriber !== 'object') return null;
        const sequences = Array.isArray(o.sequences) ? (o.sequences.filter((s) => s && typeof s === 'object') as JsonObject[]) : [];
        return { subscriber: parseRecord(schemas.FunnelSubscriber, o.funnel_subscriber, route), sequences };
      });
    },
    async addSubscribers(funnelId, contactIds) {
      checkId(funnelId, 'funnel id');
      if (!contactIds.length || contactIds.length > 10_000) throw new CrmArgumentError('addSubscribers needs 1 to 10000 contact ids');
      for (const id of contactIds) checkId(id, 'contact id');
      return asObject((await exec({ method: 'POST', path: `/funnels/${funnelId}/subscribers`, body: { subscribers: contactIds } })) ?? {}, 'POST /funnels/{id}/subscribers');
    },
    async removeSubscriber(funnelId, contactId) {
      checkId(funnelId, 'funnel id');
      checkId(contactId, 'contact id');
      // fluentcrm-2.9 removes from the collection route, the contacts named by `subscriber_ids`
      // (its route index: /funnels/{id}/subscribers/{contact_id} is GET only). The interface's route
      // first: on another CRM a DELETE of the collection that ignores the parameter empties the funnel.
      await execOneOf(ctx, 'funnels.removeSubscriber', [
        { method: 'DELETE', path: `/funnels/${funnelId}/subscribers/${contactId}` },
        { method: 'DELETE', path: `/funnels/${funnelId}/subscribers`, query: { subscriber_ids: [contactId] } },
      ]);
    },
  };
}
