import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { createRng } from '../../src/simulator/rng.js';
import { withSim, type Api } from './helpers.js';

let sim: RunningSimulator;
let call: Api;

beforeAll(async () => {
  ({ sim, call } = await withSim({ contacts: 60, seed: 31 }));
});
afterAll(async () => {
  await sim.close();
});

/** Routes with their methods, so most random requests reach a handler rather than 404. */
const ROUTES: [string, string][] = [
  ['GET', '/subscribers'],
  ['POST', '/subscribers'],
  ['GET', '/subscribers/1'],
  ['PUT', '/subscribers/2'],
  ['DELETE', '/subscribers/3'],
  ['GET', '/subscribers/0'],
  ['GET', '/subscribers/5/notes'],
  ['POST', '/subscribers/5/notes'],
  ['PUT', '/subscribers/5/notes/1'],
  ['GET', '/tags'],
  ['POST', '/tags'],
  ['GET', '/tags/1'],
  ['PUT', '/tags/2'],
  ['DELETE', '/tags/9'],
  ['GET', '/lists'],
  ['POST', '/lists'],
  ['GET', '/lists/2'],
  ['PUT', '/lists/3'],
  ['GET', '/companies'],
  ['POST', '/companies'],
  ['PUT', '/companies/1'],
  ['PUT', '/companies/attach-subscribers'],
  ['GET', '/custom-fields/contacts'],
  ['GET', '/campaigns'],
  ['GET', '/campaigns/1'],
  ['POST', '/campaigns/5/pause'],
  ['POST', '/campaigns/7/resume'],
  ['PUT', '/campaigns/1/title'],
  ['GET', '/campaigns/5/status'],
  ['POST', '/campaigns/2/duplicate'],
  ['GET', '/templates'],
  ['POST', '/templates'],
  ['GET', '/sequences'],
  ['GET', '/sequences/1'],
  ['PUT', '/sequences/2'],
  ['GET', '/funnels'],
  ['GET', '/funnels/2'],
  ['PUT', '/funnels/2/status'],
  ['GET', '/funnels/2/subscribers'],
  ['POST', '/funnels/2/subscribers'],
  ['GET', '/funnels/2/subscribers/3'],
  ['DELETE', '/funnels/2/subscribers/4'],
  ['GET', '/reports/overview'],
  ['GET', '/reports/subscriber-growth'],
  ['GET', '/reports/top-subscribers'],
  ['GET', '/reports/automations/2/steps'],
  ['POST', '/reports/scheduled'],
  ['GET', '/reports/options'],
  ['GET', '/webhooks'],
  ['POST', '/webhooks'],
  ['PUT', '/webhooks/1'],
  ['GET', '/webhooks/1/deliveries'],
  ['GET', '/forms/1/entries'],
];
const QUERY_KEYS = [
  'per_page',
  'page',
  'order_by',
  'order_type',
  'sort_by',
  'sort_type',
  'sort_order',
  'statuses[]',
  'tags[]',
  'lists[]',
  'search',
  'with[]',
  'status',
  'date_range',
  'start_date',
  'end_date',
  'group_by',
  'limit',
  'metric',
  'request_counter',
  'get_by_email',
  'custom_fields',
  'all_tags',
  'sequence_id',
];
const VALUES: unknown[] = ['', '0', '-1', '1', '2', 'abc', 'ASC', 'desc', 'custom', 'stats', 'bogus', '99999999999999999999', 'x'.repeat(300), '%', 'null', 'true', '2026-01-01', '🙂'];
const FIELDS = [
  'email',
  'status',
  'first_name',
  'tags',
  'lists',
  'custom_values',
  'attach_tags',
  'detach_lists',
  'subscriber',
  'note',
  'title',
  'name',
  'url',
  'events',
  'subscribers',
  'subscriber_ids',
  'company_ids',
  '__force_update',
  'recipients',
  'frequency',
];
const BODY_VALUES: unknown[] = [
  null,
  0,
  -5,
  1.5,
  true,
  '',
  'a@b.co',
  'subscribed',
  'x',
  [],
  [1, 2],
  ['a'],
  {},
  { favorite_color: 'Red' },
  { nested: { deep: [1] } },
  'https://example.test/h',
  ['contact.created'],
  'z'.repeat(5000),
];

describe('robustness: random requests never crash the simulator', () => {
  it('answers 300 seeded random requests with a status below 500 and a JSON error body for every 4xx', async () => {
    const rng = createRng(2024);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)] as T;
    const failures: string[] = [];
    for (let i = 0; i < 300; i++) {
      const [method, route] = pick(ROUTES);
      const q = new URLSearchParams();
      for (let k = Math.floor(rng() * 4); k > 0; k--) q.append(pick(QUERY_KEYS), String(pick(VALUES)));
      const body: Record<string, unknown> = {};
      for (let k = Math.floor(rng() * 5); k > 0; k--) body[pick(FIELDS)] = pick(BODY_VALUES);
      const path = `${route}${q.size ? `?${q.toString()}` : ''}`;
      const r = await call(method, path, method === 'GET' ? undefined : rng() < 0.1 ? '{"broken": ' : body);
      if (r.status >= 500) failures.push(`${method} ${path} ${JSON.stringify(body).slice(0, 200)} -> ${r.status} ${r.text.slice(0, 200)}`);
      else if (r.status >= 400 && (typeof r.json?.message !== 'string' || typeof r.json?.data?.status !== 'number'))
        failures.push(`${method} ${path} -> ${r.status} without an error body: ${r.text.slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
    // The server is still healthy afterwards.
    expect((await call('GET', '/subscribers?per_page=1')).status).toBe(200);
  });
});
