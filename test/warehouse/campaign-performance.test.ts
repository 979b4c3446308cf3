import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCrmClient, createRateLimiter } from '../../src/crm/index.js';
import type { Campaign } from '../../src/crm/types.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import type { WarehouseHandle } from '../../src/warehouse/index.js';
import { closeTempWarehouse, ctx, openTempWarehouse, type tempPaths } from './temp-warehouse.js';

const FIXTURE = join(import.meta.dirname, '../../../shared/fixtures/fluentcrm-2.9/GET_campaigns_with_stats.json');

let sim: RunningSimulator;
let p: ReturnType<typeof tempPaths>;
let w: WarehouseHandle;
beforeAll(async () => {
  sim = await startSimulator({ mode: 'real', seed: 5, contacts: 2000 });
  ({ p, w } = await openTempWarehouse());
});
afterAll(async () => {
  await closeTempWarehouse({ p, w });
  await sim?.close();
});

describe('campaign_performance on what the real CRM sends', () => {
  it('reads unsubscribes from the real stats key `unsubscribers`, as the simulator (real mode) sends it like the fixture', async () => {
    if (!existsSync(FIXTURE)) throw new Error(`Fixture missing: ${FIXTURE} (the shared fixtures must sit next to the repository)`);
    const fixture = JSON.parse(readFileSync(FIXTURE, 'utf8')) as { body: { campaigns: { data: { stats: Record<string, unknown> }[] } } };
    const realKeys = Object.keys(fixture.body.campaigns.data[0]!.stats).sort();
    expect(realKeys).toContain('unsubscribers');

    const client = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password, limiter: createRateLimiter({ maxRps: 1000, adaptive: false }) });
    let campaigns: Campaign[];
    try {
      campaigns = (await client.campaigns.listPage({ page: 1, perPage: 100, withStats: true })).items;
    } finally {
      await client.close();
    }
    for (const c of campaigns) expect(Object.keys(c.stats ?? {}).sort()).toEqual(realKeys);
    await w.loadEntities('campaigns', campaigns, ctx(), { complete: true });

    const rows = await w.query('SELECT id, sent, unsubscribes, unsubscribe_rate FROM campaign_performance ORDER BY id');
    const expected = campaigns
      .map((c) => {
        const s = c.stats as { sent: number; unsubscribers: number };
        return { id: c.id, sent: s.sent, unsubscribes: s.unsubscribers, unsubscribe_rate: s.sent > 0 ? Math.round((s.unsubscribers / s.sent) * 10_000) / 10_000 : null };
      })
      .sort((a, b) => a.id - b.id);
    expect(rows).toEqual(expected);
    expect(expected.some((e) => e.unsubscribes > 0)).toBe(true);
  });
});
