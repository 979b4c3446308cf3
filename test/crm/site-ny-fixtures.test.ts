import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { parseSuccessBody } from '../../src/crm/classify-response.js';
import { type Contact, type CrmClient, createRateLimiter, crmClientFromConfig, NotFoundError, type Page, type UpdatedContact, ValidationError } from '../../src/crm/index.js';
import { bodyText, type Fixture, fixtureNamed, loadFixtures } from './helpers/fixtures.js';
import { type ReplayServer, type SeenRequest, startReplayServer } from './helpers/replay-server.js';
import { NOT_CLIENT, queryDifferences, REPLAYS, SYNC_LOOKUPS } from './helpers/site-ny-replays.js';
import { wallTimeToUtc } from './helpers/wall-time-oracle.js';

/**
 * The second captured site (fixtures/fluentcrm-2.9/site-ny, America/New_York) through the client
 * configured as crmsync configures it for that site (CRM_TIMEZONE): each capture of a route the
 * client calls is served byte for byte by the replay server to the method that asks for it, and
 * what comes out is compared with the capture itself: instants, ids, counts, custom values, keys.
 */
const SITE = 'site-ny';
const ZONE = 'America/New_York';
const PREFIX = '/wp-json/fluent-crm/v2';
const fixtures = loadFixtures(SITE);
const capture = (file: string): Fixture => fixtureNamed(fixtures, file);
type Json = Record<string, unknown>;
const bodyOf = (file: string): Json => capture(file).body as Json;

let server: ReplayServer;
let client: CrmClient;

beforeAll(async () => {
  server = await startReplayServer(PREFIX);
  const config = loadConfig({ CRM_BASE_URL: server.baseUrl, CRM_USERNAME: 'fixture-user', CRM_PASSWORD: 'fixture-password-1234', CRM_TIMEZONE: ZONE });
  client = crmClientFromConfig(config, { limiter: createRateLimiter({ maxRps: 100_000, maxConcurrency: 4 }), retry: { maxRetries: 0 } });
});
afterAll(async () => {
  await client?.close();
  await server?.close();
});

/** Serves `file` to its client call; the outcome and the one request the client sent. */
async function replay(file: string): Promise<{ value: unknown; error: unknown; request: SeenRequest }> {
  const f = capture(file);
  const r = REPLAYS[file];
  if (!r) throw new Error(`${file} is not replayed through the client`);
  server.respond({ status: f.status, headers: { 'content-type': f.headers['content-type'] ?? 'application/json' }, body: bodyText(f) });
  server.requests.length = 0;
  let value: unknown;
  let error: unknown;
  try {
    value = await r.call(client);
  } catch (e) {
    error = e;
  }
  if (server.requests.length !== 1) throw new Error(`${file}: the client sent ${server.requests.length} requests, expected one`);
  return { value, error, request: server.requests[0]! };
}

/** The value `file` turns into (throws what the client threw). */
async function value<T>(file: string): Promise<T> {
  const { value: v, error } = await replay(file);
  if (error) throw error;
  return v as T;
}

const instant = (wall: unknown): string | null => (typeof wall === 'string' ? wallTimeToUtc(wall, ZONE) : null);
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const ids = (refs: ReadonlyArray<{ id?: unknown }>): number[] => refs.map((r) => Number(r.id));

