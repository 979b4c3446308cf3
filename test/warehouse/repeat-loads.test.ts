import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FunnelSubscriber, Tag } from '../../src/crm/types.js';
import type { WarehouseHandle } from '../../src/warehouse/index.js';
import { closeTempWarehouse, ctx, openTempWarehouse, type tempPaths } from './temp-warehouse.js';

// A complete load of the very rows the handle loaded last into the same scope is skipped. Writes
// that bypass the handle (`w.connection`) are, by the handle's contract, not seen: here that is
// what makes a skip visible, since a skipped load leaves such a write in place (a load compares
// fingerprints, so each such write changes the row's fingerprint too).
let p: ReturnType<typeof tempPaths>;
let w: WarehouseHandle;
beforeAll(async () => {
  ({ p, w } = await openTempWarehouse());
});
afterAll(() => closeTempWarehouse({ p, w }));

const tag = (id: number, title = `Tag ${id}`): Tag => ({
  id,
  title,
  slug: `tag-${id}`,
  description: null,
  total_count: 1,
  subscribers_count: 1,
  created_at: '2025-01-01T00:00:00.000Z',
  updated_at: '2025-01-02T00:00:00.000Z',
  raw: { id: String(id) },
});
const sub = (id: number, funnelId: number, status = 'active'): FunnelSubscriber => ({
  id,
  funnel_id: funnelId,
  subscriber_id: id * 2,
  status,
  last_sequence_id: 1,
  next_sequence_id: 2,
  next_execution_time: null,
  created_at: null,
  updated_at: null,
  metrics: [],
  raw: {},
});
const behind = (sql: string) => w.connection.run(sql);
const titles = async () => (await w.query('SELECT id, title FROM tags ORDER BY id')).map((r) => `${String(r.id)}:${String(r.title)}`);
const statuses = async () => (await w.query('SELECT funnel_id, id, status FROM funnel_subscribers ORDER BY 1, 2')).map((r) => `${String(r.funnel_id)}/${String(r.id)}:${String(r.status)}`);

describe('repeated complete loads', () => {
  const rows = [tag(1), tag(2)];

  it('skips the same rows loaded again, and reports them unchanged', async () => {
    expect(await w.loadEntities('tags', rows, ctx(), { complete: true })).toEqual({ inserted: 2, updated: 0, unchanged: 0, deleted: 0 });
    await behind(`UPDATE tags SET title = 'behind', _fingerprint = 'behind' WHERE id = 1`);
    expect(await w.loadEntities('tags', rows, ctx(), { complete: true })).toEqual({ inserted: 0, updated: 0, unchanged: 2, deleted: 0 });
    expect(await titles()).toEqual(['1:behind', '2:Tag 2']);
  });

  it('loads them again after any other load of the table', async () => {
    expect(await w.loadEntities('tags', [tag(1, 'hook')], ctx(), { complete: false })).toEqual({ inserted: 0, updated: 1, unchanged: 0, deleted: 0 });
    expect(await w.loadEntities('tags', rows, ctx(), { complete: true })).toEqual({ inserted: 0, updated: 1, unchanged: 1, deleted: 0 });
    expect(await titles()).toEqual(['1:Tag 1', '2:Tag 2']);
  });

  it('loads them again after a write the handle cannot name', async () => {
    await w.query(`UPDATE tags SET title = 'query', _fingerprint = 'query' WHERE id = 2`);
    expect(await w.loadEntities('tags', rows, ctx(), { complete: true })).toEqual({ inserted: 0, updated: 1, unchanged: 1, deleted: 0 });
    expect(await titles()).toEqual(['1:Tag 1', '2:Tag 2']);
  });

  it('keeps each funnel apart: a load of one funnel leaves what is known of another', async () => {
    await w.loadFunnelSubscribers(1, [sub(10, 1)], ctx(), { complete: true });
    await w.loadFunnelSubscribers(2, [sub(20, 2)], ctx(), { complete: true });
    await behind(`UPDATE funnel_subscribers SET status = 'behind', _fingerprint = 'behind' WHERE funnel_id = 1`);
    expect(await w.loadFunnelSubscribers(1, [sub(10, 1)], ctx(), { complete: true })).toEqual({ inserted: 0, updated: 0, unchanged: 1, deleted: 0 });
    expect(await statuses()).toEqual(['1/10:behind', '2/20:active']);
    // a webhook's partial load of funnel 1 voids what was known of it
    await w.loadFunnelSubscribers(1, [sub(11, 1)], ctx(), { complete: false });
    expect(await w.loadFunnelSubscribers(1, [sub(10, 1)], ctx(), { complete: true })).toEqual({ inserted: 0, updated: 1, unchanged: 0, deleted: 1 });
    expect(await statuses()).toEqual(['1/10:active', '2/20:active']);
  });
});
