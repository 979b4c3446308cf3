import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowHeader } from '../../src/simulator/allow-header.js';
import { ALL_CAPABILITIES, type RunningSimulator } from '../../src/simulator/index.js';
import { buildRouter, routeDefs } from '../../src/simulator/route-table.js';
import { captureNames, loadCapture, replay, type Capture } from './capture-replay.js';
import { api, withSim, type ApiResponse, type Json } from './helpers.js';

// The response headers of fixtures/fluentcrm-2.9 (both sites) that depend on the route and the
// caller, against the simulator in real mode: Allow (every method of the matched route, as
// WordPress lists them) and the no-cache headers. The other headers are WordPress's and PHP's
// constants (X-Powered-By, Link, X-Robots-Tag, ...), which the simulator does not send.

const BASE = '/wp-json/fluent-crm/v2';
const ADMIN = { username: 'admin', password: 'captured-admin-password-1' };
const EDITOR = { username: 'editor1', password: 'captured-editor-password-1' };
const USERS = [
  { ...ADMIN, capabilities: [...ALL_CAPABILITIES] },
  { ...EDITOR, capabilities: [] },
];

/**
 * Captures of routes real mode does not serve (docs/simulator.md lists them): it answers 404
 * rest_no_route, without the Allow header the plugin sends there.
 */
const UNSERVED = new Set<string>([]);

/**
 * Routes real mode serves that the plugin's index lacks, on purpose: the simulator's own bounce
 * service and outbound-webhook tools (for tests of a receiver), the interface's bounce route, the
 * report catch-all (404 for the interface's reports) and the plugin's bounce pattern.
 */
const SIMULATOR_OWN = new Set(['/public/bounce_handler/simulator', '/public/bounce-handler', '/webhooks/:id/test', '/webhooks/:id/deliveries', '/reports/*', '/public/bounce_handler/*']);

/** The caller of a capture, from its `request.auth` (and its name for the unknown user). */
function callerOf(c: Capture): { username: string; password: string } | null {
  if (c.name.endsWith('_unknown_user')) return { username: 'no-such-user', password: 'some-password-1' };
  const auth = c.request.auth ?? '';
  if (auth === 'none') return null;
  if (auth.includes('<wrong application password>')) return { ...ADMIN, password: 'wrong-password-1' };
  return auth.startsWith('Basic editor1') ? EDITOR : ADMIN;
}

