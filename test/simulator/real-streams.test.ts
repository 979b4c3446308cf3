import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { withSim, type Api, type Json } from './helpers.js';
import { shapeDiff } from './shape.js';

// The second capture (site-ny): custom values, funnel subscribers, the plugin's report routes.
const SITE_NY = join(import.meta.dirname, '../../../shared/fixtures/fluentcrm-2.9/site-ny');

interface Fixture {
  request: { query_string: string | null };
  status: number;
  headers: Record<string, string>;
  body: Json;
}

function fixture(name: string): Fixture {
  const file = join(SITE_NY, `${name}.json`);
  if (!existsSync(file)) throw new Error(`Captured fixture ${file} is missing: these tests compare the simulator with it (check out ../shared next to the repository).`);
  return JSON.parse(readFileSync(file, 'utf8')) as Fixture;
}

/** The fixture's body without the server's timing field. */
function bodyOf(f: Fixture): Json {
  const { __bench: _b, ...rest } = f.body as Record<string, unknown>;
  return rest;
}

// Keys of the real plugin the simulator does not model (UI helpers, funnel internals).
// `plan` and `signup_score` are the captured site's custom field slugs (data, not shape).
const UNMODELLED = new Set([
  'plan',
  'signup_score',
  'subscriber',
  'next_sequence_item',
  'last_sequence',
  'source_ref_id',
  'notes',
  'starting_sequence_id',
  'next_sequence',
  'last_sequence_status',
  'last_executed_time',
]);

/** A series body's shape: its top-level keys (without __bench), and whether every key is a day mapped to an integer. */
function seriesShape(body: Json): { keys: string[]; daily: boolean } {
  const stats = body.stats as Record<string, unknown>;
  return {
    keys: Object.keys(body as object).filter((k) => k !== '__bench'),
    daily: Object.entries(stats).every(([k, v]) => /^\d{4}-\d{2}-\d{2}$/.test(k) && Number.isInteger(v)),
  };
}

const NOW = Date.parse('2025-12-15T17:00:00Z');
let sim: RunningSimulator;
let call: Api;

beforeAll(async () => {
  ({ sim, call } = await withSim({ contacts: 200, seed: 11, mode: 'real', timezone: 'America/New_York', now: () => NOW }));
});
afterAll(async () => {
  await sim.close();
});

describe('real mode: custom field values as the plugin sends them (site-ny)', () => {
  it('lists carry `custom_fields` only with custom_fields=true, and the envelope echoes the flag', async () => {
    for (const [name, query, echo] of [
      ['GET_subscribers_custom_fields_true', 'custom_fields=true', 'true'],
      ['GET_subscribers_custom_fields_false', 'custom_fields=false', 'false'],
      ['GET_subscribers_no_custom_fields', '', null],
    ] as const) {
      const f = fixture(name);
      const r = await call('GET', `/subscribers?per_page=5&page=1&sort_by=id&sort_type=asc${query ? `&${query}` : ''}`);
      expect(r.status).toBe(f.status);
      expect(shapeDiff(f.body, r.json, '$', UNMODELLED)).toEqual([]);
      expect(r.json.custom).toBe(f.body.custom);
      expect(r.json.custom).toBe(echo);
      const want = (f.body.subscribers.data as Json[]).every((row) => 'custom_fields' in row);
      expect((r.json.subscribers.data as Json[]).every((row) => 'custom_fields' in row)).toBe(want);
      expect((r.json.subscribers.data as Json[]).some((row) => 'custom_values' in row)).toBe(false);
    }
    // Values are strings by slug; a contact without values gets [] (as captured).
    const all = await call('GET', '/subscribers?per_page=200&custom_fields=true');
    const truth = new Map(sim.truth().contacts.map((c) => [c.id, c.custom_values]));
    for (const row of all.json.subscribers.data as Json[]) {
      const want = truth.get(row.id) as Record<string, unknown>;
      if (Object.keys(want).length === 0) expect(row.custom_fields).toEqual([]);
      else expect(row.custom_fields).toEqual(want);
    }
  });

  it('a single contact carries `custom_values` only with with[]=subscriber.custom_values', async () => {
    const id = sim.truth().contacts.find((c) => Object.keys(c.custom_values as object).length > 0)?.id as number;
    const withValues = fixture('GET_subscribers_id_with_subscriber.custom_values');
    const r = await call('GET', `/subscribers/${id}?with[]=subscriber.custom_values`);
    expect(shapeDiff(withValues.body, r.json, '$', UNMODELLED)).toEqual([]);
    expect(r.json.subscriber.custom_values).toEqual(sim.truth().contacts.find((c) => c.id === id)?.custom_values);
    const flagOnly = fixture('GET_subscribers_id_custom_fields_true');
    expect('custom_values' in flagOnly.body.subscriber).toBe(false);
    const plain = await call('GET', `/subscribers/${id}?custom_fields=true`);
    expect('custom_values' in plain.json.subscriber).toBe(false);
    expect('custom_fields' in plain.json.subscriber).toBe(false);
  });
});

