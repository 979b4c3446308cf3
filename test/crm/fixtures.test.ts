import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CrmError } from '../../src/crm/index.js';
import {
  AuthenticationError,
  BadResponseError,
  createCrmClient,
  createRateLimiter,
  type ContactUpdate,
  type CrmClient,
  DuplicateError,
  ForbiddenError,
  NotFoundError,
  ServerError,
  ServerExceptionError,
  ValidationError,
} from '../../src/crm/index.js';
import { parseSuccessBody } from '../../src/crm/classify-response.js';
import { buildSchemas } from '../../src/crm/schemas/index.js';
import { createTimestampNormalizer } from '../../src/crm/timestamps.js';
import { bodyText, type Fixture, loadFixtures } from './helpers/fixtures.js';
import { startReplayServer, type ReplayServer } from './helpers/replay-server.js';

/**
 * Every captured real response goes through the client method that would have received it, served
 * byte for byte by a replay server: success bodies must parse with the matching schema, failures
 * must map to the right error class (or null where a lookup misses).
 */
const fixtures = loadFixtures();
const PREFIX = '/wp-json/fluent-crm/v2';

type Expect = { kind: 'value' } | { kind: 'null' } | { kind: 'error'; cls: abstract new (...a: never[]) => CrmError };
type Call = (c: CrmClient, f: Fixture) => Promise<unknown>;

const contactBody = { email: 'x@example.test', status: 'subscribed' };

function route(f: Fixture): { method: string; p: string; override: string | undefined } {
  const p = f.request.path.startsWith(PREFIX) ? f.request.path.slice(PREFIX.length) || '/' : f.request.path;
  return { method: f.request.method, p, override: f.request.headers?.['X-HTTP-Method-Override'] };
}

/** Endpoints crmsync does not call (site-URL webhooks, admin helpers); their bodies must still be JSON. */
const NOT_CLIENT = [
  /^GET \/campaigns\/\d+\/emails$/,
  /^GET \/funnels\/subscriber\/\d+\/automations$/,
  /^GET \/subscribers\/(prev-next-ids|search-contacts)$/,
  /^(GET|POST) \/$/,
  /^GET \/wp-json\/fluent-crm\/v2$/,
  /^POST \/(funnels|funnels\/\d+\/sequences|public\/bounce_handler\/.*|setting\/experiments|subscribers\/bulk-add-update)$/,
  /^PUT \/custom-fields\/contacts$/,
  /^GET \/nope$/,
  /^POST \/campaigns$/,
];