describe(`captured ${SITE} responses (${ZONE})`, () => {
  it('every capture is either replayed through the client or listed as a route crmsync does not call', () => {
    expect(fixtures.length).toBe(100);
    const files = new Set(fixtures.map((f) => f.file));
    const problems = [
      ...fixtures.filter((f) => !(f.file in REPLAYS) && !(f.file in NOT_CLIENT)).map((f) => `${f.file}: neither replayed nor listed`),
      ...Object.keys(REPLAYS)
        .filter((k) => k in NOT_CLIENT)
        .map((k) => `${k}: both replayed and listed as not called`),
      ...[...Object.keys(REPLAYS), ...Object.keys(NOT_CLIENT)].filter((k) => !files.has(k)).map((k) => `${k}: no such capture`),
    ];
    expect(problems).toEqual([]);
    expect(Object.keys(REPLAYS)).toHaveLength(75);
  });

  it('each replayed capture: the client asks what the capture asked, successes parse, failures map to their class', async () => {
    const report: string[] = [];
    for (const file of Object.keys(REPLAYS)) {
      const f = capture(file);
      const { value: got, error, request } = await replay(file);
      const path = new URL(request.url, 'http://x').pathname;
      if (request.method !== f.request.method || path !== f.request.path) report.push(`${file}: sent ${request.method} ${path}, captured ${f.request.method} ${f.request.path}`);
      for (const d of queryDifferences(f, request.url, REPLAYS[file]!.unlike ?? [])) report.push(`${file}: ${d}`);
      const body = f.body as Json;
      if (f.status === 200) {
        if (error || got === null || got === undefined) report.push(`${file}: expected a value, got ${error instanceof Error ? `${error.name}: ${error.message}` : String(got)}`);
      } else if (f.status === 404 && body.code === 'rest_no_route') {
        // The report probe (snapshotReports) relies on this to fall back to the plugin's routes.
        if (!(error instanceof NotFoundError && error.routeMissing)) report.push(`${file}: expected NotFoundError with routeMissing, got ${String(error)}`);
      } else if (f.status === 422) {
        if (!(error instanceof ValidationError)) report.push(`${file}: expected ValidationError, got ${String(error)}`);
      } else report.push(`${file}: no expectation for status ${f.status}`);
    }
    expect(report).toEqual([]);
  });

  it('captures of routes crmsync does not call are JSON', () => {
    for (const f of fixtures.filter((x) => x.file in NOT_CLIENT)) {
      expect(f.body_is_json, f.file).toBe(true);
      expect(f.headers['content-type'], f.file).toMatch(/^application\/json/);
      const body = parseSuccessBody(bodyText(f), { method: f.request.method, path: f.request.path, statusCode: f.status, contentType: f.headers['content-type'] });
      expect(body, f.file).toBeTypeOf('object');
      expect(body, f.file).not.toBeNull();
    }
  });
});

/** Text fields of a contact that the client passes on as sent (null when missing). */
const CONTACT_TEXT = ['email', 'status', 'first_name', 'last_name', 'full_name', 'contact_type', 'phone', 'city', 'state', 'postal_code', 'country', 'date_of_birth'] as const;

/** A captured contact row and the client's contact: ids, numbers, text, instants, memberships, custom values, raw. */
function expectContact(got: Contact, row: Json, where: string): void {
  const cv = row.custom_values ?? row.custom_fields;
  expect(Object.fromEntries(CONTACT_TEXT.map((k) => [k, got[k]])), where).toEqual(Object.fromEntries(CONTACT_TEXT.map((k) => [k, row[k] ?? null])));
  expect(
    {
      id: got.id,
      user_id: got.user_id,
      company_id: got.company_id,
      total_points: got.total_points,
      life_time_value: got.life_time_value,
      created_at: got.created_at,
      updated_at: got.updated_at,
      tags: ids(got.tags),
      lists: ids(got.lists),
      custom_values: got.custom_values,
    },
    where,
  ).toEqual({
    id: row.id,
    user_id: num(row.user_id),
    company_id: num(row.company_id),
    total_points: num(row.total_points),
    life_time_value: num(row.life_time_value),
    created_at: instant(row.created_at),
    updated_at: instant(row.updated_at),
    tags: ids((row.tags as Json[] | undefined) ?? []),
    lists: ids((row.lists as Json[] | undefined) ?? []),
    custom_values: cv && typeof cv === 'object' && !Array.isArray(cv) ? cv : {},
  });
  expect(got.raw, where).toEqual(row);
}

/** A page's paginator as the captured envelope `p` gives it. */
function expectPaging(page: Pick<Page<unknown>, 'total' | 'perPage' | 'currentPage' | 'lastPage'>, p: Json, file: string): void {
  expect({ total: page.total, perPage: page.perPage, currentPage: page.currentPage, lastPage: page.lastPage }, file).toEqual({
    total: p.total,
    perPage: p.per_page,
    currentPage: p.current_page,
    lastPage: p.last_page,
  });
}

