import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WarehouseHandle } from '../../src/warehouse/index.js';
import { makeContact, tagRef } from './contact-factory.js';
import { closeTempWarehouse, ctx, openTempWarehouse, type tempPaths } from './temp-warehouse.js';

// tag_list_member_counts compares members now with those held when the previous contacts sync
// finished. An edit the CRM stamps within the same second as that sync's end (its updated_at has
// whole seconds, in the CRM's clock) was loaded by the next sync, so it is a change since.
let t: { p?: ReturnType<typeof tempPaths>; w?: WarehouseHandle } = {};
beforeAll(async () => {
  t = await openTempWarehouse();
});
afterAll(async () => closeTempWarehouse(t));

const run = (w: WarehouseHandle, runId: string, startedAt: Date, finishedAt: Date) =>
  w.recordRun({ runId, stream: 'contacts', mode: 'backfill', startedAt, finishedAt, status: 'succeeded', pages: 1, requests: 1, inserted: 0, updated: 0, unchanged: 0, deleted: 0, error: null });

describe('tag_list_member_counts', () => {
  it('counts an edit stamped in the second the previous sync finished as a change since it', async () => {
    const w = t.w!;
    const base = Date.UTC(2026, 10, 25, 12, 0, 0);
    // First sync: contacts 1-3 with tag 1, contacts 4-5 without; it ends at 12:00:05.600.
    const first = [1, 2, 3, 4, 5].map((i) => makeContact(i, { tags: i <= 3 ? [tagRef(1)] : [], updated_at: '2026-11-25T11:00:00Z' }));
    await w.loadContacts(first, ctx(new Date(base + 5_000)));
    await run(w, 'r1', new Date(base), new Date(base + 5_600));
    // Contacts 4 and 5 gain tag 1 at 12:00:05.800, which the CRM stamps 12:00:05; contact 3 is
    // deleted. The second sync loads that at 12:01.
    const second = [1, 2, 4, 5].map((i) => makeContact(i, { tags: [tagRef(1)], updated_at: i >= 4 ? '2026-11-25T12:00:05Z' : '2026-11-25T11:00:00Z' }));
    await w.loadContacts(second, ctx(new Date(base + 60_000)));
    await w.tombstoneContacts([3], { ...ctx(new Date(base + 60_000)), deletedAt: new Date(base + 60_000) });
    await run(w, 'r2', new Date(base + 59_000), new Date(base + 61_000));
    const [tag1] = await w.query(`SELECT members, previous_members, change FROM tag_list_member_counts WHERE kind = 'tag' AND id = 1`);
    expect(tag1).toEqual({ members: 4, previous_members: 3, change: 1 });
  });
});