describe('real mode: the route- and caller-dependent headers as captured', () => {
  let sim: RunningSimulator;
  let noCompanies: RunningSimulator;
  /** Every capture of a REST route real mode serves, replayed once, in name order. */
  const served: Array<{ c: Capture; r: ApiResponse }> = [];

  beforeAll(async () => {
    ({ sim } = await withSim({ contacts: 80, seed: 4, mode: 'real', credentials: ADMIN, users: USERS }));
    ({ sim: noCompanies } = await withSim({ contacts: 10, seed: 4, mode: 'real', credentials: ADMIN, users: USERS, companyModule: false }));
    for (const name of [...captureNames(), ...captureNames('site-ny')]) {
      const c = loadCapture(name);
      if (!c.request.path.startsWith(BASE)) continue; // the site-URL incoming webhook: real-mode-site-endpoints.test.ts
      const r = await replay(name === 'GET_companies_module_disabled' ? noCompanies : sim, c, { who: callerOf(c) });
      if (!UNSERVED.has(name)) served.push({ c, r });
      else if (r.status !== 404 || (r.json as Json)?.code !== 'rest_no_route' || r.headers.get('allow') !== null) throw new Error(`${name}: listed as not served, got ${r.status}`);
    }
  });
  afterAll(async () => {
    await sim?.close();
    await noCompanies?.close();
  });

  /** Where the simulator's `names` headers differ from the capture's (absent ones included). */
  const differences = (names: readonly string[]): string[] =>
    served.flatMap(({ c, r }) =>
      names
        .filter((h) => (c.headers[h] ?? null) !== r.headers.get(h))
        .map((h) => `${c.name} (${c.status}, simulator ${r.status}): ${h} ${JSON.stringify(r.headers.get(h))}, captured ${JSON.stringify(c.headers[h] ?? null)}`),
    );

  it('every capture of a served route gets the Allow header it shows, or none where it shows none', () => {
    expect(differences(['allow'])).toEqual([]);
    expect(served.length).toBeGreaterThan(220);
  });

  it('no-cache headers only for a logged-in caller: none on the 401s, and Vary: Origin on a GET without valid credentials', async () => {
    expect(differences(['cache-control', 'expires', 'vary'])).toEqual([]);
    for (const name of ['GET_subscribers_no_auth', 'GET_subscribers_wrong_password', 'GET_subscribers_unknown_user', 'GET_unknown_route_no_auth']) {
      const { c, r } = served.find((x) => x.c.name === name)!;
      expect([name, r.status, r.headers.get('cache-control'), r.headers.get('expires'), r.headers.get('vary')]).toEqual([name, c.status, null, null, 'Origin']);
    }
    // The one public route captured (POST_public_bounce_handler_unknown_service, a service real
    // mode does not serve) sent them without credentials: so do the simulator's bounce handlers.
    expect(loadCapture('POST_public_bounce_handler_unknown_service').headers['cache-control']).toBe('no-cache, must-revalidate, max-age=0');
    const bounce = await api(sim, null)('POST', '/public/bounce_handler/simulator', { email: 'x@example.test' });
    expect([bounce.status, bounce.headers.get('cache-control'), bounce.headers.get('vary')]).toEqual([200, 'no-cache, must-revalidate, max-age=0', null]);
  });

  it('every route real mode registers lists the methods of the plugin route it stands for (the captured route index)', () => {
    const index = loadCapture('GET_wp-json_namespace_fluent-crm_v2').body.routes as Record<string, { methods: string[] }>;
    const plugin = Object.entries(index).map(([route, r]) => ({ re: new RegExp(`^${route.slice('/fluent-crm/v2'.length).replace(/\(\?P</g, '(?<')}$`), methods: r.methods }));
    const router = buildRouter('real');
    const admin = USERS[0]!;
    const report: string[] = [];
    for (const path of new Set(routeDefs('real').map((d) => d.path))) {
      const sample = path.replace(/:[A-Za-z]+/g, '7').replace(/\*$/, 'some-report');
      const theirs = plugin.find((p) => p.re.test(sample));
      if (!theirs && !SIMULATOR_OWN.has(path)) report.push(`${path}: not in the plugin's route index, so a real site answers 404 rest_no_route`);
      // A route of the simulator's own (below): its own methods.
      const want = theirs
        ? theirs.methods.join(', ')
        : router
            .onPath(path)
            .map((d) => d.method)
            .join(', ');
      const got = allowHeader(router, path, true, admin);
      if (got !== want) report.push(`${path}: ${got ?? '(none)'}, plugin ${theirs ? want : '(no such route)'}`);
    }
    expect(report).toEqual([]);
  });

  it('on a route the plugin has, real mode serves no method the plugin lacks (the interface writes the client falls back from answer 404 rest_no_route)', async () => {
    const index = loadCapture('GET_wp-json_namespace_fluent-crm_v2').body.routes as Record<string, { methods: string[] }>;
    const plugin = Object.entries(index).map(([route, r]) => ({ re: new RegExp(`^${route.slice('/fluent-crm/v2'.length).replace(/\(\?P</g, '(?<')}$`), methods: r.methods }));
    // Served in real mode for spec-mode tests of the funnel editor; crmsync does not call it.
    const known = new Set(['GET /funnels/:id/sequences']);
    const extra = routeDefs('real')
      .filter((d) => plugin.find((p) => p.re.test(d.path.replace(/:[A-Za-z]+/g, '7')))?.methods.includes(d.method) === false)
      .map((d) => `${d.method} ${d.path}`)
      .filter((r) => !known.has(r));
    expect(extra).toEqual([]);
    const noRoute = loadCapture('PATCH_subscribers_id').body;
    const call = api(sim);
    for (const [method, path] of [
      ['PUT', '/companies/attach-subscribers'],
      ['PUT', '/funnels/1/status'],
      ['POST', '/funnels/1/subscribers'],
      ['DELETE', '/funnels/1/subscribers/3'],
    ] as const) {
      const r = await call(method, path, { status: 'paused', subscriber_ids: [1], company_ids: [1], subscribers: [1] });
      expect([method, path, r.status, r.json]).toEqual([method, path, 404, noRoute]);
    }
  });

  it("a caller who may use some of a route's methods is told those (WordPress runs each permission check)", async () => {
    const { sim: s } = await withSim({ contacts: 5, seed: 4, mode: 'real' });
    try {
      const manager = s.managerCredentials!;
      const read = await api(s, manager)('GET', '/subscribers/1');
      expect([read.status, read.headers.get('allow')]).toEqual([200, 'GET, PUT']);
      const del = await api(s, manager)('DELETE', '/subscribers/1');
      expect([del.status, del.headers.get('allow')]).toEqual([403, 'GET, PUT']);
      expect((await api(s)('GET', '/subscribers/1')).headers.get('allow')).toBe('GET, DELETE, PUT');
    } finally {
      await s.close();
    }
  });

  it('spec mode names every method registered on the path', async () => {
    const { sim: s, call } = await withSim({ contacts: 5, seed: 4 });
    try {
      expect((await call('GET', '/subscribers/1')).headers.get('allow')).toBe('GET, DELETE, PUT');
      expect((await call('GET', '/subscribers')).headers.get('allow')).toBe('GET, POST');
    } finally {
      await s.close();
    }
  });
});
