// A second, minimal CRM written from the interface text alone (../shared/spec/crm-rest-api.md),
// without reading crmsync's client or simulator. It serves the read endpoints a pull uses, with the
// envelopes, types and errors the spec names, and logs every request it receives.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export interface SpecContact {
  id: number;
  user_id: number | null;
  hash: string;
  email: string;
  first_name: string;
  last_name: string;
  status: string;
  contact_type: string;
  phone: string;
  address_line_1: string;
  address_line_2: string;
  city: string;
  state: string;
  postal_code: string;
  country: string;
  date_of_birth: string;
  photo: string;
  tagIds: number[];
  listIds: number[];
  custom: Record<string, string | string[]>;
  /** `YYYY-MM-DD HH:MM:SS`, no zone ("Most resources use the shape ...", Response conventions 5). */
  created_at: string;
  updated_at: string;
}

export interface LoggedRequest {
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  status: number;
}

const STATUSES = ['subscribed', 'unsubscribed', 'pending', 'bounced', 'complained'];
export const USER = 'spec-reader';
export const PASSWORD = 'app pass word 1234';

/**
 * A site wall time `YYYY-MM-DD HH:MM:SS` in `timeZone` to epoch ms, with Intl only (so the tests'
 * expectations share no code with crmsync's reading). Refuses a wall time the clock skipped, and
 * with `refuseRepeated` also one it showed twice (the hour after a fall-back).
 */