describe(`${SITE} contacts: zone-less times read in ${ZONE}, memberships, custom values`, () => {
  const LISTINGS = Object.keys(REPLAYS).filter((f) => f.startsWith('GET_subscribers_') && (bodyOf(f).subscribers as Json | undefined)?.data);

  it('listings: every row as captured, times as UTC instants, and the paginator as captured', async () => {
    expect(LISTINGS).toHaveLength(7);
    for (const file of LISTINGS) {
      const page = await value<Awaited<ReturnType<CrmClient['contacts']['listPage']>>>(file);
      const p = bodyOf(file).subscribers as Json & { data: Json[] };
      expectPaging(page, p, file);
      expect(
        page.items.map((c) => c.id),
        file,
      ).toEqual(p.data.map((r) => r.id));
      page.items.forEach((c, i) => expectContact(c, p.data[i]!, `${file} row ${i}`));
    }
  });

  it('zone-less times become the right instants: EDT, EST, a new UTC day, and the repeated hour of 2025-11-02', async () => {
    const page = await value<Awaited<ReturnType<CrmClient['contacts']['listPage']>>>('GET_subscribers_custom_fields_true.json');
    const at = (id: number) => page.items.find((c) => c.id === id)!;
    // 01:30 and 01:45 happened twice that night (EDT, then EST): read as the first, as PHP reads them.
    expect(at(1).raw.created_at).toBe('2025-11-02 01:30:00');
    expect([at(1).created_at, at(1).updated_at]).toEqual(['2025-11-02T05:30:00.000Z', '2025-11-02T05:45:00.000Z']);
    expect(at(4).created_at).toBe('2026-08-19T07:35:54.000Z'); // 03:35:54 EDT (UTC-4)
    const byCreated = await value<Awaited<ReturnType<CrmClient['contacts']['listPage']>>>('GET_subscribers_sort_by_created_at_sort_type_asc.json');
    const c2752 = byCreated.items.find((c) => c.id === 2752)!;
    expect(c2752.raw.created_at).toBe('2024-11-26 23:22:08');
    expect(c2752.created_at).toBe('2024-11-27T04:22:08.000Z'); // EST (UTC-5): the next day in UTC
    // The captured order survives the conversion: ascending created_at is ascending instants.
    const created = byCreated.items.map((c) => c.created_at!);
    expect(created).toEqual([...created].sort());
  });

  it('custom values: keyed by field slug with custom_fields=true, none without it or with false', async () => {
    const fields = await value<Awaited<ReturnType<CrmClient['customFields']['list']>>>('GET_custom-fields_contacts.json');
    expect(fields.map((f) => [f.slug, f.type, f.options])).toEqual([
      ['plan', 'select-one', ['Free', 'Pro', 'Enterprise']],
      ['signup_score', 'number', []],
    ]);
    const slugs = new Set(fields.map((f) => f.slug));
    const withValues = await value<Awaited<ReturnType<CrmClient['contacts']['listPage']>>>('GET_subscribers_custom_fields_true.json');
    expect(withValues.items.map((c) => c.custom_values)).toEqual([{ plan: 'Free' }, {}, { plan: 'Free' }, { plan: 'Free', signup_score: '19' }, { plan: 'Free', signup_score: '38' }]);
    for (const c of withValues.items) for (const k of Object.keys(c.custom_values)) expect(slugs.has(k), k).toBe(true);
    for (const file of ['GET_subscribers_custom_fields_false.json', 'GET_subscribers_no_custom_fields.json']) {
      const page = await value<Awaited<ReturnType<CrmClient['contacts']['listPage']>>>(file);
      expect(
        page.items.every((c) => Object.keys(c.custom_values).length === 0 && !('custom_fields' in c.raw)),
        file,
      ).toBe(true);
    }
  });

  it('the raw pages the scans load hold the same ids, totals and updated_at instants as the parsed ones', async () => {
    for (const file of LISTINGS) {
      const f = capture(file);
      server.respond({ status: 200, body: bodyText(f) });
      const p = bodyOf(file).subscribers as Json & { data: Json[] };
      const raw = await client.contacts.listPageRaw({ page: 1, perPage: Number(p.per_page) }, { updatedAt: true });
      expect({ total: raw.total, lastPage: raw.lastPage }, file).toEqual({ total: p.total, lastPage: p.last_page });
      expect(raw.items, file).toEqual(p.data.map((r) => ({ id: r.id, updated_at: instant(r.updated_at) })));
      const spans = raw.rowSpans!;
      expect(
        p.data.map((_, i) => JSON.parse(raw.body.slice(spans[2 * i], spans[2 * i + 1])) as unknown),
        file,
      ).toEqual(p.data);
    }
  });

  it('the max-id probe: total 3,058 and last page 3,058, but the newest id is 3068', async () => {
    const page = await value<Awaited<ReturnType<CrmClient['contacts']['listPage']>>>('GET_subscribers_sort_by_id_sort_type_desc_per_page_1.json');
    expect({ total: page.total, lastPage: page.lastPage, ids: page.items.map((c) => c.id) }).toEqual({ total: 3058, lastPage: 3058, ids: [3068] });
  });

  it('updated_at desc: the ten-way tie at 12:47:35 EST comes back as one instant, rows as captured', async () => {
    const page = await value<Awaited<ReturnType<CrmClient['contacts']['listPage']>>>('GET_subscribers_sort_by_updated_at_sort_type_desc.json');
    expect(page.items.map((c) => c.id)).toEqual([501, 502, 503, 504, 3064]);
    expect(new Set(page.items.map((c) => c.updated_at))).toEqual(new Set(['2026-11-25T17:47:35.000Z']));
  });

  it('one contact: custom values only with[]=subscriber.custom_values, its tags and lists, stats kept in raw', async () => {
    const cv = (await value<Contact | null>('GET_subscribers_id_with_subscriber.custom_values.json'))!;
    expectContact(cv, bodyOf('GET_subscribers_id_with_subscriber.custom_values.json').subscriber as Json, 'with custom values');
    expect(cv.custom_values).toEqual({ plan: 'Free', signup_score: '5' });
    expect([cv.created_at, cv.updated_at]).toEqual(['2025-09-23T11:53:32.000Z', '2025-09-23T19:19:36.000Z']); // EDT
    for (const file of ['GET_subscribers_id.json', 'GET_subscribers_id_custom_fields_true.json', 'GET_subscribers_id_with_stats.json']) {
      const c = (await value<Contact | null>(file))!;
      expectContact(c, bodyOf(file).subscriber as Json, file);
      expect(c.custom_values, file).toEqual({});
    }
    const stats = (await value<Contact | null>('GET_subscribers_id_with_stats.json'))!;
    expect(stats.raw.stats).toEqual({ emails: 2, opens: 2, clicks: 2 });
  });

  it('tag and list changes show in the memberships and leave updated_at alone', async () => {
    const steps: Array<[string, number[], number[]]> = [
      ['GET_subscribers_id_before_tag_attach.json', [2], [3, 2, 1]],
      ['GET_subscribers_id_after_tag_attach.json', [7, 2], [3, 2, 1]],
      ['GET_subscribers_id_after_tag_detach.json', [2], [3, 2, 1]],
      ['GET_subscribers_id_after_list_attach.json', [2], [3, 4, 2, 1]],
      ['GET_subscribers_id_after_list_detach.json', [2], [3, 2, 1]],
      ['GET_subscribers_id_after_put_attach_tags.json', [7, 2], [3, 2, 1]],
      ['GET_subscribers_id_after_put_detach_tags.json', [2], [3, 2, 1]],
    ];
    for (const [file, tags, lists] of steps) {
      const c = (await value<Contact | null>(file))!;
      expectContact(c, bodyOf(file).subscriber as Json, file);
      expect([ids(c.tags), ids(c.lists), c.updated_at], file).toEqual([tags, lists, '2025-09-23T19:19:36.000Z']);
    }
  });

  it('PUT with only attach_tags/detach_tags: the contact as returned, updated_at unchanged, no lists in the body', async () => {
    for (const [file, tags] of [
      ['PUT_subscribers_id_attach_tags_only.json', [7, 2]],
      ['PUT_subscribers_id_detach_tags_only.json', [2]],
    ] as const) {
      const { value: c, request } = await replay(file);
      const contact = c as UpdatedContact;
      expect(JSON.parse(request.body) as Json, file).toMatchObject(capture(file).request.body as Json);
      expect([ids(contact.tags ?? []), contact.updated_at], file).toEqual([tags, '2025-09-23T19:19:36.000Z']);
      // The update response carries no `lists` or `custom_values` key (contact 58 is in lists 3,
      // 2 and 1): the returned contact says nothing about them rather than "none".
      expect(['lists' in contact.raw, 'custom_values' in contact.raw], file).toEqual([false, false]);
      expect(['lists' in contact, 'custom_values' in contact], file).toEqual([false, false]);
    }
  });

  it('notes: the empty paginator of a contact without notes', async () => {
    const page = await value<Awaited<ReturnType<CrmClient['contacts']['notes']['listPage']>>>('GET_subscribers_id_notes.json');
    expect({ items: page.items, total: page.total, lastPage: page.lastPage }).toEqual({ items: [], total: 0, lastPage: 0 });
  });
});