describe('real mode: funnel subscribers filter literally by status (site-ny)', () => {
  it('status=all answers the empty paginator exactly as captured', async () => {
    const f = fixture('GET_funnels_id_subscribers_status_all');
    expect(f.request.query_string).toBe('status=all');
    const r = await call('GET', '/funnels/1/subscribers?status=all');
    expect(r.status).toBe(200);
    const { __bench: _b, ...body } = r.json;
    expect(body).toEqual(bodyOf(f));
  });

  it('no status returns every subscriber; a status returns those with it', async () => {
    const shape = fixture('GET_funnels_id_subscribers');
    const want = sim.truth().funnelSubscribers.filter((s) => s.funnelId === 1);
    const r = await call('GET', `/funnels/1/subscribers?per_page=500`);
    expect(shapeDiff(shape.body, r.json, '$', UNMODELLED)).toEqual([]);
    expect(r.json.funnel_subscribers.total).toBe(want.length);
    expect(want.length).toBeGreaterThan(0);
    for (const status of ['active', 'completed']) {
      const only = await call('GET', `/funnels/1/subscribers?per_page=500&status=${status}`);
      expect(only.json.funnel_subscribers.total).toBe(want.filter((s) => s.status === status).length);
    }
  });
});

describe('real mode: the plugin report routes (site-ny)', () => {
  it("the interface's report routes answer 404 rest_no_route, byte for byte as captured", async () => {
    for (const [name, path] of [
      ['GET_reports_overview', '/reports/overview'],
      ['GET_reports_subscriber-growth', '/reports/subscriber-growth'],
      ['GET_reports_top-subscribers', '/reports/top-subscribers'],
      ['GET_reports_campaigns_id_email-stats', '/reports/campaigns/1/email-stats'],
      ['GET_reports_funnels_id_conversion-stats', '/reports/funnels/1/conversion-stats'],
      ['GET_reports_automations_id_steps', '/reports/automations/1/steps'],
    ]) {
      const f = fixture(name as string);
      const r = await call('GET', path as string);
      expect([name, r.status]).toEqual([name, f.status]);
      expect(r.json).toEqual(f.body);
    }
  });

  it('dashboard-stats has the captured shape, with integer counts from the data', async () => {
    const f = fixture('GET_reports_dashboard-stats');
    const r = await call('GET', '/reports/dashboard-stats');
    expect(r.status).toBe(200);
    expect(shapeDiff({ stats: f.body.stats }, r.json)).toEqual([]);
    const truth = sim.truth();
    expect(r.json.stats.total_subscribers.count).toBe(truth.contacts.filter((c) => c.status === 'subscribed').length);
    expect(r.json.stats.tags.count).toBe(truth.tags.length);
    expect(r.json.stats.total_campaigns.count).toBe(truth.campaigns.length);
  });

  it('series: 31 daily keys by default; date_range[] excludes its end day; > 92 days gives month keys', async () => {
    const f = fixture('GET_reports_subscribers');
    const r = await call('GET', '/reports/subscribers');
    expect(seriesShape(r.json)).toEqual(seriesShape(f.body));
    const keys = Object.keys(r.json.stats as object);
    expect(keys.length).toBe(Object.keys(f.body.stats as object).length);
    expect(keys.at(-1)).toBe('2025-12-15');
    expect(Object.values(r.json.stats as object).every((v) => Number.isInteger(v))).toBe(true);

    const ranged = fixture('GET_reports_subscribers_date_range_30_days');
    const [from, to] = decodeURIComponent(ranged.request.query_string ?? '')
      .split('&')
      .map((p) => p.split('=')[1] as string);
    expect(Object.keys(ranged.body.stats as object).at(-1)).not.toBe(to);
    const r2 = await call('GET', '/reports/subscribers?date_range[]=2025-01-01&date_range[]=2025-12-01');
    expect(Object.keys(r2.json.stats as object)[0]).toBe('Jan 2025');
    expect(from).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const r3 = await call('GET', '/reports/subscribers?date_range[]=2025-06-01&date_range[]=2025-07-01');
    const stats = r3.json.stats as Record<string, number>;
    expect(Object.keys(stats).at(-1)).toBe('2025-06-30');
    // Subscribed contacts by their site-local creation day.
    const want = sim.truth().contacts.filter((c) => c.status === 'subscribed' && String(c.created_at) >= '2025-06-01' && String(c.created_at) < '2025-07-01').length;
    expect(Object.values(stats).reduce((a, b) => a + b, 0)).toBe(want);

    const bad = await call('GET', '/reports/subscribers?date_range[]=yesterday&date_range[]=x');
    expect(bad.status).toBe(423);
    for (const name of ['email-sents', 'email-opens', 'email-clicks']) {
      const e = await call('GET', `/reports/${name}`);
      expect(seriesShape(e.json)).toEqual(seriesShape(fixture(`GET_reports_${name}`).body));
    }
  });

  it('/funnels/{id}/report gives per-step counts and drop-off in the captured shape', async () => {
    const f = fixture('GET_funnels_id_report');
    const r = await call('GET', '/funnels/1/report');
    expect(r.status).toBe(200);
    expect(shapeDiff(f.body, r.json)).toEqual([]);
    const metrics = r.json.stats.metrics as Json[];
    expect(metrics[0]).toMatchObject({ sequence_id: 0, type: 'root', label: 'Entrance' });
    const entrants = new Set(
      sim
        .truth()
        .funnelSubscribers.filter((s) => s.funnelId === 1)
        .map((s) => s.subscriberId),
    );
    expect(metrics[0].count).toBe(entrants.size);
    for (let i = 1; i < metrics.length; i++) expect(metrics[i].drop_count).toBe(metrics[i - 1].count - metrics[i].count);
  });
});
