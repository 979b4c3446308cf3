import type { FunnelSubscriber } from '../src/crm/types.js';
import { heldFunnelIds } from '../src/warehouse/held-funnel-ids.js';
import type { LoadStats } from '../src/warehouse/types.js';
import { readAllPages } from '../src/sync/read-all-pages.js';
import { unavailableReason } from '../src/sync/stream-availability.js';
import { activityClient, startHeartbeats, type SyncActivityDeps } from './sync-deps.js';

export interface FunnelSubscribersResult extends LoadStats {
  rows: number;
  pages: number;
  requests: number;
}

export function createFunnelActivities(deps: SyncActivityDeps) {
  const { writes } = deps;
  const now = deps.now ?? Date.now;

  return {
    /** Ids of every funnel (small: ids only enter history), read page by page; `skipped` when the CRM has no funnels at all. */
    async listFunnelIds(): Promise<{ ids: number[]; requests: number; skipped?: string }> {
      const client = activityClient(deps.client);
      try {
        const read = await readAllPages(client, (page, perPage) => client.funnels.listPage({ page, perPage }));
        return { ids: read.rows.map((f) => f.id), requests: read.requests };
      } catch (err) {
        const reason = unavailableReason('funnel_subscribers', err);
        if (!reason) throw err;
        deps.logger.warn(`funnel_subscribers: ${reason}; skipping`);
        return { ids: [], requests: 1, skipped: reason };
      }
    },

    /**
     * Subscribers of one funnel in every status, with their step metrics, merged completely. No
     * `status` is sent: the interface's `all` is taken literally by the real CRM (no rows).
     */
    async syncFunnelSubscribers(input: { funnelId: number; loadId: string }): Promise<FunnelSubscribersResult> {
      const client = activityClient(deps.client);
      const hb = startHeartbeats(() => ({ funnelId: input.funnelId }));
      let read: { rows: FunnelSubscriber[]; requests: number };
      try {
        read = await readAllPages(client, (page, perPage) => client.funnels.subscribersPage(input.funnelId, { page, perPage }), hb.beat);
      } finally {
        hb.stop();
      }
      const ctx = { loadId: input.loadId, syncedAt: new Date(now()) };
      const stats = await writes.run((w) => w.loadFunnelSubscribers(input.funnelId, read.rows, ctx, { complete: true }));
      return { ...stats, rows: read.rows.length, pages: read.requests, requests: read.requests };
    },

    /** Funnels gone from the CRM lose their subscribers in the warehouse too. */
    async pruneFunnelSubscribers(input: { keepFunnelIds: number[]; loadId: string }): Promise<{ funnels: number; deleted: number }> {
      const keep = new Set(input.keepFunnelIds);
      const ctx = { loadId: input.loadId, syncedAt: new Date(now()) };
      return await writes.run(async (w) => {
        const gone = (await heldFunnelIds(w)).filter((id) => !keep.has(id));
        let deleted = 0;
        for (const id of gone) deleted += (await w.loadFunnelSubscribers(id, [], ctx, { complete: true })).deleted;
        return { funnels: gone.length, deleted };
      });
    },
  };
}