export function siteWallMs(wall: string, timeZone: string, opts: { refuseRepeated?: boolean } = {}): number {
  const fmt = new Intl.DateTimeFormat('en-CA', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
  const show = (ms: number): string => {
    const p = Object.fromEntries(fmt.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
    return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
  };
  const naive = Date.parse(`${wall.replace(' ', 'T')}Z`);
  let ms = naive;
  for (let i = 0; i < 3; i++) ms = naive - (Date.parse(`${show(ms).replace(' ', 'T')}Z`) - ms);
  const repeated = opts.refuseRepeated === true && (show(ms - 3_600_000) === wall || show(ms + 3_600_000) === wall);
  if (show(ms) !== wall || repeated) throw new Error(`${wall} is at a clock change`);
  return ms;
}

/**
 * The environment a user gives `crmsync` for this server: its URL and credentials, the site's zone,
 * the warehouse under `dir`, and the default embedded Temporal (stopping with each command), on a
 * task queue of the test's own.
 */
export function specServerCliEnv(baseUrl: string, dir: string, timeZone: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    ...Object.fromEntries(['TEMPORAL_CLI_PATH', 'XDG_CACHE_HOME'].flatMap((k) => (process.env[k] ? [[k, process.env[k]]] : []))),
    CRMSYNC_EMBEDDED_IDLE: '0',
    CRM_BASE_URL: baseUrl,
    CRM_USERNAME: USER,
    CRM_PASSWORD: PASSWORD,
    CRM_TIMEZONE: timeZone,
    CRMSYNC_DB: join(dir, 'crm.duckdb'),
    CRMSYNC_LAKE: join(dir, 'lake'),
    CRMSYNC_DATA_DIR: dir,
    CRMSYNC_LOG_LEVEL: 'warn',
    CRMSYNC_TASK_QUEUE: `indep-${randomUUID().slice(0, 12)}`,
  };
}

// Tags: id as integer or numeric string (Response conventions 4); counts may be strings.
export const TAGS = [
  { id: 1, title: 'VIP', slug: 'vip', description: 'Top customers', created_at: '2024-11-02 09:15:00', updated_at: '2024-11-02 09:15:00' },
  { id: 2, title: 'Newsletter', slug: 'newsletter', description: '', created_at: '2024-11-03 10:00:00', updated_at: '2025-02-01 11:00:00' },
  { id: 3, title: 'Beta "Testers"', slug: 'beta-testers', description: 'quotes and ünïcödé', created_at: '2024-12-24 23:59:59', updated_at: '2025-06-30 12:00:00' },
  { id: 4, title: 'Unused', slug: 'unused', description: 'no members', created_at: '2025-01-01 00:00:00', updated_at: '2025-01-01 00:00:00' },
];
export const LISTS = [
  { id: 1, title: 'Main', slug: 'main', description: 'Everyone', is_public: '1', created_at: '2024-10-01 08:00:00', updated_at: '2024-10-01 08:00:00' },
  { id: 2, title: 'Partners', slug: 'partners', description: '', is_public: '0', created_at: '2024-10-02 08:00:00', updated_at: '2025-03-09 08:00:00' },
  { id: 3, title: 'Events', slug: 'events', description: 'Invites', is_public: '1', created_at: '2025-05-05 17:45:00', updated_at: '2025-05-05 17:45:00' },
];
export const FIELDS: Json[] = [
  { field_key: 'text', type: 'text', label: 'Nickname', slug: 'nickname' },
  { field_key: 'number', type: 'number', label: 'Score', slug: 'score' },
  { field_key: 'date', type: 'date', label: 'Renewal', slug: 'renewal' },
  { field_key: 'select-one', type: 'select-one', label: 'Plan', slug: 'plan', options: ['free', 'pro', 'enterprise'] },
  { field_key: 'checkbox', type: 'checkbox', label: 'Interests', slug: 'interests', options: ['news', 'events', 'offers'] },
  { field_key: 'radio', type: 'radio', label: 'Channel', slug: 'channel', options: ['email', 'sms'] },
  { field_key: 'url', type: 'url', label: 'Site', slug: 'site' },
];
export const COMPANIES: Json[] = [
  {
    id: 1,
    name: 'Acme',
    industry: 'Manufacturing',
    website: 'https://acme.test',
    email: 'hi@acme.test',
    phone: '+1 555 0100',
    description: '',
    logo: '',
    linkedin_url: '',
    address_line_1: '1 Road',
    address_line_2: '',
    city: 'Springfield',
    state: 'IL',
    country: 'US',
    postal_code: '62701',
    employees_number: 250,
    type: 'Prospect',
    owner_id: 2,
    status: 'active',
    created_at: '2025-01-20 09:00:00',
    updated_at: '2025-07-01 14:30:00',
  },
  {
    id: '2',
    name: 'Globex',
    industry: 'Energy',
    website: 'https://globex.test',
    email: 'info@globex.test',
    phone: '',
    description: 'second',
    logo: '',
    linkedin_url: '',
    address_line_1: '',
    address_line_2: '',
    city: 'Cypress Creek',
    state: '',
    country: 'US',
    postal_code: '',
    employees_number: '12',
    type: 'Partner',
    owner_id: '7',
    status: 'inactive',
    created_at: '2025-02-10 16:20:00',
    updated_at: '2025-02-10 16:20:00',
  },
];
export const CAMPAIGNS: Json[] = [
  {
    id: 1,
    title: 'Spring launch',
    slug: 'spring-launch',
    status: 'sent',
    email_subject: 'Hello spring',
    email_pre_header: 'New things',
    email_body: '<p>Hi</p>',
    recipients_count: 30,
    scheduled_at: null,
    design_template: 'simple',
    settings: {},
    created_at: '2025-03-01 09:00:00',
    updated_at: '2025-03-02 10:00:00',
  },
  {
    id: '2',
    title: 'Summer sale',
    slug: 'summer-sale',
    status: 'scheduled',
    email_subject: 'Sale',
    email_pre_header: '',
    email_body: '<p>Sale</p>',
    recipients_count: '12',
    scheduled_at: '2025-07-15 08:00:00',
    design_template: 'plain',
    settings: { mailer: 'default' },
    created_at: '2025-06-20 11:11:11',
    updated_at: '2025-06-21 12:12:12',
  },
  {
    id: 3,
    title: 'Draft idea',
    slug: 'draft-idea',
    status: 'draft',
    email_subject: '',
    email_pre_header: '',
    email_body: '',
    recipients_count: 0,
    scheduled_at: null,
    design_template: 'classic',
    settings: [],
    created_at: '2025-08-01 07:00:00',
    updated_at: '2025-08-01 07:00:00',
  },
];
export const CAMPAIGN_STATS: Record<number, Json> = { 1: { sent: 30, opens: 12, clicks: 4 }, 2: { sent: 0, opens: 0, clicks: 0 }, 3: { sent: 0, opens: 0, clicks: 0 } };
// Funnels show ISO 8601 UTC timestamps (Response conventions 5); conditions are object or array.
export const FUNNELS: Json[] = [
  {
    id: 1,
    title: 'Welcome',
    trigger_name: 'user_registration',
    status: 'published',
    conditions: [],
    settings: {},
    created_by: 1,
    created_at: '2025-01-05T10:00:00Z',
    updated_at: '2025-07-04T23:30:00Z',
    description: 'new users',
    labels: [],
  },
  {
    id: '2',
    title: 'Win back',
    trigger_name: 'custom_winback',
    status: 'paused',
    conditions: { run_multiple: 'no' },
    settings: { priority: 1 },
    created_by: '1',
    created_at: '2025-02-11T05:06:07Z',
    updated_at: '2025-02-11T05:06:07Z',
    description: '',
    labels: ['retention'],
  },
];

/** Funnel subscribers: funnel 1 has 117 (more than a page of 100), funnel 2 has 2. */
export function funnelSubscribers(): Json[] {
  const rows: Json[] = [];
  const fsStatus = ['active', 'completed', 'cancelled'];
  for (let i = 1; i <= 119; i++) {
    const funnelId = i <= 117 ? 1 : 2;
    const day = String((i % 27) + 1).padStart(2, '0');
    rows.push({
      id: i % 4 ? i : String(i),
      funnel_id: i % 2 ? funnelId : String(funnelId),
      subscriber_id: i % 3 ? (i % 45) + 1 : String((i % 45) + 1),
      status: fsStatus[i % 3]!,
      last_sequence_id: 10 + (i % 3),
      next_sequence_id: 11 + (i % 3),
      next_execution_time: `2025-08-${day} 09:00:00`,
      created_at: `2025-06-${day} 08:15:00`,
      updated_at: `2025-07-${day} 18:45:30`,
      subscriber: { id: (i % 45) + 1 },
      last_sequence: { id: 10 + (i % 3) },
      next_sequence_item: {},
      metrics: [
        {
          id: i * 10,
          funnel_id: funnelId,
          sequence_id: 10,
          subscriber_id: (i % 45) + 1,
          benchmark_value: 1.5,
          benchmark_currency: 'USD',
          status: 'completed',
          notes: '',
          created_at: '2025-06-01 08:20:00',
          updated_at: '2025-06-01 08:20:00',
        },
      ],
    });
  }
  return rows;
}

const FIRST = ['Ada', 'Zoë', 'Łukasz', "Seán O'Brien", 'Grace', 'Émile', 'Li', 'Maria José', 'Tom', ''];
const LAST = ['Lovelace', 'Smith', 'Kowalski', 'Nuñez', 'Hopper', 'Zola', 'Wei', 'da Silva', 'Ng', 'Solo'];

/** Contact `id` is deterministic from the id; every status, tags, lists and custom values vary. */
export function seedContact(id: number): SpecContact {
  // created_at walks across the year (winter and summer wall times), updated_at a bit later.
  const n = id % 1000;
  const created = new Date(Date.UTC(2025, 0, 3, 8, 30, 0) + n * 6 * 86_400_000 + n * 3_600_000 + n * 61_000);
  // updated_at is not monotone in id: every ninth contact was edited long after it was created.
  const updated = new Date(created.getTime() + (id % 9 === 0 ? 200 : id % 4) * 86_400_000 + 1_234_000);
  const custom: Record<string, string | string[]> = {};
  if (id % 2 === 0) custom.plan = ['free', 'pro', 'enterprise'][id % 3]!;
  if (id % 3 === 0) custom.score = String(id * 10);
  if (id % 4 === 0) custom.renewal = `2026-0${(id % 9) + 1}-1${id % 10}`;
  if (id % 5 === 0) custom.interests = id % 10 === 0 ? ['news', 'offers'] : ['events'];
  if (id % 7 === 0) custom.channel = 'sms';
  if (id % 11 === 0) custom.nickname = `nick ${id} "q"`;
  if (id === 9) custom.site = 'https://example.test/ü?x=1&y=2';
  return {
    id,
    user_id: id % 6 === 0 ? id + 100 : null,
    hash: `h${id.toString(16).padStart(8, '0')}`,
    email: `contact${id}@example.test`,
    first_name: FIRST[id % FIRST.length]!,
    last_name: LAST[(id * 3) % LAST.length]!,
    status: STATUSES[id % STATUSES.length]!,
    contact_type: id % 4 === 0 ? 'customer' : 'lead',
    phone: id % 3 === 0 ? `+1-555-01${String(id).padStart(2, '0')}` : '',
    address_line_1: `${id} Main St`,
    address_line_2: id % 2 ? '' : `Apt ${id}`,
    city: id % 2 ? 'Boston' : 'São Paulo',
    state: id % 2 ? 'MA' : 'SP',
    postal_code: String(2100 + id).padStart(5, '0'),
    country: id % 2 ? 'US' : 'BR',
    date_of_birth: `19${60 + (id % 40)}-${String((id % 12) + 1).padStart(2, '0')}-${String((id % 28) + 1).padStart(2, '0')}`,
    photo: `https://gravatar.test/${id}.png`,
    tagIds: [1, 2, 3].filter((t) => (id + t) % (t + 1) === 0),
    listIds: [1, 2, 3].filter((l) => (l === 1 ? id % 4 !== 3 : (id * l) % 5 === 1)),
    custom,
    created_at: wall(created),
    updated_at: wall(updated),
  };
}

/** Formats a Date's UTC fields as `YYYY-MM-DD HH:MM:SS` (the server's own site-local wall time). */
export function wall(d: Date): string {
  return d.toISOString().slice(0, 19).replace('T', ' ');
}

export class SpecServer {
  readonly contacts = new Map<number, SpecContact>();
  readonly requests: LoggedRequest[] = [];
  /** Bodies to serve instead, by path below the base URL (for shapes the spec leaves open). */
  readonly overrides = new Map<string, Json>();
  /** Path prefixes (below /v2) the user lacks the capability for. */
  forbidden: string[] = [];
  /** Called with each request before it is answered (to change the data mid-scan). */
  onRequest: ((r: LoggedRequest) => void) | undefined;
  /** Most rows a page serves, whatever per_page asks. */
  perPageCap = Infinity;
  /** The funnel subscribers served (a copy of `funnelSubscribers()` until a test edits it). */
  funnelSubscriberRows: Json[] = funnelSubscribers();
  baseUrl = '';
  private server = createServer((req, res) => this.handle(req, res));

  constructor(ids: number[]) {
    for (const id of ids) this.contacts.set(id, seedContact(id));
  }

  async start(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v2`;
    return this.baseUrl;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  /** Contacts as the listing serves them (ids, tag ids and user ids sometimes numeric strings). */
  render(c: SpecContact, withCustom: boolean): Json {
    const ref = (rows: { id: number; title: string; slug: string }[], ids: number[]): Json[] =>
      ids.map((id) => {
        const r = rows.find((x) => x.id === id)!;
        return { id: (c.id + id) % 2 ? String(id) : id, title: r.title, slug: r.slug };
      });
    const out: Record<string, Json> = {
      id: c.id % 5 === 2 ? String(c.id) : c.id,
      user_id: c.user_id === null ? null : c.id % 4 === 0 ? String(c.user_id) : c.user_id,
      hash: c.hash,
      email: c.email,
      first_name: c.first_name,
      last_name: c.last_name,
      full_name: `${c.first_name} ${c.last_name}`.trim(),
      status: c.status,
      contact_type: c.contact_type,
      phone: c.phone,
      address_line_1: c.address_line_1,
      address_line_2: c.address_line_2,
      city: c.city,
      state: c.state,
      postal_code: c.postal_code,
      country: c.country,
      date_of_birth: c.date_of_birth,
      photo: c.photo,
      tags: ref(TAGS, c.tagIds),
      lists: ref(LISTS, c.listIds),
      created_at: c.created_at,
      updated_at: c.updated_at,
    };
    if (withCustom) out.custom_values = { ...c.custom };
    return out;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://x');
    const query: Record<string, string | string[]> = {};
    for (const [k, v] of url.searchParams) {
      if (k.endsWith('[]')) ((query[k] ??= []) as string[]).push(v);
      else query[k] = v;
    }
    const entry: LoggedRequest = { method: req.method ?? '', path: url.pathname, query, status: 0 };
    this.requests.push(entry);
    this.onRequest?.(entry);
    const send = (status: number, body: Json): void => {
      entry.status = status;
      res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
      res.end(JSON.stringify(body));
    };
    const fail = (status: number, code: string, message: string): void => send(status, { code, message, data: { status } });
    // Authentication: HTTP Basic, 401 for missing or invalid credentials.
    const expected = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
    if (req.headers.authorization !== expected) return fail(401, 'rest_not_logged_in', 'Missing or invalid credentials.');
    // A user without a route's capability gets 403 rest_forbidden (Authentication 7 and 10).
    if (this.forbidden.some((prefix) => url.pathname.startsWith(`/v2${prefix}`))) return fail(403, 'rest_forbidden', 'Sorry, you are not allowed to do that.');
    if (req.method !== 'GET') return fail(404, 'rest_no_route', 'No route was found matching the URL and request method.');
    if (!url.pathname.startsWith('/v2/')) return fail(404, 'rest_no_route', 'No route was found matching the URL and request method.');
    const path = url.pathname.slice(3);
    try {
      const body = this.overrides.has(path) ? this.overrides.get(path) : this.route(path, url.searchParams, url);
      if (body === undefined) return fail(404, 'rest_no_route', 'No route was found matching the URL and request method.');
      if ('error' in (body as object) && (body as { error: unknown }).error) {
        const e = (body as unknown as { error: [number, string, string] }).error;
        return fail(e[0], e[1], e[2]);
      }
      send(200, body);
    } catch (err) {
      fail(500, 'internal_server_error', String(err));
    }
  }

  private route(path: string, q: URLSearchParams, url: URL): Json | undefined {
    const bad = (message: string): Json => ({ error: [400, 'rest_invalid_param', message] });
    const notFound = (what: string): Json => ({ error: [404, 'rest_post_invalid_id', `Invalid ${what} id.`] });
    let m: RegExpMatchArray | null;
    if (path === '/subscribers') return this.listContacts(q, url, bad);
    if ((m = path.match(/^\/subscribers\/(\d+)$/))) {
      const c = this.contacts.get(Number(m[1]));
      if (!c) return notFound('contact');
      const withs = q.getAll('with[]');
      return { subscriber: this.render(c, withs.includes('custom_fields') || withs.includes('subscriber.custom_values')) };
    }
    if (path === '/tags') return { tags: TAGS.map((t) => this.taxonomy(t, 'tagIds', q)) };
    if (path === '/lists') return { lists: LISTS.map((l) => this.taxonomy(l, 'listIds', q)) };
    if (path === '/custom-fields/contacts') return { fields: FIELDS };
    if (path === '/companies') {
      const r = paginate(COMPANIES, q, 10, url, bad, this.perPageCap) as Record<string, Json>;
      return 'error' in r ? r : { companies: subset(r) };
    }
    if (path === '/campaigns') {
      const rows = CAMPAIGNS.map((c) => (q.getAll('with[]').includes('stats') ? { ...(c as object), stats: CAMPAIGN_STATS[Number((c as { id: number }).id)]! } : c)) as Json[];
      return paginate(rows, q, 10, url, bad, this.perPageCap);
    }
    if (path === '/funnels') {
      const withCount = q.getAll('with[]').includes('subscribers_count');
      const all = FUNNELS.map((f) =>
        withCount ? { ...(f as object), subscribers_count: this.funnelSubscriberRows.filter((s) => Number((s as { funnel_id: Json }).funnel_id) === Number((f as { id: Json }).id)).length } : f,
      ) as Json[];
      const p = paginate(all, q, 10, url, bad, this.perPageCap) as Record<string, Json>;
      if ('error' in p) return p;
      return { funnels: p.data!, total: p.total!, per_page: p.per_page!, current_page: p.current_page!, last_page: p.last_page! };
    }
    if ((m = path.match(/^\/funnels\/(\d+)\/subscribers$/))) {
      const id = Number(m[1]);
      if (!FUNNELS.some((f) => Number((f as { id: Json }).id) === id)) return notFound('funnel');
      const status = q.get('status');
      if (status !== null && !['all', 'active', 'completed', 'cancelled', 'pending', 'waiting'].includes(status)) return bad('Invalid status.');
      // Newest first; `all` (and no status) means every subscriber.
      const rows = this.funnelSubscriberRows
        .filter((s) => Number((s as { funnel_id: Json }).funnel_id) === id)
        .filter((s) => status === null || status === 'all' || (s as { status: string }).status === status)
        .reverse();
      const r = paginate(rows, q, 15, url, bad, this.perPageCap) as Record<string, Json>;
      return 'error' in r ? r : { funnel_subscribers: subset(r) };
    }
    // Reports (Reports section): the shapes it gives; subscriber growth's is not shown (our choice).
    if (path === '/reports/options') return { options: { statuses: STATUSES } };
    if (path === '/reports/overview') {
      return {
        total_subscribers: this.contacts.size,
        subscriber_growth: { current_period: 5, previous_period: 4, growth_rate: 25 },
        email_stats: { emails_sent: 30, emails_opened: 12, emails_clicked: 4, open_rate: 40, click_rate: 13.33 },
        revenue: { total: 0, growth: 0 },
      };
    }
    if (path === '/reports/subscriber-growth')
      return {
        growth: [
          { date: '2025-07-01', count: 3 },
          { date: '2025-07-02', count: 0 },
          { date: '2025-07-03', count: '2' },
        ],
      };
    if ((m = path.match(/^\/reports\/campaigns\/(\d+)\/email-stats$/))) {
      const c = CAMPAIGNS.find((x) => Number((x as { id: Json }).id) === Number(m![1])) as { id: number; title: string } | undefined;
      if (!c) return { error: [404, 'report_not_found', 'Unknown report.'] };
      return {
        campaign_id: c.id,
        campaign_title: c.title,
        stats: { sent: 30, delivered: 29, opened: 12, clicked: 4, unsubscribed: 1, bounced: 1, delivery_rate: 96.67, open_rate: 41.38, click_rate: 13.79, unsubscribe_rate: 3.45 },
        revenue: { total: 0, orders: 0, conversion_rate: 0 },
      };
    }
    if ((m = path.match(/^\/reports\/funnels\/(\d+)\/conversion-stats$/))) {
      const f = FUNNELS.find((x) => Number((x as { id: Json }).id) === Number(m![1])) as { id: number; title: string } | undefined;
      if (!f) return { error: [404, 'report_not_found', 'Unknown report.'] };
      return {
        funnel_id: f.id,
        funnel_title: f.title,
        subscribers: { total_entered: 17, currently_active: 6, completed: 6, completion_rate: 35.29 },
        sequence_performance: [{ sequence_id: 10, title: 'Welcome mail', sent: 17, opened: 9, clicked: 3, open_rate: 52.94, click_rate: 17.65 }],
      };
    }
    if ((m = path.match(/^\/reports\/automations\/(\d+)\/steps$/))) {
      const f = FUNNELS.find((x) => Number((x as { id: Json }).id) === Number(m![1]));
      if (!f) return notFound('funnel');
      // Funnel 2 has no steps: an empty `stats` is valid (rule 4). Otherwise a root row first (rule 1).
      const stats: Json[] =
        Number((f as { id: Json }).id) === 2
          ? []
          : [
              { label: 'Entrance', count: 17, sequence_id: 0, type: 'root', percent: 100, percent_text: 100, previous_step_count: 17, drop_count: 0, drop_percent: 0 },
              { label: 'Welcome mail', count: 15, sequence_id: 10, type: 'action', percent: 88.24, percent_text: 88.24, previous_step_count: 17, drop_count: 2, drop_percent: 11.76 },
              { label: 'Goal', count: 20, sequence_id: 12, type: 'benchmark', percent: 100, percent_text: 117.65, previous_step_count: 15, drop_count: 0, drop_percent: 0 },
            ];
      return { funnel: { ...(f as object), created_by: '1' }, stats };
    }
    return undefined;
  }

  private taxonomy(t: { id: number } & Record<string, Json>, key: 'tagIds' | 'listIds', q: URLSearchParams): Json {
    const members = [...this.contacts.values()].filter((c) => c[key].includes(t.id));
    const out: Record<string, Json> = { ...t, id: t.id === 3 ? '3' : t.id };
    if (q.get('exclude_counts') !== 'true' && q.get('exclude_counts') !== '1') {
      out.totalCount = members.length;
      const subscribed = members.filter((c) => c.status === 'subscribed').length;
      out.subscribersCount = t.id === 2 ? String(subscribed) : subscribed;
    }
    return out;
  }

  private listContacts(q: URLSearchParams, url: URL, bad: (m: string) => Json): Json {
    const orderBy = q.get('order_by') ?? 'id';
    if (!['id', 'email', 'created_at'].includes(orderBy)) return bad(`order_by must be one of id, email, created_at`);
    const orderType = (q.get('order_type') ?? 'DESC').toUpperCase();
    if (orderType !== 'ASC' && orderType !== 'DESC') return bad('order_type must be ASC or DESC');
    const statuses = q.getAll('statuses[]');
    if (statuses.some((s) => !STATUSES.includes(s))) return bad('Invalid status in statuses.');
    const customFields = q.get('custom_fields') === 'true' || q.get('custom_fields') === '1';
    // A bare paginator: the spec names no wrapper key for this listing, unlike notes or funnel
    // subscribers. `total` is a count from a database aggregate, which "may be strings" (conventions 4).
    const page = paginate(
      this.matching(q).map((c) => this.render(c, customFields)),
      q,
      10,
      url,
      bad,
      this.perPageCap,
    ) as Record<string, Json>;
    if (typeof page.total === 'number') page.total = String(page.total);
    return page;
  }

  /** The contacts a (valid) listing query selects, in the order it serves them. */
  matching(q: URLSearchParams): SpecContact[] {
    const orderBy = q.get('order_by') ?? 'id';
    const orderType = (q.get('order_type') ?? 'DESC').toUpperCase();
    const statuses = q.getAll('statuses[]');
    const tags = q.getAll('tags[]').map(Number);
    const lists = q.getAll('lists[]').map(Number);
    const search = (q.get('search') ?? '').toLowerCase();
    return [...this.contacts.values()]
      .filter((c) => statuses.length === 0 || statuses.includes(c.status))
      .filter((c) => tags.length === 0 || c.tagIds.some((t) => tags.includes(t)))
      .filter((c) => lists.length === 0 || c.listIds.some((l) => lists.includes(l)))
      .filter((c) => !search || `${c.first_name} ${c.last_name} ${c.email}`.toLowerCase().includes(search))
      .sort((a, b) => {
        const k = orderBy as 'id' | 'email' | 'created_at';
        const cmp = a[k] < b[k] ? -1 : a[k] > b[k] ? 1 : a.id - b.id;
        return orderType === 'ASC' ? cmp : -cmp;
      });
  }
}

/**
 * "Some listings show only a subset of these keys" (conventions 2): the subset the spec itself shows
 * for notes (current_page, per_page, total, last_page, data), with `total` as a string.
 */
function subset(page: Json): Json {
  const p = page as Record<string, Json>;
  return { current_page: p.current_page!, per_page: p.per_page!, total: String(p.total), last_page: p.last_page!, data: p.data! };
}

/** The paginator envelope of Response conventions 2. Rejects a per_page or page that is not a positive integer. */
export function paginate(rows: Json[], q: URLSearchParams, defaultPerPage: number, url: URL, bad: (m: string) => Json, cap = Infinity): Json {
  const asked = q.has('per_page') ? Number(q.get('per_page')) : defaultPerPage;
  // "Maximum per_page value: not shown" (Limits): a capped server serves fewer and says so in per_page.
  const perPage = Math.min(asked, cap);
  const page = q.has('page') ? Number(q.get('page')) : 1;
  if (!Number.isInteger(asked) || asked < 1) return bad('per_page must be a positive integer');
  if (!Number.isInteger(page) || page < 1) return bad('page must be a positive integer');
  const total = rows.length;
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const data = rows.slice((page - 1) * perPage, page * perPage);
  const link = (p: number): string => {
    const u = new URL(url.href);
    u.searchParams.set('page', String(p));
    return `${u.pathname}?${u.searchParams}`;
  };
  return {
    total,
    per_page: perPage,
    current_page: page,
    last_page: lastPage,
    from: data.length ? (page - 1) * perPage + 1 : null,
    to: data.length ? (page - 1) * perPage + data.length : null,
    next_page_url: page < lastPage ? link(page + 1) : null,
    prev_page_url: page > 1 ? link(page - 1) : null,
    data,
  };
}
