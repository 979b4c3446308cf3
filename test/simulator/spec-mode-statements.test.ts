import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { isSpecError, withSim, type Api, type Json } from './helpers.js';

// Statements of the written interface (../shared/spec/crm-rest-api.md) a client relies on and no
// other spec-mode test checked: the search and sort parameters of campaigns, companies, lists,
// funnels, funnel subscribers, templates and sequences; a sequence's with[]=email_stats and its
// emails' top-level delay; a single contact's with[] values; a note's status and is_private; the
// campaign export's defaults; the fifth webhook retry after 24 hours. Expected values come from
// the simulator's ground truth or from the request, never from the answer under test.

const lower = (v: unknown): string => String(v ?? '').toLowerCase();
const ids = (rows: Json[], key = 'id'): number[] => rows.map((r) => Number(r[key]));
const desc = (xs: number[]): number[] => [...xs].sort((a, b) => b - a);
const asc = (xs: number[]): number[] => [...xs].sort((a, b) => a - b);

describe('spec mode: search, sort and with[] statements', () => {
  let sim: RunningSimulator;
  let call: Api;

  beforeAll(async () => {
    ({ sim, call } = await withSim({ contacts: 120, seed: 11 }));
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('GET /campaigns: searchBy matches the title', async () => {
    const campaigns = sim.truth().campaigns as { id: number; title: string }[];
    const target = campaigns[2]!;
    const found = (await call('GET', `/campaigns?searchBy=${encodeURIComponent(target.title)}&per_page=100`)).json.campaigns.data as Json[];
    expect(ids(found)).toContain(target.id);
    for (const c of found) expect(lower(c.title)).toContain(lower(target.title));
    expect(found.length).toBeLessThan(campaigns.length);
    const none = (await call('GET', '/campaigns?searchBy=no-campaign-has-this-title')).json.campaigns;
    expect([none.total, none.data]).toEqual([0, []]);
  });

  it('GET /companies: search covers name, phone, description and email; sort_by id, sort_order DESC by default', async () => {
    const made = { name: 'Zephyrine Holdings', phone: '+1-555-7788', description: 'Maker of quietwidgets', email: 'desk@orblight.test', website: 'https://nebulonia.test' };
    expect((await call('POST', '/companies', made)).status).toBe(200);
    const companies = sim.truth().companies as { id: number; name: string; phone: string | null; description: string | null; email: string | null }[];
    const searched = (c: (typeof companies)[number]): string[] => [c.name, c.phone, c.description, c.email].map(lower);
    for (const term of [made.name, made.phone, 'quietwidgets', made.email]) {
      const expected = companies.filter((c) => searched(c).some((v) => v.includes(lower(term)))).map((c) => c.id);
      const got = (await call('GET', `/companies?search=${encodeURIComponent(term)}&per_page=100`)).json.companies.data as Json[];
      expect(asc(ids(got)), term).toEqual(asc(expected));
      expect(expected.length, term).toBeGreaterThan(0);
    }
    // The website is not among the searched fields.
    expect((await call('GET', `/companies?search=${encodeURIComponent('nebulonia')}`)).json.companies.data).toEqual([]);
    const all = companies.map((c) => c.id);
    expect(ids((await call('GET', '/companies?per_page=100')).json.companies.data)).toEqual(desc(all));
    expect(ids((await call('GET', '/companies?per_page=100&sort_by=id&sort_order=ASC')).json.companies.data)).toEqual(asc(all));
  });

  it('GET /lists: search narrows the lists; counts unless exclude_counts', async () => {
    const lists = sim.truth().lists as { id: number; title: string; total_count: number; subscribers_count: number }[];
    const target = lists[3]!;
    const found = (await call('GET', `/lists?search=${encodeURIComponent(target.title)}`)).json.lists as Json[];
    expect(ids(found)).toContain(target.id);
    expect(found.length).toBeLessThan(lists.length);
    expect((await call('GET', '/lists?search=no-list-has-this')).json.lists).toEqual([]);
    const counted = (await call('GET', '/lists')).json.lists as Json[];
    const expected = [...lists].sort((a, b) => b.id - a.id).map((l) => [l.id, l.total_count, l.subscribers_count]);
    expect(counted.map((l) => [l.id, l.totalCount, l.subscribersCount])).toEqual(expected);
    const bare = (await call('GET', '/lists?exclude_counts=true')).json.lists as Json[];
    expect(ids(bare)).toEqual(desc(ids(lists)));
    for (const l of bare) expect([l.totalCount, l.subscribersCount]).toEqual([undefined, undefined]);
  });

  it('GET /funnels: search by title, sort_by default id, sort_type default DESC', async () => {
    const funnels = sim.truth().funnels as { id: number; title: string }[];
    const term = funnels[1]!.title.split(' ')[0]!;
    const found = (await call('GET', `/funnels?search=${encodeURIComponent(term)}`)).json.funnels as Json[];
    expect(ids(found)).toContain(funnels[1]!.id);
    for (const f of found) expect(lower(f.title)).toContain(lower(term));
    expect(ids((await call('GET', '/funnels')).json.funnels)).toEqual(desc(ids(funnels)));
    expect(ids((await call('GET', '/funnels?sort_type=ASC')).json.funnels)).toEqual(asc(ids(funnels)));
    const byTitle = [...funnels].sort((a, b) => (lower(a.title) < lower(b.title) ? -1 : 1)).map((f) => f.id);
    expect(ids((await call('GET', '/funnels?sort_by=title&sort_type=ASC')).json.funnels)).toEqual(byTitle);
  });

  it('GET /funnels/{id}/subscribers: search matches the contact’s name or email', async () => {
    const t = sim.truth();
    const rows = (t.funnelSubscribers as { id: number; funnelId: number; subscriberId: number }[]).filter((s) => s.funnelId === 1);
    const contacts = new Map(t.contacts.map((c) => [c.id, c]));
    const row = rows.find((s) => contacts.get(s.subscriberId)?.first_name)!;
    const c = contacts.get(row.subscriberId)!;
    for (const term of [c.email, c.first_name!, c.full_name]) {
      const got = (await call('GET', `/funnels/1/subscribers?per_page=1000&search=${encodeURIComponent(term)}`)).json.funnel_subscribers.data as Json[];
      expect(ids(got), term).toContain(row.id);
      const matches = (s: Json): boolean => [s.email, `${s.first_name ?? ''} ${s.last_name ?? ''}`].some((v) => lower(v).includes(lower(term)));
      for (const s of got) expect(matches(s.subscriber), term).toBe(true);
    }
    const none = (await call('GET', '/funnels/1/subscribers?search=nobody-is-called-this')).json.funnel_subscribers;
    expect([none.total, none.data]).toEqual([0, []]);
  });

  it('GET /templates: search is a partial match on the title (default types publish and draft)', async () => {
    const templates = sim.truth().templates as { id: number; title: string; status: string }[];
    for (const term of ['Announce', 'o']) {
      const expected = templates.filter((x) => ['publish', 'draft'].includes(x.status) && x.title.includes(term)).map((x) => x.id);
      const got = (await call('GET', `/templates?search=${term}`)).json.templates.data as Json[];
      expect(asc(ids(got, 'ID')), term).toEqual(asc(expected));
      expect(expected.length).toBeGreaterThan(0);
    }
  });

  it('GET /sequences: search, orderBy default id, order default DESC', async () => {
    const seqs = sim.truth().sequences as { id: number; title: string }[];
    const target = seqs[1]!;
    const found = (await call('GET', `/sequences?search=${encodeURIComponent(target.title)}`)).json.sequences.data as Json[];
    expect(ids(found)).toContain(target.id);
    expect(found.length).toBeLessThan(seqs.length);
    expect(ids((await call('GET', '/sequences')).json.sequences.data)).toEqual(desc(ids(seqs)));
    expect(ids((await call('GET', '/sequences?order=ASC')).json.sequences.data)).toEqual(asc(ids(seqs)));
    const byTitle = [...seqs].sort((a, b) => (lower(a.title) < lower(b.title) ? -1 : 1)).map((s) => s.id);
    expect(ids((await call('GET', '/sequences?orderBy=title&order=ASC')).json.sequences.data)).toEqual(byTitle);
  });

  it('GET /sequences/{id}: with[]=email_stats is accepted; a two-day email timing carries the top-level delay "2880"', async () => {
    const seq = (sim.truth().sequences as { id: number; emails: { id: number; delayDays: number }[] }[])[0]!;
    const plain = await call('GET', `/sequences/${seq.id}`);
    expect([plain.status, Object.keys(plain.json)]).toEqual([200, ['sequence']]);
    const stats = await call('GET', `/sequences/${seq.id}?with[]=email_stats`);
    expect([stats.status, stats.json.sequence]).toEqual([200, plain.json.sequence]);
    expect(stats.json.sequence_emails).toBeUndefined();
    const emails = (await call('GET', `/sequences/${seq.id}?with[]=sequence_emails`)).json.sequence_emails as Json[];
    const twoDay = seq.emails.filter((e) => e.delayDays === 2).map((e) => e.id);
    expect(twoDay.length).toBeGreaterThan(0);
    for (const id of twoDay) {
      const e = emails.find((x) => x.id === id);
      expect([e.settings.timings.delay_unit, e.settings.timings.delay, e.delay]).toEqual(['days', '2', '2880']);
    }
  });

  it('GET /subscribers/{id}: with[] commerce_stat, companies and custom_fields add their keys only when asked', async () => {
    const t = sim.truth();
    const c = t.contacts.find((x) => x.company_ids.length > 0)!;
    const plain = (await call('GET', `/subscribers/${c.id}`)).json;
    expect([plain.subscriber.commerce_stat, plain.subscriber.companies, plain.custom_fields]).toEqual([undefined, undefined, undefined]);
    const commerce = (await call('GET', `/subscribers/${c.id}?with[]=commerce_stat`)).json.subscriber;
    expect(typeof commerce.commerce_stat).toBe('object');
    expect(commerce.companies).toBeUndefined();
    const withCompanies = (await call('GET', `/subscribers/${c.id}?with[]=companies`)).json.subscriber;
    expect(asc(ids(withCompanies.companies))).toEqual(asc(c.company_ids));
    expect(withCompanies.commerce_stat).toBeUndefined();
    // The simulator's choice (docs/simulator.md): the field definitions beside the contact.
    const withFields = (await call('GET', `/subscribers/${c.id}?with[]=custom_fields`)).json;
    expect(withFields.custom_fields.map((f: Json) => f.slug)).toEqual(t.customFields.map((f) => f.slug));
    expect(withFields.subscriber.id).toBe(c.id);
  });

  it('a note shows status "open" and is_private "1" on create, update and in the listing', async () => {
    const contact = sim.truth().contacts[5]!.id;
    const note = { title: 'Visit', description: '<p>met</p>', type: 'meeting', created_at: '2026-01-10 09:00:00' };
    const added = await call('POST', `/subscribers/${contact}/notes`, { note });
    expect([added.status, added.json.note.status, added.json.note.is_private]).toEqual([200, 'open', '1']);
    const put = await call('PUT', `/subscribers/${contact}/notes/${added.json.note.id}`, { note: { ...note, title: 'Visit 2', status: 'closed', is_private: '0' } });
    expect([put.status, put.json.note.status, put.json.note.is_private]).toEqual([200, 'open', '1']);
    const listed = (await call('GET', `/subscribers/${contact}/notes`)).json.notes.data as Json[];
    expect(listed.map((n) => [n.id, n.status, n.is_private])).toEqual([[added.json.note.id, 'open', '1']]);
  });

  it('GET /reports/campaigns/{id}/export defaults to csv with the basic columns', async () => {
    const c = (sim.truth().campaigns as { id: number; title: string; status: string; recipientsCount: number; stats: Record<string, number> }[])[0]!;
    const byDefault = await call('GET', `/reports/campaigns/${c.id}/export`);
    expect(byDefault.status).toBe(200);
    expect(byDefault.headers.get('content-type')).toMatch(/^text\/csv\b/);
    const lines = byDefault.text.split(/\r?\n/);
    // The header of the basic columns is the simulator's choice (docs/simulator.md); the row is the campaign's.
    expect(lines[0]).toBe('campaign_id,title,status,recipients_count,sent,delivered,opened,clicked,unsubscribed,bounced');
    const s = c.stats;
    expect(lines[1]).toBe([c.id, c.title, c.status, c.recipientsCount, s.sent, s.delivered, s.opened, s.clicked, s.unsubscribed, s.bounced].join(','));
    const explicit = await call('GET', `/reports/campaigns/${c.id}/export?format=csv&include[]=basic`);
    expect([explicit.headers.get('content-type'), explicit.text]).toEqual([byDefault.headers.get('content-type'), byDefault.text]);
    const json = await call('GET', `/reports/campaigns/${c.id}/export?format=json`);
    expect(json.headers.get('content-type')).toMatch(/^application\/json\b/);
    const bad = await call('GET', `/reports/campaigns/${c.id}/export?format=pdf`);
    expect([bad.status, isSpecError(bad.json, 400, 'rest_invalid_param')]).toEqual([400, true]);
  });
});

describe('spec mode: the fifth webhook retry comes 24 h after the fourth', () => {
  // 1 min -> 1.2 ms, 5 min -> 6 ms, 30 min -> 36 ms, 2 h -> 144 ms, 24 h -> 1.728 s.
  const SCALE = 0.00002;
  const DAY_SCALED = 86_400_000 * SCALE;

  it('a delivery that keeps failing is sent six times, the last 24 h (scaled) after the fifth, when a success in between keeps the webhook active', async () => {
    const { sim, call } = await withSim({ contacts: 5, allowHttpWebhookUrls: true, webhookTimeScale: SCALE });
    const doomedAt: number[] = [];
    let kept = 0;
    // Deliveries for doomed@ always fail. On its fourth failure the receiver creates a contact
    // first, whose delivery succeeds: the interface disables a webhook after 5 consecutive
    // failures, so without a success in between the 24 h retry would never come.
    const server: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (b: Buffer) => chunks.push(b));
      req.on('end', () => {
        const email = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json).data.contact.email as string;
        if (email !== 'doomed@example.org') {
          kept++;
          res.writeHead(200).end();
          return;
        }
        doomedAt.push(Date.now());
        if (doomedAt.length !== 4) {
          res.writeHead(500).end();
          return;
        }
        const fail = (): void => void res.writeHead(500).end();
        call('POST', '/subscribers', { email: 'kept@example.org', status: 'subscribed' }).then(fail, fail);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      const hook = (await call('POST', '/webhooks', { name: 'retries', url, events: ['contact.created'] })).json.webhook;
      await call('POST', '/subscribers', { email: 'doomed@example.org', status: 'subscribed' });
      const delivery = () => sim.truth().deliveries.find((d) => d.webhookId === hook.id && d.event === 'contact.created' && d.body.includes('doomed@'))!;
      const deadline = Date.now() + 10_000;
      while (doomedAt.length < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      // After the fifth attempt failed, the next is scheduled a (scaled) day later.
      const rescheduled = (): boolean => delivery().attempts === 5 && (delivery().nextAttemptAt ?? 0) > (delivery().attemptedAt ?? 0);
      while (!rescheduled() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
      const fifth = delivery();
      expect([fifth.attempts, fifth.status, kept]).toEqual([5, 'pending', 1]);
      expect((fifth.nextAttemptAt as number) - (fifth.attemptedAt as number)).toBeGreaterThanOrEqual(DAY_SCALED);
      while (doomedAt.length < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      await sim.settleWebhooks(3000);
      // The schedule, not the wall-clock gaps, is what is asserted: a busy machine only delays timers.
      expect(doomedAt).toHaveLength(6);
      expect(delivery()).toMatchObject({ attempts: 6, status: 'failed', responseCode: 500 });
      expect((await call('GET', '/webhooks')).json.webhooks.find((w: Json) => w.id === hook.id).status).toBe('active');
    } finally {
      await sim.close();
      await new Promise<void>((r) => server.close(() => r()));
    }
  }, 20_000);
});