function callFor(f: Fixture): Call | undefined {
  const { method, p, override } = route(f);
  const key = `${method} ${p}`;
  const id = Number(/\/(\d+)(\/|$)/.exec(p)?.[1] ?? 1);
  const force = JSON.stringify(f.request.body ?? {}).includes('__force_update') || (f.request.query_string ?? '').includes('__force_update');
  const table: Array<[RegExp, Call]> = [
    [/^GET \/subscribers$/, (c) => c.contacts.listPage({ page: 1, perPage: 15 })],
    [/^GET \/subscribers\/0$/, (c) => c.contacts.getByEmail('someone@example.test')],
    [/^GET \/subscribers\/\d+$/, (c) => c.contacts.get(id)],
    [/^GET \/subscribers\/abc$/, (c) => c.contacts.get(1)],
    [/^GET \/subscribers\/\d+\/notes$/, (c) => c.contacts.notes.listPage(id, { page: 1, perPage: 15 })],
    [/^POST \/subscribers$/, (c) => (force ? c.contacts.upsert(contactBody) : c.contacts.create(contactBody))],
    [/^POST \/subscribers\/\d+$/, (c) => (override === 'DELETE' ? c.contacts.delete(id) : c.contacts.update(id, { first_name: 'X' }))],
    [/^(PUT|PATCH) \/subscribers\/\d+$/, (c) => c.contacts.update(id, { first_name: 'X' })],
    [/^DELETE \/subscribers\/\d+$/, (c) => c.contacts.delete(id)],
    [/^POST \/subscribers\/\d+\/notes$/, (c) => c.contacts.notes.create(id, { title: 't', description: 'd', type: 'note' })],
    [/^GET \/(tags|lists)$/, (c) => (p === '/tags' ? c.tags : c.lists).list()],
    [/^GET \/(tags|lists)\/\d+$/, (c) => (p.startsWith('/tags') ? c.tags : c.lists).get(id)],
    [/^POST \/(tags|lists)$/, (c) => (p === '/tags' ? c.tags : c.lists).create({ title: 'T' })],
    [/^PUT \/(tags|lists)\/\d+$/, (c) => (p.startsWith('/tags') ? c.tags : c.lists).update(id, { title: 'T' })],
    [/^DELETE \/(tags|lists)\/\d+$/, (c) => (p.startsWith('/tags') ? c.tags : c.lists).delete(id)],
    [/^GET \/campaigns$/, (c) => c.campaigns.listPage({ page: 1, perPage: 15, withStats: true })],
    [/^GET \/campaigns\/\d+$/, (c) => c.campaigns.get(id)],
    [/^GET \/campaigns\/\d+\/status$/, (c) => c.campaigns.status(id, 1)],
    [/^GET \/companies$/, (c) => c.companies.listPage({ page: 1, perPage: 15 })],
    [/^GET \/companies\/\d+$/, (c) => c.companies.get(id)],
    [/^POST \/companies$/, (c) => c.companies.create({ name: 'Acme' })],
    [/^POST \/companies\/attach-subscribers$/, (c) => c.companies.attachSubscribers({ subscriberIds: [1], companyIds: [1] })],
    [/^GET \/custom-fields\/contacts$/, (c) => c.customFields.list()],
    [/^GET \/funnels$/, (c) => c.funnels.listPage({ page: 1, perPage: 15, withSubscribersCount: true })],
    [/^GET \/funnels\/\d+$/, (c) => c.funnels.get(id)],
    [/^GET \/funnels\/\d+\/subscribers$/, (c) => c.funnels.subscribersPage(id, { page: 1, perPage: 15 })],
    [/^GET \/reports\/options$/, (c) => c.reports.options(['tags', 'lists'])],
    [/^GET \/reports\/.+$/, (c) => c.reports.get(p.slice('/reports/'.length))],
    [/^GET \/webhooks$/, (c) => c.webhooks.list()],
    [/^POST \/webhooks$/, (c) => c.webhooks.create({ name: 'n', url: 'https://example.test/hook', events: ['contact.created'] })],
    [/^PUT \/webhooks\/\d+$/, (c) => c.webhooks.update(id, { name: 'n' })],
  ];
  return table.find(([re]) => re.test(key))?.[1];
}

/** What the real response must turn into. */
function expected(f: Fixture): Expect {
  const { method, p } = route(f);
  const body = f.body as Record<string, unknown> | string;
  if (f.status === 200) {
    if (method === 'GET' && /\/(tags|lists)\/999999$/.test(p)) return { kind: 'null' };
    return { kind: 'value' };
  }
  if (f.status === 422 && typeof body === 'object' && /not found/i.test(String(body.message))) {
    return method === 'GET' ? { kind: 'null' } : { kind: 'error', cls: NotFoundError };
  }
  if (f.status === 422 && typeof body === 'object' && (JSON.stringify(body).includes('"unique"') || /already exist/.test(String(body.message)))) {
    return { kind: 'error', cls: DuplicateError };
  }
  // A lookup of one record by id answers null for a missing record (not for a missing route).
  if (f.status === 404 && method === 'GET' && /^\/[a-z-]+\/\d+$/.test(p) && (body as Record<string, unknown>).code !== 'rest_no_route') {
    return { kind: 'null' };
  }
  const byStatus: Record<number, Expect> = {
    400: { kind: 'error', cls: ValidationError },
    401: { kind: 'error', cls: AuthenticationError },
    403: { kind: 'error', cls: ForbiddenError },
    404: { kind: 'error', cls: NotFoundError },
    422: { kind: 'error', cls: ValidationError },
    423: { kind: 'error', cls: ServerExceptionError },
    500: { kind: 'error', cls: ServerError },
  };
  const e = byStatus[f.status];
  if (!e) throw new Error(`no expectation for status ${f.status} in ${f.file}`);
  return e;
}

