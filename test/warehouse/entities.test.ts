import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Campaign, FunnelSubscriber, Tag } from '../../src/crm/types.js';
import { reportTableFor, type WarehouseHandle } from '../../src/warehouse/index.js';
import { closeTempWarehouse, ctx, openTempWarehouse, type tempPaths } from './temp-warehouse.js';

let p: ReturnType<typeof tempPaths>;
let w: WarehouseHandle;
beforeAll(async () => {
  ({ p, w } = await openTempWarehouse());
});
afterAll(() => closeTempWarehouse({ p, w }));

const tag = (id: number, extra: Partial<Tag> = {}): Tag => ({
  id,
  title: `Tag ${id}`,
  slug: `tag-${id}`,
  description: null,
  total_count: id * 10,
  subscribers_count: id * 9,
  created_at: '2025-01-01T00:00:00.000Z',
  updated_at: '2025-01-02T00:00:00.000Z',
  raw: { id: String(id) },
  ...extra,
});
const subscriber = (id: number, funnelId: number, status = 'active'): FunnelSubscriber => ({
  id,
  funnel_id: funnelId,
  subscriber_id: id * 2,
  status,
  last_sequence_id: 3,
  next_sequence_id: 4,
  next_execution_time: '2026-01-01T00:00:00.000Z',
  created_at: null,
  updated_at: null,
  metrics: [
    { id: 1, funnel_id: funnelId, sequence_id: 3, subscriber_id: id * 2, benchmark_value: null, benchmark_currency: null, status: 'completed', notes: null, created_at: null, updated_at: null },
  ],
  raw: {},
});

describe('loadEntities', () => {
  it('upserts by fingerprint and, when complete, tombstones absent rows; they come back when seen', async () => {
    expect(await w.loadEntities('tags', [tag(1), tag(2), tag(3)], ctx(), { complete: true })).toEqual({ inserted: 3, updated: 0, unchanged: 0, deleted: 0 });
    expect(await w.loadEntities('tags', [tag(1), tag(2, { title: 'Two' })], ctx(), { complete: true })).toEqual({ inserted: 0, updated: 1, unchanged: 1, deleted: 1 });
    expect(await w.query('SELECT id, title, _deleted_at IS NOT NULL AS gone FROM tags ORDER BY id')).toEqual([
      { id: 1, title: 'Tag 1', gone: false },
      { id: 2, title: 'Two', gone: false },
      { id: 3, title: 'Tag 3', gone: true },
    ]);
    // an incomplete read never tombstones
    expect(await w.loadEntities('tags', [tag(3)], ctx(), { complete: false })).toEqual({ inserted: 0, updated: 1, unchanged: 0, deleted: 0 });
    expect(await w.query('SELECT count(*) AS n FROM tags WHERE _deleted_at IS NULL')).toEqual([{ n: 3 }]);
  });

  it('types campaign stats as JSON and feeds campaign_performance', async () => {
    const c: Campaign = {
      id: 5,
      title: 'Spring',
      slug: 'spring',
      status: 'archived',
      email_subject: 'Hi',
      email_pre_header: null,
      recipients_count: 200,
      scheduled_at: '2026-03-01T10:00:00.000Z',
      design_template: 'simple',
      created_at: null,
      updated_at: null,
      stats: { sent: 200, opens: 50, clicks: 10 },
      raw: {},
    };
    await w.loadEntities('campaigns', [c], ctx(), { complete: true });
    expect(await w.query('SELECT id, sent, opens, clicks, open_rate, click_to_open_rate FROM campaign_performance')).toEqual([
      { id: 5, sent: 200, opens: 50, clicks: 10, open_rate: 0.25, click_to_open_rate: 0.2 },
    ]);
  });

  it('keeps the held stats where a by-id read has none (keepHeld), and takes new ones when given', async () => {
    const base: Campaign = {
      id: 6,
      title: 'Autumn',
      slug: 'autumn',
      status: 'draft',
      email_subject: 'Hi',
      email_pre_header: null,
      recipients_count: 0,
      scheduled_at: null,
      design_template: 'simple',
      created_at: null,
      updated_at: null,
      stats: { sent: 0, opens: 0, clicks: 0 },
      raw: {},
    };
    await w.loadEntities('campaigns', [base], ctx(), { complete: false });
    const stats = async () => (await w.query(`SELECT status, CAST(stats AS VARCHAR) AS stats FROM campaigns WHERE id = 6`))[0];
    // The webhook applier's by-id read: a new status, no stats.
    const byId = { ...base, status: 'archived', stats: null };
    expect(await w.loadEntities('campaigns', [byId], ctx(), { complete: false, keepHeld: ['stats'] })).toMatchObject({ updated: 1 });
    expect(await stats()).toEqual({ status: 'archived', stats: '{"sent":0,"opens":0,"clicks":0}' });
    // The same read again changes nothing (the fingerprint is of the kept value).
    expect(await w.loadEntities('campaigns', [byId], ctx(), { complete: false, keepHeld: ['stats'] })).toMatchObject({ updated: 0, unchanged: 1 });
    await w.loadEntities('campaigns', [{ ...byId, stats: { sent: 9, opens: 1, clicks: 0 } }], ctx(), { complete: false, keepHeld: ['stats'] });
    expect(await stats()).toEqual({ status: 'archived', stats: '{"sent":9,"opens":1,"clicks":0}' });
    // Without keepHeld a read without stats clears them, as a listing that sends none means.
    await w.loadEntities('campaigns', [byId], ctx(), { complete: false });
    expect(await stats()).toEqual({ status: 'archived', stats: null });
    await expect(w.loadEntities('campaigns', [byId], ctx(), { complete: false, keepHeld: ['sent'] })).rejects.toThrow(/keepHeld names sent, not columns of campaigns/);
  });

  it('loads custom fields keyed by slug with their options', async () => {
    await w.loadEntities('custom_fields', [{ slug: 'plan', label: 'Plan', type: 'select-one', field_key: null, options: ['free', 'pro'], raw: {} }], ctx(), { complete: true });
    expect(await w.query('SELECT slug, options FROM custom_fields')).toEqual([{ slug: 'plan', options: ['free', 'pro'] }]);
  });
});

