import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator, type TruthContact } from '../../src/simulator/index.js';
import { expectLike, loadCapture, replay, withoutBench } from './capture-replay.js';
import { api, type Api, type Json } from './helpers.js';

// The contact routes of fluentcrm-2.9's admin screens that real mode serves beside crmsync's:
// POST /subscribers/sync-segments (site-ny captures), bulk-add-update, search-contacts and
// prev-next-ids (UTC-site captures), replayed with the simulator's contacts in place of the
// captured ones, and the writes' effects: memberships, counts, updated_at and webhook events.

const EVENTS = ['contact.created', 'contact.updated', 'contact.status_changed', 'contact.tag_added', 'contact.tag_removed', 'contact.list_added', 'contact.list_removed'];

let sim: RunningSimulator | undefined;
let receiver: ReturnType<typeof createServer> | undefined;
afterEach(async () => {
  await sim?.close();
  await new Promise((r) => (receiver ? receiver.close(r) : r(undefined)));
  sim = receiver = undefined;
});

/**
 * A real-mode simulator on a clock the test moves, with outbound webhooks on (to a receiver on
 * port 0) so that the events a write emits can be read from its delivery log.
 */
async function start(o: { seed: number; timezone?: string; contacts?: number }): Promise<{ s: RunningSimulator; call: Api; clock: { ms: number }; events: () => Json[][] }> {
  const clock = { ms: Date.parse('2026-11-25T18:06:00Z') };
  receiver = createServer((_req, res) => res.writeHead(204).end());
  await new Promise<void>((r) => receiver!.listen(0, '127.0.0.1', r));
  const s = await startSimulator({ contacts: 60, mode: 'real', now: () => clock.ms, outboundWebhooks: true, allowHttpWebhookUrls: true, webhookTimeScale: 0.001, ...o });
  sim = s;
  const call = api(s);
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  expect((await call('POST', '/webhooks', { name: 'events', url, events: EVENTS })).status).toBe(200);
  const events = (): Json[][] =>
    s.truth().deliveries.map((d) => {
      const p = JSON.parse(d.body) as Json;
      return [p.event, p.data.contact.id, p.data.tag?.id ?? p.data.list?.id ?? null];
    });
  return { s, call, clock, events };
}

const slugs = (xs: Json[]): string[] => xs.map((x) => x.slug as string);
const by = (xs: Json[], slug: string): Json => xs.find((x) => x.slug === slug);

