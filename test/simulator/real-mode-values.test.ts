import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { loadCapture, replay, withoutBench, type Capture } from './capture-replay.js';
import { api, withSim, type Api, type ApiResponse, type Json } from './helpers.js';

// Values, not only shapes, of fixtures/fluentcrm-2.9 that a client reads: the paginator past the
// end, the default page size, small fixed answers, the types of listed notes, the headers every
// REST answer carries and the bounce handler's answer to a service it does not know.

const BASE = '/wp-json/fluent-crm/v2';
const ADMIN = { username: 'admin', password: 'captured-admin-password-1' };
const PAGINATOR_META = ['total', 'per_page', 'current_page', 'last_page', 'next_page_url', 'prev_page_url', 'from', 'to'] as const;

/** The paginator without its rows. */
const meta = (p: Json): Record<string, unknown> => Object.fromEntries(PAGINATOR_META.map((k) => [k, p[k]]));

/** What the paginator of page 1 at the default size (15) holds for `total` rows of `route`. */
const firstPageOf15 = (route: string, total: number): Record<string, unknown> => ({
  total,
  per_page: 15,
  current_page: 1,
  last_page: Math.ceil(total / 15),
  next_page_url: total > 15 ? `${BASE}${route}?page=2` : null,
  prev_page_url: null,
  from: total > 0 ? 1 : null,
  to: total > 0 ? Math.min(total, 15) : null,
});