describe('loadFunnelSubscribers', () => {
  it("keeps funnels apart and, when complete, removes only that funnel's absent rows", async () => {
    await w.loadFunnelSubscribers(1, [subscriber(1, 1), subscriber(2, 1)], ctx(), { complete: true });
    await w.loadFunnelSubscribers(2, [subscriber(1, 2)], ctx(), { complete: true });
    const s = await w.loadFunnelSubscribers(1, [subscriber(1, 1, 'completed')], ctx(), { complete: true });
    expect(s).toEqual({ inserted: 0, updated: 1, unchanged: 0, deleted: 1 });
    expect(await w.query('SELECT funnel_id, id, status, json_array_length(metrics) AS m FROM funnel_subscribers ORDER BY ALL')).toEqual([
      { funnel_id: 1, id: 1, status: 'completed', m: 1 },
      { funnel_id: 2, id: 1, status: 'active', m: 1 },
    ]);
    await expect(w.loadFunnelSubscribers(1, [subscriber(3, 2)], ctx(), { complete: false })).rejects.toMatchObject({ code: 'WAREHOUSE_INPUT_INVALID' });
  });
});

describe('report snapshots', () => {
  it('maps report names to tables', () => {
    expect(reportTableFor('overview')).toBe('report_overview');
    expect(reportTableFor('/reports/subscriber-growth')).toBe('report_subscriber_growth');
    expect(reportTableFor('reports/campaigns/12/email-stats')).toBe('report_campaign_email_stats');
    expect(reportTableFor('reports/funnels/3/conversion-stats')).toBe('report_funnel_conversion_stats');
    expect(reportTableFor('reports/automations/3/steps')).toBe('report_automation_steps');
    expect(reportTableFor('top-subscribers')).toBe('report_other');
  });

  it('adds one row per snapshot and flattens automation steps into funnel_step_dropoff', async () => {
    await w.loadEntities('funnels', [{ id: 3, title: 'Welcome', trigger_name: 'user_registration', status: 'published', subscribers_count: 100, created_at: null, updated_at: null, raw: {} }], ctx(), {
      complete: true,
    });
    const stats = [
      { label: 'Entrance', count: 100, sequence_id: 0, type: 'root', percent: 100, percent_text: 100, previous_step_count: 100, drop_count: 0, drop_percent: 0 },
      { label: 'Email 1', count: 80, sequence_id: 11, type: 'action', percent: 80, percent_text: 80, previous_step_count: 100, drop_count: 20, drop_percent: 20 },
      { label: 'Email 2', count: 30, sequence_id: 12, type: 'action', percent: 30, percent_text: 30, previous_step_count: 80, drop_count: 50, drop_percent: 62.5 },
    ];
    await w.insertReportSnapshot({ report: 'reports/automations/3/steps', params: { funnel_id: 3 }, data: { funnel: { id: 3 }, stats: stats.slice(0, 2) } }, ctx(new Date('2026-01-01T00:00:00Z')));
    await w.insertReportSnapshot({ report: 'reports/automations/3/steps', params: { funnel_id: 3 }, data: { funnel: { id: 3 }, stats } }, ctx(new Date('2026-01-02T00:00:00Z')));
    await w.insertReportSnapshot({ report: 'overview', params: { date_range: '30_days' }, data: { total: 5 } }, ctx());
    expect(await w.query('SELECT count(*) AS n FROM report_automation_steps')).toEqual([{ n: 2 }]);
    expect(await w.query(`SELECT params->>'date_range' AS r, data->>'total' AS t FROM report_overview`)).toEqual([{ r: '30_days', t: '5' }]);
    expect(await w.query('SELECT funnel_title, label, reached, dropped, percent_of_entrants FROM funnel_step_dropoff')).toEqual([
      { funnel_title: 'Welcome', label: 'Entrance', reached: 100, dropped: 0, percent_of_entrants: 100 },
      { funnel_title: 'Welcome', label: 'Email 1', reached: 80, dropped: 20, percent_of_entrants: 80 },
      { funnel_title: 'Welcome', label: 'Email 2', reached: 30, dropped: 50, percent_of_entrants: 30 },
    ]);
  });
});

describe('sync state and runs', () => {
  it('keeps one cursor per stream and one row per run and stream', async () => {
    expect(await w.getSyncState('contacts')).toBeNull();
    await w.setSyncState('contacts', { lastId: 10 });
    await w.setSyncState('contacts', { lastId: 20, page: 3 });
    expect(await w.getSyncState('contacts')).toEqual({ lastId: 20, page: 3 });
    const run = {
      runId: 'r1',
      stream: 'contacts',
      mode: 'backfill' as const,
      startedAt: new Date('2026-01-01T00:00:00Z'),
      status: 'running' as const,
      pages: 1,
      requests: 2,
      inserted: 3,
      updated: 0,
      unchanged: 0,
      deleted: 0,
    };
    await w.recordRun(run);
    await w.recordRun({ ...run, status: 'succeeded', finishedAt: new Date('2026-01-01T00:05:00Z'), pages: 9 });
    expect(await w.query('SELECT status, pages, finished_at, error FROM _sync_runs')).toEqual([{ status: 'succeeded', pages: 9, finished_at: new Date('2026-01-01T00:05:00Z'), error: null }]);
  });
});