describe('real mode: POST /subscribers/sync-segments as captured (site-ny)', () => {
  it('attaches and detaches a tag and a list by slug, dating the pivot now, keeping updated_at, with the counts and events of the same PUT', async () => {
    const { s, call, clock, events } = await start({ seed: 11, timezone: 'America/New_York' });
    const beta = s.truth().tags.find((t) => t.slug === 'beta-tester')!.id as number;
    const onboarding = s.mutate.createList('Onboarding').id; // the captured site's list
    const free = s.truth().contacts.filter((c) => c.status === 'subscribed' && !c.tags.includes(beta));
    const [id, other] = [free[0]!.id, free[1]!.id];
    // The captured contact's updated_at and last_activity did not move (site-ny README).
    const before0 = loadCapture('site-ny/GET_subscribers_id_before_tag_attach').body.subscriber;
    const counts = async (): Promise<[number, number]> => [
      (await call('GET', '/tags?per_page=50')).json.tags.data.find((t: Json) => t.id === beta).subscribersCount,
      (await call('GET', '/lists')).json.lists.find((l: Json) => l.id === onboarding).totalCount,
    ];

    for (const [step, at, delta, put] of [
      ['attach_tag', '2026-11-25T18:09:53Z', [1, 0], { attach_tags: [beta] }],
      ['attach_list', '2026-11-25T18:09:58Z', [0, 1], { attach_lists: [onboarding] }],
      ['detach_tag', '2026-11-25T18:10:20Z', [-1, 0], { detach_tags: [beta] }],
      ['detach_list', '2026-11-25T18:10:25Z', [0, -1], { detach_lists: [onboarding] }],
    ] as const) {
      const c = loadCapture(`site-ny/POST_subscribers_sync-segments_${step}`);
      const captured = c.body.subscribers[0];
      expect([captured.updated_at, captured.last_activity]).toEqual([before0.updated_at, before0.last_activity]);
      const kind = step.endsWith('tag') ? 'tags' : 'lists';
      const slug = (c.request.body as Json)[step.startsWith('attach') ? 'attach' : 'detach'][0] as string;
      const before = (await call('GET', `/subscribers/${id}`)).json.subscriber;
      const [counted, seen] = [await counts(), events().length];
      clock.ms = Date.parse(at);

      const r = await replay(s, c, { body: { ...(c.request.body as Json), subscribers: [id] } });
      expectLike(c, r);
      expect([r.headers.get('allow'), r.json.message, r.json.subscribers.length]).toEqual([c.headers.allow, c.body.message, 1]);
      const row = r.json.subscribers[0];
      expect(Object.keys(row)).toEqual(Object.keys(captured));
      expect([row.id, row.updated_at, row.last_activity]).toEqual([id, before.updated_at, before.last_activity]);
      if (step.startsWith('attach')) {
        expect(slugs(row[kind])).toContain(slug);
        expect(by(row[kind], slug).pivot).toEqual({ ...by(captured[kind], slug).pivot, subscriber_id: String(id), object_id: String(by(row[kind], slug).id) });
      } else expect(slugs(row[kind])).not.toContain(slug);
      expect(row[kind].filter((x: Json) => x.slug !== slug)).toEqual(before[kind].filter((x: Json) => x.slug !== slug));
      const after = (await call('GET', `/subscribers/${id}`)).json.subscriber;
      expect([after.tags, after.lists, after.updated_at]).toEqual([row.tags, row.lists, before.updated_at]);
      expect(await counts()).toEqual([counted[0] + delta[0], counted[1] + delta[1]]);

      // The same change through PUT on another contact emits the same events.
      const synced = events().slice(seen);
      expect(synced.length).toBeGreaterThan(1);
      expect((await call('PUT', `/subscribers/${other}`, put)).status).toBe(200);
      const viaPut = events().slice(seen + synced.length);
      expect(synced).toEqual(viaPut.map(([e, , x]) => [e, id, x]));
    }
  });

  it('names several contacts in id order; not captured: an unknown contact is a fatal error after the ones before it, unless nothing matched', async () => {
    const { s, call } = await start({ seed: 11 });
    const [a, b] = s.truth().contacts.filter((c) => !c.tags.includes(8));
    const sync = (body: Json): ReturnType<Api> => call('POST', '/subscribers/sync-segments', body);
    const both = await sync({ type: 'tags', attach: ['beta-tester'], subscribers: [b!.id, a!.id, 999_999] });
    expect(both.status).toBe(500);
    expect(both.json).toEqual(loadCapture('DELETE_tags_999999').body);
    expect(
      s
        .truth()
        .contacts.filter((c) => c.id === a!.id || c.id === b!.id)
        .map((c) => c.tags.includes(8)),
    ).toEqual([true, true]);
    const ok = await sync({ type: 'tags', detach: ['Beta Tester'], find_by: 'title', subscribers: [b!.id, a!.id] });
    expect([ok.status, ok.json.message, ok.json.subscribers.map((x: Json) => x.id)]).toEqual([200, 'Successfully updated the subscribers.', [a!.id, b!.id]]);
    expect(
      s
        .truth()
        .contacts.filter((c) => c.id === a!.id || c.id === b!.id)
        .map((c) => c.tags.includes(8)),
    ).toEqual([false, false]);
    const none = await sync({ type: 'tags', attach: ['no-such-tag'], subscribers: [999_999] });
    expect([none.status, none.json.subscribers]).toEqual([200, []]);
  });
});