describe(`${SITE} tags, lists, campaigns`, () => {
  it('tags and lists: every one, with its counts as captured (lists: all statuses and subscribed)', async () => {
    for (const file of ['GET_tags_all_tags_true.json', 'GET_tags_per_page_50.json']) {
      const tags = await value<Awaited<ReturnType<CrmClient['tags']['list']>>>(file);
      const rows = (bodyOf(file).tags as { data: Json[] }).data;
      expect(
        tags.map((t) => [t.id, t.slug, t.subscribers_count, t.total_count, t.created_at]),
        file,
      ).toEqual(rows.map((r) => [r.id, r.slug, r.subscribersCount, null, instant(r.created_at)]));
    }
    const tags = await value<Awaited<ReturnType<CrmClient['tags']['list']>>>('GET_tags_per_page_50.json');
    expect(tags.find((t) => t.id === 8)?.subscribers_count).toBe(384); // subscribed members only (562 in all)
    const lists = await value<Awaited<ReturnType<CrmClient['lists']['list']>>>('GET_lists.json');
    const body = bodyOf('GET_lists.json') as { lists: Json[]; pagination: { total: number } };
    expect(lists).toHaveLength(body.pagination.total);
    expect(lists.map((l) => [l.id, l.slug, l.total_count, l.subscribers_count, l.is_public, l.updated_at])).toEqual(
      body.lists.map((r) => [r.id, r.slug, r.totalCount, r.subscribersCount, false, instant(r.updated_at)]),
    );
  });

  it('campaigns with stats: the sent counts as numbers, recipients as captured, times in UTC', async () => {
    const page = await value<Awaited<ReturnType<CrmClient['campaigns']['listPage']>>>('GET_campaigns_with_stats.json');
    const p = bodyOf('GET_campaigns_with_stats.json').campaigns as Json & { data: Json[] };
    expect({ total: page.total, lastPage: page.lastPage }).toEqual({ total: p.total, lastPage: p.last_page });
    expect(page.items.map((c) => [c.id, c.status, c.recipients_count, c.stats, c.scheduled_at, c.updated_at])).toEqual(
      p.data.map((r) => [r.id, r.status, r.recipients_count, r.stats, instant(r.scheduled_at), instant(r.updated_at)]),
    );
    const webinar = page.items.find((c) => c.id === 2)!;
    expect([webinar.recipients_count, webinar.stats]).toEqual([524, { total: 523, sent: 523, clicks: 83, views: 228, unsubscribers: 0 }]);
    expect(webinar.scheduled_at).toBe('2026-11-25T17:38:05.000Z');
    const plain = await value<Awaited<ReturnType<CrmClient['campaigns']['listPage']>>>('GET_campaigns.json');
    expect(plain.items.map((c) => [c.id, c.stats])).toEqual([
      [3, null],
      [2, null],
      [1, null],
    ]);
  });

  it('one campaign and its status report: "492" sent becomes 492, current_timestamp is the capture instant', async () => {
    const c = (await value<Awaited<ReturnType<CrmClient['campaigns']['get']>>>('GET_campaigns_id.json'))!;
    expect([c.id, c.status, c.recipients_count, c.created_at, c.updated_at]).toEqual([1, 'archived', 493, '2026-11-25T17:38:00.000Z', '2026-11-25T17:43:52.000Z']);
    const s = await value<Awaited<ReturnType<CrmClient['campaigns']['status']>>>('GET_campaigns_id_status.json');
    const body = bodyOf('GET_campaigns_id_status.json') as { stat: Array<{ status: string; total: string }> };
    expect(body.stat).toEqual([{ status: 'sent', total: '492' }]);
    expect(s.stat).toEqual([{ status: 'sent', total: 492 }]);
    expect(s.sent_count).toBe(492);
    // The README: returned 2026-11-25 13:08:46 at 18:08:46Z.
    expect(s.current_timestamp).toBe('2026-11-25T18:08:46.000Z');
    expect((s.analytics.open as Json).total).toBe(215);
    expect([s.campaign.id, s.campaign.recipients_count]).toEqual([1, 493]);
  });
});