describe('captured fluentcrm-2.9 responses', () => {
  let server: ReplayServer;
  let client: CrmClient;

  beforeAll(async () => {
    server = await startReplayServer(PREFIX);
    client = createCrmClient({
      baseUrl: server.baseUrl,
      username: 'fixture-user',
      password: 'fixture-password-1234',
      limiter: createRateLimiter({ maxRps: 100_000, maxConcurrency: 4 }),
      retry: { maxRetries: 0 },
    });
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  it('has all 171 samples', () => {
    expect(fixtures.length).toBe(171);
  });

  it('every sample through its client method: values parse, misses are null, failures map to the right class', async () => {
    const report: string[] = [];
    let viaClient = 0;
    for (const f of fixtures) {
      const { method, p } = route(f);
      const call = callFor(f);
      if (!call) {
        if (!NOT_CLIENT.some((re) => re.test(`${method} ${p}`))) report.push(`${f.file}: no client method mapped and not listed as a non-client endpoint`);
        continue;
      }
      viaClient++;
      server.respond({ status: f.status, headers: { 'content-type': f.headers['content-type'] ?? 'application/json' }, body: bodyText(f) });
      const want = expected(f);
      let got: unknown;
      let err: unknown;
      try {
        got = await call(client, f);
      } catch (e) {
        err = e;
      }
      if (want.kind === 'error') {
        if (!(err instanceof want.cls)) report.push(`${f.file}: expected ${want.cls.name}, got ${err instanceof Error ? `${err.name}: ${err.message}` : JSON.stringify(got)?.slice(0, 100)}`);
      } else if (err) {
        report.push(`${f.file}: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
      } else if (want.kind === 'null' && got !== null) {
        report.push(`${f.file}: expected null, got ${JSON.stringify(got).slice(0, 100)}`);
      } else if (want.kind === 'value' && (got === null || got === undefined) && !/^(PUT|DELETE)/.test(method) && !(method === 'POST' && /^\/subscribers\/\d+$/.test(p))) {
        report.push(`${f.file}: expected a value, got ${String(got)}`);
      }
    }
    expect(report).toEqual([]);
    expect(viaClient).toBeGreaterThan(130);
  });

  it('non-client samples are still JSON the client can read, and their records fit the matching schema', () => {
    const schemas = buildSchemas(createTimestampNormalizer('UTC'));
    for (const f of fixtures.filter((x) => !callFor(x) && x.status < 300)) {
      const body = parseSuccessBody(bodyText(f), { method: f.request.method, path: f.request.path, statusCode: f.status, contentType: undefined });
      expect(body, f.file).toBeTypeOf('object');
      const b = body as Record<string, unknown>;
      if (f.file === 'POST_campaigns.json') expect(schemas.Campaign.safeParse(b).success, f.file).toBe(true);
      if (f.file === 'POST_funnels.json') expect(schemas.Funnel.safeParse(b.funnel).success, f.file).toBe(true);
      if (f.file === 'PUT_custom-fields_contacts.json') for (const x of b.fields as unknown[]) expect(schemas.CustomField.safeParse(x).success).toBe(true);
    }
  });

  it('an update returns the contact as the PUT answer holds it: tags and lists only when it sent them, no custom values', async () => {
    const cases: Array<[string, number, number[] | undefined, number[] | undefined]> = [
      ['PUT_subscribers_id_status_unsubscribed.json', 16, undefined, undefined],
      ['PUT_subscribers_id_subscriber_object.json', 2, undefined, undefined],
      ['PUT_subscribers_id_attach_tags.json', 2, [2, 3], undefined],
      ['PUT_subscribers_id_detach_tags_attach_lists.json', 2, [2], [3]],
    ];
    for (const [file, id, tags, lists] of cases) {
      const f = fixtures.find((x) => x.file === file)!;
      server.respond({ status: f.status, body: bodyText(f) });
      const c = await client.contacts.update(id, f.request.body as ContactUpdate);
      const sent = (f.body as { contact: Record<string, unknown> }).contact;
      expect([file, c.id, c.email, c.status, c.updated_at]).toEqual([file, id, sent.email, sent.status, `${String(sent.updated_at).replace(' ', 'T')}.000Z`]);
      expect([file, c.tags?.map((t) => t.id), c.lists?.map((l) => l.id), 'custom_values' in c]).toEqual([file, tags, lists, false]);
      // Only the keys the answer had (the reader's own fields aside).
      expect(Object.keys(c).filter((k) => k !== 'raw' && !(k in sent))).toEqual([]);
    }
  });

  it('a create or upsert returns the contact as the POST answer holds it: tags and lists only when it sent them, no custom values', async () => {
    const posts = fixtures.filter((f) => f.request.method === 'POST' && route(f).p === '/subscribers' && f.status === 200);
    expect(posts.length).toBe(12);
    for (const f of posts) {
      server.respond({ status: f.status, body: bodyText(f) });
      const force = JSON.stringify(f.request.body ?? {}).includes('__force_update') || (f.request.query_string ?? '').includes('__force_update');
      const r = force ? await client.contacts.upsert(contactBody) : await client.contacts.create(contactBody);
      const answer = f.body as { contact: Record<string, unknown>; action_type: string };
      const sent = answer.contact;
      expect([f.file, r.contact.id, r.actionType]).toEqual([f.file, sent.id, answer.action_type]);
      const ids = (v: unknown) => (Array.isArray(v) ? v.map((t) => (t as { id: number }).id) : undefined);
      expect([f.file, r.contact.tags?.map((t) => t.id), r.contact.lists?.map((l) => l.id), 'custom_values' in r.contact]).toEqual([f.file, ids(sent.tags), ids(sent.lists), false]);
      // Only the keys the answer had (the reader's own fields aside).
      expect([f.file, Object.keys(r.contact).filter((k) => k !== 'raw' && !(k in sent))]).toEqual([f.file, []]);
    }
  });

  it('the HTML fatal-error page becomes a ServerError quoting a short tag-free snippet', async () => {
    const f = fixtures.find((x) => x.file === 'GET_subscribers_no_accept_header_per_page_0.json')!;
    server.respond({ status: f.status, headers: { 'content-type': 'text/html; charset=UTF-8' }, body: bodyText(f) });
    const e = await client.contacts.listPage({ page: 1, perPage: 15 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ServerError);
    expect((e as Error).message).toMatch(/HTML error page/);
    expect((e as Error).message).toMatch(/critical error/i);
    expect((e as Error).message).not.toMatch(/<html|<p>|<\/?div|&rsaquo;/);
    expect((e as Error).message).toContain('WordPress › Error');
    expect((e as Error).message.length).toBeLessThan(400);
    // The same page with a 200 is a BadResponseError (not retryable: retrying will not change a page).
    server.respond({ status: 200, headers: { 'content-type': 'text/html' }, body: bodyText(f) });
    const e2 = await client.contacts.listPage({ page: 1, perPage: 15 }).catch((x: unknown) => x);
    expect(e2).toBeInstanceOf(BadResponseError);
    expect((e2 as BadResponseError).kind).toBe('html');
    expect((e2 as BadResponseError).retryable).toBe(false);
  });

  it('normalizes the real quirks: string ids and counts, [] custom values, zone-less times read in the site zone', async () => {
    const f = fixtures.find((x) => x.file === 'GET_subscribers_custom_fields_true.json')!;
    server.respond({ status: 200, body: bodyText(f) });
    const berlin = createCrmClient({
      baseUrl: server.baseUrl,
      username: 'u',
      password: 'fixture-password-1234',
      timezone: 'Europe/Berlin',
      limiter: createRateLimiter({ maxRps: 1000 }),
    });
    try {
      const page = await berlin.contacts.listPage({ page: 1, perPage: 5, customFields: true });
      expect(page).toMatchObject({ total: 63, perPage: 5, currentPage: 1, lastPage: 13 });
      const ada = page.items.find((c) => c.id === 1)!;
      expect(ada.company_id).toBe(1); // "1" in the body
      expect(ada.total_points).toBe(0); // "0"
      expect(ada.created_at).toBe('2026-11-21T03:55:36.000Z'); // 04:55:36 Berlin (UTC+1)
      expect(ada.custom_values).toEqual({ favorite_color: 'Red', membership_number: '1000', renewal_date: '2026-01-15' });
      expect(ada.raw.custom_fields).toBeDefined();
      const other = page.items.find((c) => c.id !== 1)!;
      expect(other.custom_values).toEqual({});
    } finally {
      await berlin.close();
    }
  });
});
