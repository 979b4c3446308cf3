import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { checkBaseUrl, requestTarget } from '../../src/crm/transport.js';
import { startSimulator } from '../../src/simulator/index.js';
import { clientFor } from './helpers/sim-client.js';

/** Issue 14 item 8: WordPress sites without pretty permalinks take the REST route from `?rest_route=`. */
describe('a CRM_BASE_URL of the form https://site/?rest_route=/fluent-crm/v2', () => {
  it('is accepted; any other query string is still refused', () => {
    expect(checkBaseUrl('https://crm.example.com/?rest_route=/fluent-crm/v2', false).searchParams.get('rest_route')).toBe('/fluent-crm/v2');
    expect(checkBaseUrl('https://crm.example.com/index.php?rest_route=/fluent-crm/v2/', false).pathname).toBe('/index.php');
    expect(() => checkBaseUrl('https://crm.example.com/?rest_route=/fluent-crm/v2&token=abc', false)).toThrow(ConfigError);
    expect(() => checkBaseUrl('https://crm.example.com/wp-json/fluent-crm/v2?token=abc', false)).toThrow(ConfigError);
    expect(() => checkBaseUrl('https://crm.example.com/?rest_route=/fluent-crm/v2#x', false)).toThrow(ConfigError);
  });

  it('puts the route in rest_route and the request query after it', () => {
    const base = new URL('https://crm.example.com/?rest_route=/fluent-crm/v2');
    expect(requestTarget(base, '/subscribers', { page: 2, per_page: 15 })).toBe('/?rest_route=/fluent-crm/v2/subscribers&page=2&per_page=15');
    expect(requestTarget(base, '/subscribers/7', { with: ['stats', 'subscriber.custom_values'] })).toBe(
      '/?rest_route=/fluent-crm/v2/subscribers/7&with%5B%5D=stats&with%5B%5D=subscriber.custom_values',
    );
    expect(requestTarget(base, '/tags', undefined)).toBe('/?rest_route=/fluent-crm/v2/tags');
    expect(requestTarget(new URL('https://crm.example.com/wp-json/fluent-crm/v2/'), '/tags', { page: 1 })).toBe('/wp-json/fluent-crm/v2/tags?page=1');
  });

  for (const mode of ['real', 'spec'] as const) {
    it(`reads pages, single records and writes against the simulator (${mode} mode) exactly as through the pretty URL`, async () => {
      const sim = await startSimulator({ contacts: 40, seed: 9, mode });
      const pretty = new URL(sim.baseUrl);
      const plain = `${pretty.origin}/?rest_route=${mode === 'real' ? pretty.pathname.replace('/wp-json', '') : pretty.pathname}`;
      const viaPretty = clientFor(sim);
      const viaRoute = clientFor(sim, { baseUrl: plain });
      try {
        const a = await viaPretty.contacts.listPage({ page: 2, perPage: 10, order: 'asc' });
        sim.resetStats();
        const b = await viaRoute.contacts.listPage({ page: 2, perPage: 10, order: 'asc' });
        expect(b.items.map((c) => c.id)).toEqual(a.items.map((c) => c.id));
        expect(b.currentPage).toBe(2);
        expect(sim.stats().byRoute['GET /subscribers']).toBe(1); // served by the route, not as "no route"
        const one = await viaRoute.contacts.get(a.items[0]!.id, { with: ['stats'] });
        expect(one?.email).toBe(a.items[0]!.email);
        const tag = await viaRoute.tags.create({ title: 'Plain Permalinks' });
        expect((await viaPretty.tags.list()).map((t) => t.title)).toContain(tag.title);
        expect(sim.stats().byRoute['(no route)']).toBeUndefined();
      } finally {
        await viaPretty.close();
        await viaRoute.close();
        await sim.close();
      }
    });
  }
});