describe(`${SITE} funnels and funnel subscribers`, () => {
  it('funnels: listed with their subscriber counts, each one by id', async () => {
    const page = await value<Awaited<ReturnType<CrmClient['funnels']['listPage']>>>('GET_funnels.json');
    expect(page.items.map((f) => [f.id, f.title, f.trigger_name, f.status, f.subscribers_count, f.created_at])).toEqual([
      [2, 'Author partner welcome', 'user_register', 'published', 8, '2026-11-25T17:39:29.000Z'],
      [1, 'New member onboarding', 'user_register', 'published', 40, '2026-11-25T17:39:29.000Z'],
    ]);
    for (const [file, id] of [
      ['GET_funnels_id.json', 1],
      ['GET_funnels_id2.json', 2],
    ] as const) {
      const f = (await value<Awaited<ReturnType<CrmClient['funnels']['get']>>>(file))!;
      expect([f.id, f.title, f.updated_at], file).toEqual([id, (bodyOf(file).funnel as Json).title, '2026-11-25T17:39:29.000Z']);
    }
  });

  it('subscriber pages: ids, string ids as numbers, statuses and times as captured, and the totals of each status filter', async () => {
    const files = Object.keys(REPLAYS).filter((f) => /^GET_funnels_id2?_subscribers(_status_\w+|_per_page_2_page_2)?\.json$/.test(f));
    expect(files).toHaveLength(9);
    for (const file of files) {
      const page = await value<Awaited<ReturnType<CrmClient['funnels']['subscribersPage']>>>(file);
      const p = bodyOf(file).funnel_subscribers as Json & { data: Json[] };
      expectPaging(page, p, file);
      expect(
        page.items.map((s) => [
          s.id,
          s.funnel_id,
          s.subscriber_id,
          s.status,
          s.last_sequence_id,
          s.next_sequence_id,
          s.next_execution_time,
          s.created_at,
          s.metrics.map((m) => [m.id, m.funnel_id, m.sequence_id, m.subscriber_id, m.status, m.created_at]),
        ]),
        file,
      ).toEqual(
        p.data.map((r) => [
          r.id,
          num(r.funnel_id),
          num(r.subscriber_id),
          r.status,
          num(r.last_sequence_id),
          num(r.next_sequence_id),
          instant(r.next_execution_time),
          instant(r.created_at),
          (r.metrics as Json[]).map((m) => [m.id, num(m.funnel_id), num(m.sequence_id), num(m.subscriber_id), m.status, instant(m.created_at)]),
        ]),
      );
    }
    const totals: Record<string, number | undefined> = {};
    // One at a time: the replay server serves one capture at once.
    for (const f of files) totals[f.replace(/^GET_funnels_|\.json$/g, '')] = (await value<{ total: number | undefined }>(f)).total;
    expect(totals).toEqual({
      id_subscribers: 40,
      id2_subscribers: 8,
      id_subscribers_per_page_2_page_2: 40,
      id_subscribers_status_active: 40,
      id2_subscribers_status_active: 0,
      id_subscribers_status_completed: 0,
      id2_subscribers_status_completed: 8,
      id_subscribers_status_all: 0,
      id2_subscribers_status_all: 0,
    });
    const second = await value<Awaited<ReturnType<CrmClient['funnels']['subscribersPage']>>>('GET_funnels_id_subscribers_per_page_2_page_2.json');
    expect([second.items.map((s) => s.id), second.currentPage, second.lastPage]).toEqual([[38, 37], 2, 20]);
    const first = await value<Awaited<ReturnType<CrmClient['funnels']['subscribersPage']>>>('GET_funnels_id_subscribers.json');
    expect([first.items[0]!.subscriber_id, first.items[0]!.next_execution_time]).toEqual([3040, '2026-11-27T17:39:30.000Z']);
  });

  it("status 'all' is asked as no status: the real CRM takes status=all literally and answers none of funnel 1's 40", async () => {
    const literal = bodyOf('GET_funnels_id_subscribers_status_all.json').funnel_subscribers as Json;
    expect([literal.total, literal.last_page, literal.data]).toEqual([0, 0, []]);
    server.respond({ status: 200, body: bodyText(capture('GET_funnels_id_subscribers.json')) });
    server.requests.length = 0;
    const page = await client.funnels.subscribersPage(1, { page: 1, perPage: 15, status: 'all' });
    expect(new URL(server.requests[0]!.url, 'http://x').searchParams.has('status')).toBe(false);
    expect([page.total, page.items.length]).toEqual([40, 15]);
  });

  it("the paginator ends on the captured totals: one request for funnel 2's 8, and for an empty listing", async () => {
    for (const [file, rows] of [
      ['GET_funnels_id2_subscribers.json', 8],
      ['GET_funnels_id_subscribers_status_completed.json', 0],
    ] as const) {
      server.respond({ status: 200, body: bodyText(capture(file)) });
      server.requests.length = 0;
      const drift: unknown[] = [];
      const pages = [];
      for await (const p of client.paginate((page, perPage) => client.funnels.subscribersPage(1, { page, perPage }), { perPage: 100, onDrift: (e) => drift.push(e) })) pages.push(p);
      expect([server.requests.length, pages.length, pages.flatMap((p) => p.items).length, drift], file).toEqual([1, 1, rows, []]);
    }
  });

  it('one funnel subscriber: its row and the funnel steps', async () => {
    const d = (await value<Awaited<ReturnType<CrmClient['funnels']['subscriber']>>>('GET_funnels_id_subscribers_contact_id.json'))!;
    const body = bodyOf('GET_funnels_id_subscribers_contact_id.json') as { funnel_subscriber: Json; sequences: Json[] };
    expect([d.subscriber.id, d.subscriber.funnel_id, d.subscriber.subscriber_id, d.subscriber.status, d.subscriber.next_execution_time]).toEqual([40, 1, 3040, 'active', '2026-11-27T17:39:30.000Z']);
    expect(d.sequences).toEqual(body.sequences);
    expect(d.sequences.map((s) => s.id)).toEqual([1, 2, 3]);
  });

  it('funnel reports: every step row and count as captured', async () => {
    for (const [file, id, entered] of [
      ['GET_funnels_id_report.json', 1, 40],
      ['GET_funnels_id2_report.json', 2, 8],
    ] as const) {
      const snap = await value<Awaited<ReturnType<CrmClient['reports']['funnelReport']>>>(file);
      const { __bench: _b, ...data } = bodyOf(file);
      expect(snap, file).toEqual({ report: 'funnel_report', params: { funnel_id: id }, data });
      expect(((snap.data.stats as Json).metrics as Json[])[0]!.count, file).toBe(entered);
    }
  });
});