describe('real mode: POST /subscribers/bulk-add-update as captured', () => {
  it('creates the new contacts and updates the existing one, reporting all under `updated`, the invalid email under `invalids`', async () => {
    const { s, call, clock, events } = await start({ seed: 4 });
    const c = loadCapture('POST_subscribers_bulk-add-update');
    // The captured existing contact (ada.lovelace1, id 1) was unsubscribed, then forced to subscribed.
    const existing = s.truth().contacts.find((x) => x.status === 'unsubscribed')!;
    const next = Math.max(...s.truth().contacts.map((x) => x.id)) + 1;
    const sent = c.request.body as Json;
    const body = { ...sent, contacts: sent.contacts.map((x: Json) => (x.email === 'ada.lovelace1@example.test' ? { ...x, email: existing.email } : x)) };
    clock.ms = Date.parse('2026-11-25T18:30:00Z');

    const r = await replay(s, c, { body });
    expectLike(c, r);
    const ids: Record<number, number> = { 72: next, 73: next + 1, 1: existing.id };
    const captured = withoutBench(c.body);
    const updated = captured.updated.map((u: Json) => ({ ...u, id: ids[u.id], email: u.id === 1 ? existing.email : u.email }));
    expect(withoutBench(r.json)).toEqual({ ...captured, updated });

    const truth = (email: string): TruthContact => s.truth().contacts.find((x) => x.email === email)!;
    const pick = (x: TruthContact): Json => [x.id, x.first_name, x.last_name, x.status, x.tags];
    expect(pick(truth('bulk.new1@example.test'))).toEqual([next, 'Bulk', 'One', 'subscribed', [1]]);
    expect(pick(truth('bulk.new2@example.test'))).toEqual([next + 1, 'Bulk', 'Two', 'pending', []]);
    const now = truth(existing.email);
    expect([now.first_name, now.last_name, now.status, now.tags, now.updated_at]).toEqual(['AdaBulk', existing.last_name, 'subscribed', existing.tags, '2026-11-25 18:30:00']);
    expect((await call('GET', `/subscribers/${existing.id}`)).json.subscriber.first_name).toBe('AdaBulk');
    expect(events()).toEqual([
      ['contact.created', next, null],
      ['contact.tag_added', next, 1],
      ['contact.created', next + 1, null],
      ['contact.updated', existing.id, null],
      ['contact.status_changed', existing.id, null],
    ]);
  });

  it("not captured: the plugin's merge rules (status kept for a subscribed contact unless forced, ids-only tags added, empty values ignored)", async () => {
    const { s, call } = await start({ seed: 4 });
    const subscribed = s.truth().contacts.find((x) => x.status === 'subscribed' && !x.tags.includes(2))!;
    const bounced = s.truth().contacts.find((x) => x.status === 'bounced')!;
    const bulk = async (contacts: Json[], force?: unknown): Promise<Json> =>
      (await call('POST', '/subscribers/bulk-add-update', { contacts, ...(force === undefined ? {} : { force_update: force }) })).json;
    const r = await bulk([
      { email: subscribed.email, status: 'pending', first_name: '', tags: [2, 'vip'] },
      { email: bounced.email, status: 'subscribed' },
      { first_name: 'NoEmail' },
      'not-an-object',
    ]);
    expect([r.created, r.updated.map((u: Json) => u.status), r.invalids]).toEqual([[], ['subscribed', 'subscribed'], [{ first_name: 'NoEmail' }, 'not-an-object']]);
    const after = s.truth().contacts.find((x) => x.id === subscribed.id)!;
    expect([after.first_name, after.tags]).toEqual([subscribed.first_name, [...subscribed.tags, 2]]);
    expect((await bulk([{ email: subscribed.email, status: 'pending' }], 'yes')).updated[0].status).toBe('pending');
  });
});

