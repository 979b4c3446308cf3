import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { isSpecError, withSim, type Api, type Json } from './helpers.js';

let sim: RunningSimulator;
let call: Api;
const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);

beforeAll(async () => {
  ({ sim, call } = await withSim({ contacts: 300, seed: 8, now: () => NOW }));
});
afterAll(async () => {
  await sim.close();
});

describe('Reports', () => {
  it('overview has the spec shape and counts contacts created in the range', async () => {
    const r = await call('GET', '/reports/overview?date_range=90_days');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      total_subscribers: 300,
      subscriber_growth: { current_period: expect.any(Number), previous_period: expect.any(Number), growth_rate: expect.any(Number) },
      email_stats: { emails_sent: expect.any(Number), emails_opened: expect.any(Number), emails_clicked: expect.any(Number), open_rate: expect.any(Number), click_rate: expect.any(Number) },
      revenue: { total: expect.any(Number), growth: expect.any(Number) },
    });
    const from = Date.UTC(2025, 9, 4);
    const expected = sim.truth().contacts.filter((c) => Date.parse(c.created_at_iso) >= from).length;
    expect(r.json.subscriber_growth.current_period).toBe(expected);
    const custom = await call('GET', '/reports/overview?date_range=custom&start_date=2025-01-01&end_date=2025-12-31');
    expect(custom.json.subscriber_growth.current_period).toBe(sim.truth().contacts.filter((c) => c.created_at.startsWith('2025')).length);
  });

  it('400 invalid_date_range when the end precedes the start', async () => {
    const r = await call('GET', '/reports/overview?date_range=custom&start_date=2025-06-01&end_date=2025-05-01');
    expect(r.status).toBe(400);
    expect(isSpecError(r.json, 400, 'invalid_date_range')).toBe(true);
  });

  it('subscriber-growth groups by day (default) and month; top-subscribers is a plain array capped by limit', async () => {
    const day = await call('GET', '/reports/subscriber-growth?date_range=7_days');
    expect(day.json.growth).toHaveLength(7);
    const month = await call('GET', '/reports/subscriber-growth?date_range=12_months&group_by=month');
    const total = month.json.growth.reduce((n: number, b: Json) => n + b.count, 0);
    expect(total).toBe(sim.truth().contacts.filter((c) => Date.parse(c.created_at_iso) >= Date.UTC(2025, 0, 2)).length);
    const top = await call('GET', '/reports/top-subscribers');
    expect(Array.isArray(top.json)).toBe(true);
    expect(top.json).toHaveLength(10);
    expect((await call('GET', '/reports/top-subscribers?limit=3&metric=activity')).json).toHaveLength(3);
  });

  it('campaign email-stats and funnel conversion-stats have the spec shapes', async () => {
    const e = await call('GET', '/reports/campaigns/1/email-stats');
    expect(e.json).toMatchObject({ campaign_id: 1, campaign_title: expect.any(String), revenue: { total: expect.any(Number), orders: expect.any(Number), conversion_rate: expect.any(Number) } });
    for (const k of ['sent', 'delivered', 'opened', 'clicked', 'unsubscribed', 'bounced', 'delivery_rate', 'open_rate', 'click_rate', 'unsubscribe_rate'])
      expect(typeof e.json.stats[k]).toBe('number');
    const f = await call('GET', '/reports/funnels/1/conversion-stats');
    expect(f.json).toMatchObject({
      funnel_id: 1,
      funnel_title: expect.any(String),
      subscribers: { total_entered: expect.any(Number), currently_active: expect.any(Number), completed: expect.any(Number), completion_rate: expect.any(Number) },
    });
    expect(f.json.sequence_performance[0]).toMatchObject({ sequence_id: expect.any(Number), title: expect.any(String), sent: expect.any(Number) });
    const rev = await call('GET', '/reports/revenue');
    expect(rev.json).toMatchObject({
      total_revenue: expect.any(Number),
      total_orders: expect.any(Number),
      average_order_value: expect.any(Number),
      attribution: { campaigns: expect.any(Number), funnels: expect.any(Number) },
    });
  });

  it('automation step report: root row first, unreached steps omitted, percent clamped and percent_text not, empty stats valid', async () => {
    const truth = sim.truth();
    const r = await call('GET', '/reports/automations/1/steps');
    expect(r.status).toBe(200);
    expect(r.json.funnel.id).toBe(1);
    expect(typeof r.json.funnel.created_by).toBe('string');
    const root = r.json.stats[0];
    const entrants = new Set(truth.funnelSubscribers.filter((s) => s.funnelId === 1).map((s) => s.subscriberId));
    expect(root).toMatchObject({ sequence_id: 0, type: 'root', count: entrants.size });
    for (const row of r.json.stats) {
      for (const k of ['label', 'count', 'sequence_id', 'type', 'percent', 'percent_text', 'previous_step_count', 'drop_count', 'drop_percent']) expect(row).toHaveProperty(k);
    }
    // Rule 2: funnel 3's last step is never reached, so it is missing from stats.
    const f3 = truth.funnels.find((f) => f.id === 3) as Json;
    const r3 = await call('GET', '/reports/automations/3/steps');
    const reported = r3.json.stats.map((s: Json) => s.sequence_id);
    expect(reported).not.toContain(f3.steps[f3.steps.length - 1].id);
    expect(r3.json.stats.length).toBeLessThan(f3.steps.length + 1);
    // Rule 4: a funnel without steps.
    const empty = await call('GET', '/reports/automations/4/steps');
    expect(empty.json.stats).toEqual([]);
    // Rule 3: a step run more often than there are entrants (re-entry) is clamped to 100.
    const fs = truth.funnelSubscribers.find((s) => s.funnelId === 2 && s.status === 'completed') as Json;
    const f2 = truth.funnels.find((f) => f.id === 2) as Json;
    const others = truth.funnelSubscribers.filter((s) => s.funnelId === 2 && s.subscriberId !== fs.subscriberId).length;
    for (let round = 0; round < others + 2; round++) {
      // A completed contact may enter again; its metrics are kept, so step runs add up.
      sim.mutate.addFunnelSubscriber(2, fs.subscriberId);
      for (let s = 0; s < f2.steps.length; s++) sim.mutate.advanceFunnel(2, fs.subscriberId);
    }
    const r2 = await call('GET', '/reports/automations/2/steps');
    const firstStep = r2.json.stats.find((s: Json) => s.sequence_id === f2.steps[0].id);
    expect(firstStep.percent_text).toBeGreaterThan(100);
    expect(firstStep.percent).toBe(100);
  });

  it('unknown report is 404 report_not_found; options and scheduled reports', async () => {
    const r = await call('GET', '/reports/no-such-report');
    expect(r.status).toBe(404);
    expect(isSpecError(r.json, 404, 'report_not_found')).toBe(true);
    const o = await call('GET', '/reports/options');
    expect(o.json.options.tags.length).toBeGreaterThan(0);
    const bad = await call('POST', '/reports/scheduled', { title: 't', type: 'overview', frequency: 'hourly', recipients: ['a@example.org'] });
    expect(bad.status).toBe(400);
    const ok = await call('POST', '/reports/scheduled', { title: 't', type: 'overview', frequency: 'weekly', recipients: ['a@example.org'] });
    expect(ok.status).toBe(200);
    expect((await call('GET', '/reports/scheduled')).json.reports).toHaveLength(1);
  });
});