describe(`${SITE} reports`, () => {
  const withoutBench = (file: string): Json => {
    const { __bench: _b, ...rest } = bodyOf(file);
    return rest;
  };

  it('dashboard stats: kept whole, the counters as captured', async () => {
    const snap = await value<Awaited<ReturnType<CrmClient['reports']['dashboardStats']>>>('GET_reports_dashboard-stats.json');
    expect(snap).toEqual({ report: 'dashboard_stats', params: {}, data: withoutBench('GET_reports_dashboard-stats.json') });
    const counts = Object.fromEntries(Object.entries(snap.data.stats as Record<string, { count: number }>).map(([k, v]) => [k, v.count]));
    expect(counts).toEqual({ total_subscribers: 2118, total_campaigns: 3, email_sent: 1015, tags: 8, total_templates: 0, total_automations: 2 });
  });

  it('series: every key and count in the captured order, daily (today included), daily ranges (end day left out), weekly and monthly', async () => {
    const files = Object.keys(REPLAYS).filter((f) => /^GET_reports_(subscribers|email-(sents|opens|clicks))(_date_range_\d+_days)?\.json$/.test(f));
    expect(files).toHaveLength(13);
    const shapes: Record<string, [number, string, string, number]> = {};
    for (const file of files) {
      const snap = await value<Awaited<ReturnType<CrmClient['reports']['get']>>>(file);
      const name = /^GET_reports_([a-z-]+)/.exec(file)![1]!;
      const range = capture(file).request.query?.['date_range[]'];
      expect(snap, file).toEqual({ report: name.replace('-', '_'), params: range ? { date_range: range } : {}, data: withoutBench(file) });
      const stats = snap.data.stats as Record<string, number>;
      // toEqual ignores key order; the layouts of long ranges are only readable in the order sent.
      expect(Object.keys(stats), file).toEqual(Object.keys((bodyOf(file).stats as Json) ?? {}));
      const keys = Object.keys(stats);
      shapes[file.replace(/^GET_reports_|\.json$/g, '')] = [keys.length, keys[0]!, keys.at(-1)!, Object.values(stats).reduce((a, b) => a + b, 0)];
    }
    expect(shapes).toEqual({
      subscribers: [31, '2026-10-26', '2026-11-25', 146],
      'email-sents': [31, '2026-10-26', '2026-11-25', 1015],
      'email-opens': [31, '2026-10-26', '2026-11-25', 443],
      'email-clicks': [31, '2026-10-26', '2026-11-25', 160],
      subscribers_date_range_30_days: [29, '2026-10-27', '2026-11-24', 79],
      'email-sents_date_range_30_days': [29, '2026-10-27', '2026-11-24', 0],
      'email-opens_date_range_30_days': [29, '2026-10-27', '2026-11-24', 0],
      'email-clicks_date_range_30_days': [29, '2026-10-27', '2026-11-24', 0],
      subscribers_date_range_75_days: [19, '2026-09-11', '2026-11-22', 223],
      subscribers_date_range_365_days: [13, 'Nov 2025', 'Nov 2026', 1046],
      'email-sents_date_range_365_days': [12, 'Nov 2025', 'Oct 2026', 0],
      'email-opens_date_range_365_days': [12, 'Nov 2025', 'Oct 2026', 0],
      'email-clicks_date_range_365_days': [12, 'Nov 2025', 'Oct 2026', 0],
    });
    const weekly = await value<Awaited<ReturnType<CrmClient['reports']['get']>>>('GET_reports_subscribers_date_range_75_days.json');
    // Week starts, then the extra unsorted day keys, as the plugin sent them.
    expect(Object.keys(weekly.data.stats as Json).slice(10, 13)).toEqual(['2026-11-20', '2026-09-13', '2026-09-26']);
  });

  it('other report routes are kept whole; the 422 of options without fields is a ValidationError', async () => {
    const options = await value<Awaited<ReturnType<CrmClient['reports']['options']>>>('GET_reports_options_fields_sync_lookups.json');
    expect(options).toEqual({ report: 'options', params: { fields: SYNC_LOOKUPS.join(',') }, data: withoutBench('GET_reports_options_fields_sync_lookups.json') });
    expect(Object.keys(options.data.options as Json)).toEqual(SYNC_LOOKUPS);
    const { error } = await replay('GET_reports_options_no_fields.json');
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toContain('Missing requested fields field.');
    for (const file of Object.keys(REPLAYS).filter((f) => /^GET_reports_(emails|ajax-options|ping|cascade_selections|advanced-providers|taxonomy-terms)/.test(f))) {
      const snap = await value<Awaited<ReturnType<CrmClient['reports']['get']>>>(file);
      expect(snap.data, file).toEqual(withoutBench(file));
    }
    const emails = await value<Awaited<ReturnType<CrmClient['reports']['get']>>>('GET_reports_emails_page_1_per_page_5.json');
    expect([emails.params, emails.data.statuses, (emails.data.emails as Json).total]).toEqual([{ page: 1, per_page: 5 }, { sent: '1015' }, 1015]);
  });
});

describe(`${SITE} webhooks`, () => {
  it('the incoming webhook: name, status and events from its value, created_at the instant the README names, secrets held', async () => {
    const [hook, ...more] = await value<Awaited<ReturnType<CrmClient['webhooks']['list']>>>('GET_webhooks.json');
    expect(more).toEqual([]);
    const captured = (bodyOf('GET_webhooks.json').webhooks as Json[])[0]!;
    const v = captured.value as Json;
    expect([hook!.id, hook!.name, hook!.status, hook!.url]).toEqual([15, 'crmsync', 'active', v.url]);
    expect(hook!.events).toEqual(v.events);
    expect(hook!.events).toHaveLength(26);
    // The README: the crmsync POST logged at 17:48:37Z is stored as 2026-11-25 12:48:37.
    expect([hook!.created_at, hook!.updated_at]).toEqual(['2026-11-25T17:48:37.000Z', '2026-11-25T17:48:37.000Z']);
    expect(hook!.secret?.reveal()).toBe(v.secret);
    expect([hook!.raw.key, (hook!.raw.value as Json).secret]).toEqual(['[redacted]', '[redacted]']);
  });
});