describe('real mode: captured values (fixtures/fluentcrm-2.9)', () => {
  let sim: RunningSimulator;
  let call: Api;
  // Pinned to a capture's second before each request whose answer carries the clock.
  let clock = Date.parse('2026-11-21T04:55:00Z');

  beforeAll(async () => {
    // 63 contacts, as on the captured site when GET_subscribers_page_99 was taken.
    ({ sim, call } = await withSim({ contacts: 63, seed: 4, mode: 'real', credentials: ADMIN, now: () => clock }));
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('GET /subscribers?page=99 past the end: the captured paginator, value for value', async () => {
    const c = loadCapture('GET_subscribers_page_99');
    expect(sim.truth().contacts).toHaveLength(c.body.subscribers.total);
    const r = await replay(sim, c);
    expect(r.status).toBe(c.status);
    // The capture's URLs are relative to the site, and the simulator's base path is the site's.
    expect(withoutBench(r.json)).toEqual(withoutBench(c.body));
    expect(r.json.subscribers).toMatchObject({ current_page: 99, data: [], from: null, to: null, next_page_url: null, prev_page_url: `${BASE}/subscribers?page=98` });
    expect(typeof r.json.__bench).toBe('number');
  });

  it('default per_page is 15 (as captured) for tags, funnels, a contact’s notes and companies', async () => {
    for (const [name, key] of [
      ['GET_tags', 'tags'],
      ['GET_funnels', 'funnels'],
      ['GET_subscribers_id_notes', 'notes'],
      ['GET_companies', 'companies'],
    ] as const) {
      const c = loadCapture(name);
      expect([name, c.request.query_string, c.body[key].per_page]).toEqual([name, null, 15]);
    }
    // More than a page of each that real mode can create, so that the default also decides the rows.
    const contact = sim.truth().contacts[0]!.id;
    for (let i = 0; i < 16; i++) {
      expect((await call('POST', `/subscribers/${contact}/notes`, { note: { title: `Note ${i}`, description: 'x', type: 'note' } })).status).toBe(200);
      expect((await call('POST', '/tags', { title: `Value tag ${i}` })).status).toBe(200);
      expect((await call('POST', '/companies', { name: `Value company ${i}` })).status).toBe(200);
    }
    const truth = sim.truth();
    const totals: [string, string, number][] = [
      ['/tags', 'tags', truth.tags.length],
      ['/funnels', 'funnels', truth.funnels.length],
      [`/subscribers/${contact}/notes`, 'notes', 16],
      ['/companies', 'companies', truth.companies.length],
    ];
    for (const [route, key, total] of totals) {
      const r = await call('GET', route);
      expect([route, r.status, meta(r.json[key]), r.json[key].data.length]).toEqual([route, 200, firstPageOf15(route, total), Math.min(total, 15)]);
    }
    expect(totals.filter(([, , total]) => total > 15).map(([route]) => route)).toEqual(['/tags', `/subscribers/${contact}/notes`, '/companies']);
  });

  it('GET /reports/ping answers {"message":"pong"} and GET /tags/999999 {"tag":null}, as captured', async () => {
    const ping = loadCapture('GET_reports_ping');
    const pong = await replay(sim, ping);
    expect([pong.status, withoutBench(pong.json)]).toEqual([200, { message: 'pong' }]);
    expect(withoutBench(pong.json)).toEqual(withoutBench(ping.body));
    expect(typeof pong.json.__bench).toBe('number');
    const none = loadCapture('GET_tags_999999');
    const tag = await replay(sim, none);
    expect([tag.status, tag.json]).toEqual([200, { tag: null }]);
    expect(tag.json).toEqual(none.body);
  });

  it('a listed note has subscriber_id, created_by and is_private as strings; the POST answer is the captured one', async () => {
    const added = loadCapture('POST_subscribers_id_notes');
    const listed = loadCapture('GET_subscribers_id_notes');
    const contact = sim.truth().contacts[1]!.id;
    clock = Date.parse('2026-11-21T04:55:38Z'); // the notes' captured created_at
    const post = await replay(sim, added, { path: `/subscribers/${contact}/notes` });
    expect([post.status, typeof post.json.note.subscriber_id, typeof post.json.note.created_by]).toEqual([200, 'number', 'number']);
    expect([typeof added.body.note.subscriber_id, typeof added.body.note.created_by]).toEqual(['number', 'number']);
    // The created model's attributes only, in their order: no parent_id, status or is_private.
    expect(Object.keys(post.json.note)).toEqual(Object.keys(added.body.note));
    expect(post.json.note).toEqual({ ...added.body.note, id: post.json.note.id, subscriber_id: contact });
    const r = await call('GET', `/subscribers/${contact}/notes`);
    const row = r.json.notes.data.find((n: Json) => n.id === post.json.note.id);
    const captured = listed.body.notes.data[0];
    expect([typeof captured.subscriber_id, typeof captured.created_by, typeof captured.is_private]).toEqual(['string', 'string', 'string']);
    expect(row).toEqual({ ...captured, id: post.json.note.id, subscriber_id: String(contact) });
  });

  it('every REST answer names X-WP-Total, X-WP-TotalPages and Link in Access-Control-Expose-Headers, and sends neither X-WP-Total nor WWW-Authenticate (401s included)', async () => {
    const captured = 'X-WP-Total, X-WP-TotalPages, Link';
    const editor = { username: 'editor1', password: 'captured-editor-password-1' };
    const { sim: withEditor } = await withSim({ contacts: 5, seed: 4, mode: 'real', credentials: ADMIN, users: [{ ...editor, capabilities: [] }] });
    try {
      const cases: [string, RunningSimulator, { username: string; password: string } | null][] = [
        ['GET_subscribers_page_99', sim, ADMIN],
        ['GET_tags_999999', sim, ADMIN],
        ['GET_subscribers_no_auth', sim, null],
        ['GET_subscribers_wrong_password', sim, { ...ADMIN, password: 'wrong-password-1' }],
        ['GET_subscribers_non_admin_editor', withEditor, editor],
        ['GET_unknown_route_no_auth', sim, null],
        ['GET_subscribers_per_page_-1', sim, ADMIN],
        ['GET_subscribers_no_accept_header_per_page_0', sim, ADMIN],
        ['POST_public_bounce_handler_unknown_service', sim, null],
      ];
      const seen: unknown[] = [];
      const want: unknown[] = [];
      for (const [name, s, who] of cases) {
        const c: Capture = loadCapture(name);
        const r: ApiResponse = await replay(s, c, { who });
        const pick = (get: (h: string) => string | null): unknown[] => [name, c.status, ...['access-control-expose-headers', 'x-wp-total', 'x-wp-totalpages', 'www-authenticate'].map(get)];
        seen.push(pick((h) => (r.status === c.status ? r.headers.get(h) : `status ${r.status}`)));
        want.push(pick((h) => c.headers[h] ?? null));
      }
      expect(seen).toEqual(want);
      expect(want.every((w) => (w as unknown[])[2] === captured)).toBe(true);
      expect(want.filter((w) => (w as unknown[])[1] === 401)).toHaveLength(2);
    } finally {
      await withEditor.close();
    }
  });

  it('the bounce handler answers a service it does not know as captured: 200 {success: 0, ..., time: the clock in Unix seconds}', async () => {
    const c = loadCapture('POST_public_bounce_handler_unknown_service');
    clock = c.body.time * 1000 + 999; // the captured second, from the simulator's clock
    const r = await replay(sim, c, { who: null });
    expect([r.status, r.headers.get('content-type'), r.headers.get('allow')]).toEqual([c.status, c.headers['content-type'], c.headers.allow]);
    expect(withoutBench(r.json)).toEqual(withoutBench(c.body));
    expect(r.json).toEqual({ success: 0, message: '', service: 'unknownsvc', result: '', time: 1795237019, __bench: expect.any(Number) });
    expect(Object.keys(r.json)).toEqual(Object.keys(c.body));
    // Another service, on the plugin's other bounce route (…/handle/{security_code}), a later second.
    clock += 60_000;
    const other = await api(sim, null)('POST', '/public/bounce_handler/other-svc_2/handle/code-1', { email: 'x@example.test' });
    expect([other.status, withoutBench(other.json)]).toEqual([200, { success: 0, message: '', service: 'other-svc_2', result: '', time: 1795237079 }]);
    // The simulator's own service keeps its answer.
    const own = await api(sim, null)('POST', '/public/bounce_handler/simulator?security_code=wrong', { email: 'x@example.test' });
    expect([own.status, own.json]).toEqual([200, { status: false, message: 'Invalid security code', time: 1795237079 }]);
  });
});
