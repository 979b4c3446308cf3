import { readAllPages } from '../src/sync/read-all-pages.js';
import { unavailableReason } from '../src/sync/stream-availability.js';
import type { SmallStreamName } from '../workflows/streams.js';
import type { EntityRow, LoadStats } from '../src/warehouse/types.js';
import type { SyncCrmClient } from '../src/sync/crm-port.js';
import { activityClient, startHeartbeats, type SyncActivityDeps } from './sync-deps.js';

export interface EntityResult extends LoadStats {
  rows: number;
  pages: number;
  requests: number;
  /** Set when the CRM does not offer the stream (the company module is off, or the route is absent). */
  skipped?: string;
}

export function createEntityActivities(deps: SyncActivityDeps) {
  const { writes } = deps;
  const now = deps.now ?? Date.now;

  async function readStream(client: SyncCrmClient, stream: SmallStreamName, beat: () => void): Promise<{ rows: EntityRow[]; requests: number }> {
    switch (stream) {
      case 'tags':
        return { rows: await client.tags.list(), requests: 1 };
      case 'lists':
        return { rows: await client.lists.list(), requests: 1 };
      case 'custom_fields':
        return { rows: await client.customFields.list(), requests: 1 };
      case 'companies':
        return await readAllPages(client, (page, perPage) => client.companies.listPage({ page, perPage }), beat);
      case 'campaigns':
        return await readAllPages(client, (page, perPage) => client.campaigns.listPage({ page, perPage, withStats: true }), beat);
      case 'funnels':
        // The interface gives subscribers_count only with with[]=subscribers_count (fluentcrm-2.9 always does).
        return await readAllPages(client, (page, perPage) => client.funnels.listPage({ page, perPage, withSubscribersCount: true }), beat);
    }
  }

  return {
    /** Small streams are re-read whole and merged: rows absent from the CRM are removed from the warehouse. */
    async syncEntityStream(input: { stream: SmallStreamName; loadId: string }): Promise<EntityResult> {
      const hb = startHeartbeats(() => ({ stream: input.stream }));
      let read: { rows: EntityRow[]; requests: number };
      try {
        read = await readStream(activityClient(deps.client), input.stream, hb.beat);
      } catch (err) {
        // A module the CRM lacks (or has switched off) skips the stream with a warning, not a failure.
        const reason = unavailableReason(input.stream, err);
        if (reason) {
          deps.logger.warn(`${input.stream}: ${reason}; skipping`);
          return { inserted: 0, updated: 0, unchanged: 0, deleted: 0, rows: 0, pages: 0, requests: 1, skipped: reason };
        }
        throw err;
      } finally {
        hb.stop();
      }
      const ctx = { loadId: input.loadId, syncedAt: new Date(now()) };
      const stats = await writes.run((w) => w.loadEntities(input.stream, read.rows, ctx, { complete: true }));
      return { ...stats, rows: read.rows.length, pages: read.requests, requests: read.requests };
    },
  };
}