describe('real mode: GET /subscribers/search-contacts as captured', () => {
  it('answers the matching contacts in id order, keyed by id with string ids, plus those named by values[]', async () => {
    const { s, call } = await start({ seed: 4, contacts: 1000 });
    const c = loadCapture('GET_subscribers_search-contacts');
    const r = await replay(s, c);
    // The captured site's ids key its object: the rows are compared below, key by key.
    expectLike(c, r, new Set(Object.keys(c.body.contacts)));
    const row = (x: TruthContact): Json => ({ first_name: x.first_name, last_name: x.last_name, full_name: x.full_name, email: x.email, id: String(x.id) });
    const matches = s.truth().contacts.filter((x) => `${x.first_name} ${x.last_name} ${x.email}`.toLowerCase().includes('ada'));
    expect(matches.length).toBeGreaterThan(20);
    expect(r.json.contacts).toEqual(Object.fromEntries(matches.slice(0, 20).map((x) => [x.id, row(x)])));
    expect(Object.keys(Object.values(r.json.contacts)[0] as Json)).toEqual(Object.keys(Object.values(c.body.contacts)[0] as Json));
    // Not captured: `limit` (default 20) and `values[]`, from the plugin's controller.
    const other = s.truth().contacts.find((x) => !matches.includes(x))!;
    const limited = await call('GET', `/subscribers/search-contacts?search=ada&limit=2&values[]=${other.id}`);
    expect(limited.json.contacts).toEqual(Object.fromEntries([...matches.slice(0, 2), other].map((x) => [x.id, row(x)])));
    expect((await call('GET', '/subscribers/search-contacts')).json.contacts).toEqual({});
  });
});

describe('real mode: GET /subscribers/prev-next-ids', () => {
  it('answers the captured 422 without filter_type; not captured: the 10 ids on each side of the filtered listing', async () => {
    const { s, call } = await start({ seed: 4 });
    const c = loadCapture('GET_subscribers_prev-next-ids');
    const r = await replay(s, c);
    expectLike(c, r);
    expect(r.headers.get('allow')).toBe(c.headers.allow);

    const all = s.truth().contacts.map((x) => x.id);
    const current = all[30]!;
    const nav = async (q: string): Promise<Json> => withoutBench((await call('GET', `/subscribers/prev-next-ids?filter_type=simple&current_id=${current}${q}`)).json);
    const below = (ids: number[]): number[] => ids.filter((x) => x < current).reverse();
    const above = (ids: number[]): number[] => ids.filter((x) => x > current);
    expect(await nav('')).toEqual({ navigation: { next: below(all).slice(0, 10), prev: above(all).slice(0, 10) }, has_next: true, has_prev: true });
    const subscribed = s
      .truth()
      .contacts.filter((x) => x.status === 'subscribed')
      .map((x) => x.id);
    const asc = await nav('&sort_type=ASC&statuses[]=subscribed');
    expect(asc.navigation).toEqual({ next: above(subscribed).slice(0, 10), prev: below(subscribed).slice(0, 10) });
    expect([asc.has_next, asc.has_prev]).toEqual([above(subscribed).length >= 10, below(subscribed).length >= 10]);
  });
});

describe('modes', () => {
  it('real mode serves the four routes; spec mode, whose interface lacks them, answers 404', async () => {
    const routes: [string, string][] = [
      ['POST', '/subscribers/sync-segments'],
      ['POST', '/subscribers/bulk-add-update'],
      ['GET', '/subscribers/search-contacts?search=a'],
      ['GET', '/subscribers/prev-next-ids?filter_type=simple&current_id=3'],
    ];
    const { call } = await start({ seed: 4 });
    for (const [method, path] of routes) expect([method, path, (await call(method, path, method === 'POST' ? { subscribers: [], contacts: [] } : undefined)).status]).toEqual([method, path, 200]);
    await sim!.close();
    sim = await startSimulator({ contacts: 5, seed: 4 });
    const spec = api(sim);
    for (const [method, path] of routes) expect([method, path, (await spec(method, path, method === 'POST' ? {} : undefined)).status]).toEqual([method, path, 404]);
  });
});
