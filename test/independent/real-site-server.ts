// A small CRM that behaves as the captured real deployments of fluentcrm 2.9 behave
// (../shared/fixtures/fluentcrm-2.9/ and its site-ny/ folder, with their READMEs), written without
// reading crmsync's client or simulator. Where the captures and the written interface
// (../shared/spec/crm-rest-api.md) disagree, this server follows the captures: that is what real
// sites do. It is seeded from the site-ny captures' own records (every contact any capture shows,
// the tags, lists, custom fields, campaigns, funnels, funnel subscribers and reports) plus
// generated contacts, and it logs every request it receives.
import { readFileSync, readdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

export const FIXTURES = '/work/shared/fixtures/fluentcrm-2.9';
export const SITE_NY = join(FIXTURES, 'site-ny');
/** The REST base path of a site with pretty permalinks (fixtures README, "Base path"). */
export const BASE_PATH = '/wp-json/fluent-crm/v2';
export const SITE_TZ = 'America/New_York';
export const REAL_USER = 'admin';
/** A WordPress application password: four-letter groups with spaces (WordPress also accepts it without them). */
export const REAL_PASSWORD = 'abcd EFGH ijkl MNOP qrst UVWX';

/** The body of one captured sample (the `body` of its JSON file). */
export function capture(name: string, folder = SITE_NY): Json {
  return (JSON.parse(readFileSync(join(folder, name), 'utf8')) as { body: Json }).body;
}

// ---- Time in the site's zone ---------------------------------------------------------------------

const wallFmt = new Intl.DateTimeFormat('en-CA', {
  timeZone: SITE_TZ,
  hourCycle: 'h23',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

/** An instant as the site's local wall time `YYYY-MM-DD HH:MM:SS` (what the plugin stores and sends). */
export function siteWall(ms: number): string {
  const p = Object.fromEntries(wallFmt.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

/** The site's local date `YYYY-MM-DD` of an instant. */
export function siteDate(ms: number): string {
  return siteWall(ms).slice(0, 10);
}

/**
 * A site wall time to its instant, as PHP reads a zone-less time (docs/warehouse.md, "Tables"): in the
 * hour the clocks repeat the earlier instant (daylight time); in the hour they skip, the time moved
 * forward by the skip (read with the offset in force before the change). Intl only.
 */
export function siteWallToMs(wall: string): number {
  const naive = Date.parse(`${wall.replace(' ', 'T')}Z`);
  const offsetAt = (ms: number): number => Date.parse(`${siteWall(ms).replace(' ', 'T')}Z`) - ms;
  const offsets = [...new Set([offsetAt(naive - 86_400_000), offsetAt(naive), offsetAt(naive + 86_400_000)])];
  const fits = offsets.map((o) => naive - o).filter((ms) => siteWall(ms) === wall);
  if (fits.length) return Math.min(...fits);
  return naive - offsetAt(naive - 86_400_000);
}

// ---- The data --------------------------------------------------------------------------------------

export interface TagRow {
  id: number;
  title: string;
  slug: string;
  description: string;
  created_at: string;
  updated_at: string;
}
export interface ListRow extends TagRow {
  is_public: string;
}
export interface Membership {
  id: number;
  /** The pivot row's `created_at`/`updated_at` (site wall time of the attach). */
  at: string;
}

/** The contact columns a listing row carries, in the order the plugin sends them. */
export const BASE_KEYS = [
  'id',
  'user_id',
  'hash',
  'contact_owner',
  'company_id',
  'prefix',
  'first_name',
  'last_name',
  'email',
  'timezone',
  'address_line_1',
  'address_line_2',
  'postal_code',
  'city',
  'state',
  'country',
  'ip',
  'latitude',
  'longitude',
  'total_points',
  'life_time_value',
  'phone',
  'status',
  'contact_type',
  'source',
  'avatar',
  'date_of_birth',
  'created_at',
  'last_activity',
  'updated_at',
] as const;

export interface RealContact {
  /** The columns of BASE_KEYS as the plugin sends them (ids int, user_id and counts strings, nulls null). */
  fields: Obj;
  tags: Membership[];
  lists: Membership[];
  /** Custom field slug to value (always strings on this plugin); only fields that have a value. */
  custom: Record<string, string>;
  /** Where the record came from: a capture file, or `generated`. */
  source: string;
}

export const PHOTO = 'http://127.0.0.1:8090/wp-content/plugins/fluent-crm/assets/images/avatar.png';
const TAG_CLASS = 'FluentCrm\\App\\Models\\Tag';
const LIST_CLASS = 'FluentCrm\\App\\Models\\Lists';
const SEED_PIVOT_AT = '2026-11-25 12:37:13';

export const TAGS: TagRow[] = ((capture('GET_tags_per_page_50.json') as Obj).tags as Obj).data as unknown as TagRow[];
export const LISTS: ListRow[] = (capture('GET_lists.json') as Obj).lists as unknown as ListRow[];
export const FIELDS = (capture('GET_custom-fields_contacts.json') as Obj).fields as Obj[];
/** Campaigns as the site lists them with `with[]=stats` (stats included). */
export const CAMPAIGNS_WITH_STATS = ((capture('GET_campaigns_with_stats.json') as Obj).campaigns as Obj).data as Obj[];
export const FUNNELS = ((capture('GET_funnels.json') as Obj).funnels as Obj).data as Obj[];
export const FUNNEL_REPORTS: Record<number, Json> = {
  1: capture('GET_funnels_id_report.json'),
  2: capture('GET_funnels_id2_report.json'),
};
const PLAN_OPTIONS = ['Free', 'Pro', 'Enterprise'];

/** Every contact record any site-ny capture shows, the fullest version of each (tags and custom values where shown). */
function capturedContacts(): Map<number, { rec: Obj; file: string; custom: Record<string, string> | null }> {
  const found = new Map<number, { rec: Obj; file: string; score: number; custom: Record<string, string> | null }>();
  const walk = (o: Json, file: string): void => {
    if (Array.isArray(o)) return o.forEach((v) => walk(v, file));
    if (o === null || typeof o !== 'object') return;
    if ('contact_type' in o && 'email' in o && 'hash' in o && typeof o.id === 'number') {
      const cv = (o.custom_fields ?? o.custom_values) as Json | undefined;
      const custom = cv === undefined ? null : Array.isArray(cv) ? {} : (cv as Record<string, string>);
      const score = ('tags' in o ? 2 : 0) + (custom ? 1 : 0);
      const prev = found.get(o.id);
      // Contact 58's tag and list test was reversed: its record before the test is the one to keep.
      const after = /after_(tag|list|put)_attach/.test(file);
      if (!after && (!prev || score > prev.score)) found.set(o.id, { rec: o, file, score, custom });
    }
    for (const v of Object.values(o)) walk(v, file);
  };
  for (const f of readdirSync(SITE_NY).sort()) if (f.endsWith('.json')) walk(capture(f), f);
  return new Map([...found].map(([id, v]) => [id, { rec: v.rec, file: v.file, custom: v.custom }]));
}

const FIRST = ['Ada', 'Grace', 'Zoë', 'Łukasz', 'Seán', 'Émile', 'Li', 'María José', 'Tom', 'Niklaus', 'Guido', 'Ken'];
const LAST = ['Lovelace', 'Hopper', 'Nuñez', 'Kowalski', "O'Brien", 'Zola', 'Wei', 'da Silva', 'Ng', 'Goldwasser', 'Stroustrup'];
const STATUSES = ['subscribed', 'subscribed', 'subscribed', 'unsubscribed', 'pending', 'bounced', 'subscribed', 'complained'];
const CITIES: (string | null)[] = [null, 'Lagos', 'Osaka', 'Austin', 'São Paulo', 'Zürich', null, 'Kraków'];
const COUNTRIES: (string | null)[] = [null, 'NG', 'JP', 'US', 'BR', 'CH', null, 'PL'];

/** A generated contact as the plugin would hold it; created across two years of New York wall time. */
function generatedContact(id: number): RealContact {
  const base = Date.UTC(2025, 0, 2, 14, 0, 0);
  const created = base + ((id * 7919) % 680) * 86_400_000 + ((id * 104_729) % 86_400) * 1000;
  const updated = id % 5 === 0 ? created : created + ((id * 31) % 200) * 3_600_000 + (id % 60) * 1000;
  const status = STATUSES[id % STATUSES.length]!;
  const funnelMember = id >= 3001 && id <= 3025;
  const first = funnelMember ? 'Member' : FIRST[id % FIRST.length]!;
  const last = funnelMember ? `Number${id - 3000}` : LAST[(id * 5) % LAST.length]!;
  const custom: Record<string, string> = {};
  if (id % 3 !== 0) custom.plan = PLAN_OPTIONS[id % 3 === 1 ? id % 2 : 2]!;
  if (id % 4 !== 0) custom.signup_score = String((id * 13) % 101);
  const fields: Obj = {
    id,
    user_id: funnelMember ? String(id - 2999) : id % 17 === 0 ? String(100 + id) : null,
    hash: `h${id.toString(16).padStart(31, '0')}`,
    contact_owner: null,
    company_id: null,
    prefix: id % 23 === 0 ? 'Dr.' : null,
    first_name: first,
    last_name: last,
    email: funnelMember ? `member${id - 3000}@members.example.test` : `${first.toLowerCase().replace(/[^a-z]/g, '')}.${last.toLowerCase().replace(/[^a-z]/g, '')}${id}@example.test`,
    timezone: null,
    address_line_1: id % 4 === 1 ? `${id} Main St` : null,
    address_line_2: id % 8 === 1 ? `Apt ${id % 50}` : null,
    postal_code: id % 4 === 1 ? String(10000 + id) : null,
    city: funnelMember ? null : CITIES[id % CITIES.length]!,
    state: id % 4 === 1 ? 'NY' : null,
    country: funnelMember ? null : COUNTRIES[id % COUNTRIES.length]!,
    ip: id % 9 === 0 ? `203.0.113.${id % 250}` : null,
    latitude: null,
    longitude: null,
    total_points: String(id % 7 === 0 ? id % 90 : 0),
    life_time_value: '0',
    phone: id % 3 === 1 ? `+1-555-${String(1000 + (id % 9000)).padStart(4, '0')}` : null,
    status: funnelMember ? 'subscribed' : status,
    contact_type: id % 6 === 0 ? 'customer' : 'lead',
    source: funnelMember ? 'web' : id % 10 === 0 ? 'csv-import' : null,
    avatar: null,
    date_of_birth: id % 5 === 2 ? `19${String(60 + (id % 40))}-${String((id % 12) + 1).padStart(2, '0')}-${String((id % 28) + 1).padStart(2, '0')}` : null,
    created_at: siteWall(created),
    last_activity: id % 4 === 0 ? siteWall(updated + 3_600_000) : null,
    updated_at: siteWall(updated),
  };
  const tags = funnelMember ? [2] : [1, 2, 3, 4, 5, 6, 7, 8].filter((t) => (id * 3 + t * 7) % 9 === 0 || (t === 1 && id % 10 === 3));
  const lists = funnelMember ? [] : [1, 2, 3, 4, 5].filter((l) => (id + l * 5) % 7 === 0 || (l === 3 && id % 11 === 0));
  return {
    fields,
    tags: tags.map((t) => ({ id: t, at: SEED_PIVOT_AT })),
    lists: lists.map((l) => ({ id: l, at: SEED_PIVOT_AT })),
    custom: funnelMember ? {} : custom,
    source: 'generated',
  };
}

/** The captured contacts, kept as captured; tags, lists and custom values filled in where no capture shows them. */
function seedContacts(): Map<number, RealContact> {
  const out = new Map<number, RealContact>();
  for (const [id, { rec, file, custom }] of capturedContacts()) {
    const fields: Obj = {};
    for (const k of BASE_KEYS) fields[k] = rec[k] === undefined ? null : rec[k]!;
    const gen = generatedContact(id);
    // The captures redact each contact's unique hash; a live site sends the hash itself.
    if (fields.hash === 'REDACTED') fields.hash = gen.fields.hash!;
    const pivots = (key: 'tags' | 'lists'): Membership[] => (rec[key] as Obj[]).map((t) => ({ id: t.id as number, at: (t.pivot as Obj).created_at as string }));
    let tags: Membership[];
    let lists: Membership[];
    if (Array.isArray(rec.tags)) {
      tags = pivots('tags');
      lists = pivots('lists');
    } else if (id >= 3026 && id <= 3040) {
      // Funnel 1's first step tags every entrant as Customer (tag 2).
      tags = [{ id: 2, at: fields.created_at as string }];
      lists = [];
    } else if (id >= 3041 && id <= 3048) {
      // Funnel 2 tags as Partner (8) and adds to Partners Program (list 5).
      tags = [{ id: 8, at: fields.created_at as string }];
      lists = [{ id: 5, at: fields.created_at as string }];
    } else {
      tags = gen.tags;
      lists = gen.lists;
    }
    const funnelContact = id >= 3026 && id <= 3048;
    out.set(id, { fields, tags, lists, custom: custom ?? (funnelContact ? {} : gen.custom), source: file });
  }
  // Generated contacts: ids below 701 (some ids left out: contacts deleted long ago) and funnel 1's first 25 entrants.
  for (let id = 6; id <= 700; id++) if (!out.has(id) && id % 37 !== 0) out.set(id, generatedContact(id));
  for (let id = 3001; id <= 3025; id++) out.set(id, generatedContact(id));
  return out;
}

/** Funnel subscribers: funnel 2's 8 rows and funnel 1's 15 newest rows as captured; funnel 1's 25 older rows made from row 26. */
function seedFunnelSubscribers(): Obj[] {
  const f1 = ((capture('GET_funnels_id_subscribers.json') as Obj).funnel_subscribers as Obj).data as Obj[];
  const f2 = ((capture('GET_funnels_id2_subscribers.json') as Obj).funnel_subscribers as Obj).data as Obj[];
  const template = f1.find((r) => r.id === 26)!;
  const rows: Obj[] = [];
  for (let i = 1; i <= 25; i++) {
    const r = structuredClone(template);
    const sid = String(3000 + i);
    r.id = i;
    r.subscriber_id = sid;
    r.source_ref_id = String(i + 1);
    r.created_at = `2026-11-25 12:39:${String(4 + i).padStart(2, '0')}`;
    r.updated_at = r.created_at;
    r.metrics = (r.metrics as Obj[]).map((m, k) => ({ ...m, id: 2 * i - 1 + k, subscriber_id: sid }));
    rows.push(r);
  }
  for (const r of [...f1].reverse()) rows.push(structuredClone(r));
  for (const r of [...f2].reverse()) rows.push(structuredClone(r));
  for (const r of rows) delete r.subscriber;
  return rows;
}

/** The companies of site-ny (their names from its `reports/options`), in the shape GET /companies gives. */
function seedCompanies(): Obj[] {
  const opts = ((capture('GET_reports_options_fields_sync_lookups.json') as Obj).options as Obj).companies as Obj[];
  const shape = (((capture('GET_companies.json', FIXTURES) as Obj).companies as Obj).data as Obj[])[1]!;
  return opts.map((c) => ({ ...structuredClone(shape), id: c.id!, name: c.title!, contacts_count: 0, created_at: '2026-11-25 12:36:52', updated_at: '2026-11-25 12:36:52' }));
}

// ---- Encoding as PHP's json_encode does it ----------------------------------------------------------

/** json_encode with WordPress's default flags: `/` escaped as `\/`, every non-ASCII character as `\uXXXX`. */
export function phpJson(v: Json): string {
  return JSON.stringify(v)
    .replace(/\//g, '\\/')
    .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

// ---- The server -----------------------------------------------------------------------------------

export interface LoggedRequest {
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  accept: string;
  status: number;
  /** The parsed body served, for report routes (to compare snapshots with what was served). */
  body?: Json;
  at: number;
}

export interface Fault {
  match: (r: LoggedRequest) => boolean;
  status: number;
  body: Json;
  /** How many more times it fires. */
  times: number;
}

/** A MariaDB deadlock as the plugin reports a database exception: 423 with the SQL in `message` (fixtures README). */
export function deadlock423(sql: string): Json {
  return { message: `SQLSTATE[40001]: Serialization failure: 1213 Deadlock found when trying to get lock; try restarting transaction (SQL: ${sql})` };
}

const NO_ROUTE: Obj = { code: 'rest_no_route', message: 'No route was found matching the URL and request method.', data: { status: 404 } };
const FORBIDDEN = (status: number): Obj => ({ code: 'rest_forbidden', message: 'Sorry, you are not allowed to do that.', data: { status } });
const CRITICAL: Obj = {
  code: 'internal_server_error',
  message: '<p>There has been a critical error on this website.</p><p><a href="https://wordpress.org/support/article/faq-troubleshooting/">Learn more about troubleshooting WordPress.</a></p>',
  data: { status: 500 },
  additional_errors: [],
};

class HttpAnswer {
  constructor(
    readonly status: number,
    readonly body: Json,
  ) {}
}

/**
 * The plugin's SQL-ish sort of rows by one column. There is no tie-breaker (site-ny README, Sorting):
 * rows that share the key come in table order (id ascending), or, given `tieWindow`, in an order
 * that depends on the request's LIMIT window (offset + limit), as MySQL and MariaDB may return
 * rows with equal ORDER BY values "in any order, and differently depending on the execution plan"
 * (a LIMIT sort keeps a priority queue of offset + limit rows). Deterministic for one window.
 */
function sortRows<T>(rows: T[], key: (r: T) => string | number | null, asc: boolean, tieWindow?: number): T[] {
  const mix = (i: number): number => {
    let h = Math.imul(i ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(tieWindow! + 0x27d4eb2f, 0xc2b2ae35);
    h ^= h >>> 15;
    h = Math.imul(h, 0x2c1b3c6d);
    return (h ^ (h >>> 12)) >>> 0;
  };
  return rows
    .map((r, i) => ({ r, i: tieWindow === undefined ? i : mix(i), k: key(r) }))
    .sort((a, b) => {
      const x = a.k ?? '';
      const y = b.k ?? '';
      const c = x < y ? -1 : x > y ? 1 : 0;
      return (asc ? c : -c) || a.i - b.i;
    })
    .map((x) => x.r);
}

export class RealSiteServer {
  readonly contacts = seedContacts();
  readonly funnelSubscribers = seedFunnelSubscribers();
  readonly companies = seedCompanies();
  readonly campaigns = structuredClone(CAMPAIGNS_WITH_STATS);
  readonly requests: LoggedRequest[] = [];
  readonly faults: Fault[] = [];
  /** Emails sent per site day (`reports/email-sents`), and opens and clicks (site-ny: 1,015 / 443 / 160 on 2026-11-25). */
  readonly emailSeries: Record<'sents' | 'opens' | 'clicks', Record<string, number>> = {
    sents: { '2026-11-25': 1015 },
    opens: { '2026-11-25': 443 },
    clicks: { '2026-11-25': 160 },
  };
  /** Rows sharing a sort key (other than the unique id) come in an order that depends on the page's LIMIT window. */
  shuffleTies = false;
  baseUrl = '';
  private server = createServer((req, res) => this.handle(req, res));

  async start(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${BASE_PATH}`;
    return this.baseUrl;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  /** Now, as the site's wall time. */
  now(): string {
    return siteWall(Date.now());
  }

  // -- edits as the plugin applies them (site-ny README: membership changes leave updated_at alone) --

  /** A field edit: the plugin sets `updated_at` to now (or to `when`, one second shared by a bulk edit). */
  edit(id: number, fields: Obj, custom?: Record<string, string>, when = this.now()): void {
    const c = this.contacts.get(id)!;
    Object.assign(c.fields, fields);
    if (custom) c.custom = custom;
    c.fields.updated_at = when;
  }

  attachTag(id: number, tagId: number): void {
    this.contacts.get(id)!.tags.push({ id: tagId, at: this.now() });
  }

  detachTag(id: number, tagId: number): void {
    const c = this.contacts.get(id)!;
    c.tags = c.tags.filter((t) => t.id !== tagId);
  }

  detachList(id: number, listId: number): void {
    const c = this.contacts.get(id)!;
    c.lists = c.lists.filter((l) => l.id !== listId);
  }

  create(id: number, fields: Obj, tags: number[], lists: number[], custom: Record<string, string>): void {
    const now = this.now();
    const c = generatedContact(id);
    Object.assign(c.fields, { created_at: now, updated_at: now, last_activity: null }, fields);
    c.tags = tags.map((t) => ({ id: t, at: now }));
    c.lists = lists.map((l) => ({ id: l, at: now }));
    c.custom = custom;
    this.contacts.set(id, c);
  }

  // -- rendering --

  fullName(c: RealContact): string {
    return [c.fields.first_name, c.fields.last_name].filter((x) => x !== null && x !== '').join(' ');
  }

  private segment(m: Membership, c: RealContact, kind: 'tags' | 'lists'): Obj {
    const def = (kind === 'tags' ? TAGS : LISTS).find((t) => t.id === m.id)!;
    const { id, title, slug, description, created_at, updated_at } = def;
    const out: Obj = { id, title, slug, description };
    if (kind === 'lists') out.is_public = (def as ListRow).is_public;
    Object.assign(out, {
      created_at,
      updated_at,
      pivot: { subscriber_id: String(c.fields.id), object_id: String(m.id), object_type: kind === 'tags' ? TAG_CLASS : LIST_CLASS, created_at: m.at, updated_at: m.at },
    });
    return out;
  }

  /** A row of GET /subscribers: `custom_fields` only when asked, `company` and `companies` at the end. */
  listRow(c: RealContact, withCustom: boolean): Obj {
    const out: Obj = { ...c.fields };
    if (withCustom) out.custom_fields = Object.keys(c.custom).length ? { ...c.custom } : [];
    Object.assign(out, {
      full_name: this.fullName(c),
      photo: PHOTO,
      tags: c.tags.map((m) => this.segment(m, c, 'tags')),
      lists: c.lists.map((m) => this.segment(m, c, 'lists')),
      company: null,
      companies: [],
    });
    return out;
  }

  /** GET /subscribers/{id}: `stats` and `custom_values` only through `with[]`; `companies` but no `company`. */
  singleRow(c: RealContact, withs: string[]): Obj {
    const out: Obj = { ...c.fields };
    if (withs.includes('stats')) out.stats = { emails: 2, opens: 1, clicks: 0 };
    if (withs.includes('subscriber.custom_values')) out.custom_values = Object.keys(c.custom).length ? { ...c.custom } : [];
    Object.assign(out, {
      full_name: this.fullName(c),
      photo: PHOTO,
      tags: c.tags.map((m) => this.segment(m, c, 'tags')),
      lists: c.lists.map((m) => this.segment(m, c, 'lists')),
      companies: [],
    });
    return out;
  }

  /** A contact as embedded in a funnel subscriber row (no tags, lists or companies). */
  embedded(c: RealContact): Obj {
    return { ...c.fields, full_name: this.fullName(c), photo: PHOTO };
  }

  // -- HTTP --

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://x');
    const query: Record<string, string | string[]> = {};
    for (const [k, v] of url.searchParams) {
      if (k.endsWith('[]')) ((query[k] ??= []) as string[]).push(v);
      else query[k] = v;
    }
    const entry: LoggedRequest = { method: req.method ?? '', path: url.pathname, query, accept: String(req.headers.accept ?? ''), status: 0, at: Date.now() };
    this.requests.push(entry);
    const wantsJson = entry.accept.includes('application/json');
    const send = (status: number, body: Json, extra: Record<string, string> = {}): void => {
      entry.status = status;
      if (status === 200 && url.pathname.startsWith(`${BASE_PATH}/reports`)) entry.body = body;
      if (status === 200 && /\/funnels\/\d+\/report$/.test(url.pathname)) entry.body = body;
      const fluent: Record<string, string> = { expires: 'Wed, 11 Jan 1984 05:00:00 GMT', 'cache-control': 'no-cache, must-revalidate, max-age=0' };
      res.writeHead(status, {
        'x-powered-by': 'PHP/8.2.36',
        'content-type': 'application/json; charset=UTF-8',
        'x-robots-tag': 'noindex',
        link: '<http://127.0.0.1:8090/wp-json/>; rel="https://api.w.org/"',
        'x-content-type-options': 'nosniff',
        'access-control-expose-headers': 'X-WP-Total, X-WP-TotalPages, Link',
        'access-control-allow-headers': 'Authorization, X-WP-Nonce, Content-Disposition, Content-MD5, Content-Type',
        ...(status === 401 || status === 404 ? {} : fluent),
        ...extra,
      });
      res.end(body === undefined ? '' : phpJson(body));
    };
    // Drain the body (none is read: this server serves what a pull reads).
    req.resume();
    req.on('end', () => {
      if (!url.pathname.startsWith(`${BASE_PATH}/`)) return send(404, NO_ROUTE);
      const path = url.pathname.slice(BASE_PATH.length);
      const method = (req.headers['x-http-method-override'] as string | undefined)?.toUpperCase() ?? url.searchParams.get('_method')?.toUpperCase() ?? req.method ?? 'GET';
      // Unknown routes are 404 even without credentials (fixtures README, Auth).
      if (method !== 'GET' || !this.knownRoute(path)) return send(404, NO_ROUTE);
      const auth = req.headers.authorization ?? '';
      const decoded = auth.startsWith('Basic ') ? Buffer.from(auth.slice(6), 'base64').toString('utf8') : '';
      const sep = decoded.indexOf(':');
      const [user, pass] = sep < 0 ? ['', ''] : [decoded.slice(0, sep), decoded.slice(sep + 1)];
      // A wrong application password is 401 rest_forbidden, not incorrect_password; no WWW-Authenticate.
      if (user !== REAL_USER || pass.replace(/ /g, '') !== REAL_PASSWORD.replace(/ /g, '')) return send(401, FORBIDDEN(401));
      const fault = this.faults.find((f) => f.times > 0 && f.match(entry));
      if (fault) {
        fault.times--;
        return send(fault.status, fault.body);
      }
      try {
        const body = this.route(path, url.searchParams);
        if (body === undefined) return send(404, NO_ROUTE);
        send(200, body);
      } catch (err) {
        if (!(err instanceof HttpAnswer)) throw err;
        // A PHP fatal error: WordPress's HTML error page when the request did not ask for JSON.
        if (err.status === 500 && !wantsJson) {
          entry.status = 500;
          res.writeHead(500, { 'content-type': 'text/html; charset=UTF-8' });
          return res.end(capture('GET_subscribers_no_accept_header_per_page_0.json', FIXTURES) as string);
        }
        send(err.status, err.body);
      }
    });
  }

  private knownRoute(path: string): boolean {
    return [
      /^\/subscribers$/,
      /^\/subscribers\/\d+$/,
      /^\/tags$/,
      /^\/tags\/\d+$/,
      /^\/lists$/,
      /^\/lists\/\d+$/,
      /^\/custom-fields\/contacts$/,
      /^\/companies$/,
      /^\/campaigns$/,
      /^\/campaigns\/\d+$/,
      /^\/funnels$/,
      /^\/funnels\/\d+$/,
      /^\/funnels\/\d+\/subscribers$/,
      /^\/funnels\/\d+\/report$/,
      /^\/reports\/(dashboard-stats|subscribers|email-sents|email-opens|email-clicks|options|ping)$/,
      /^\/webhooks$/,
    ].some((r) => r.test(path));
  }

  /** per_page and page as the plugin reads them (PHP intval; fixtures README, "per_page" and "page"). */
  private paging(q: URLSearchParams, table: string, order: string): { perPage: number; page: number } {
    const raw = q.get('per_page');
    const perPage = raw === null ? 15 : Number.parseInt(raw, 10) || 0;
    if (perPage === 0) throw new HttpAnswer(500, CRITICAL);
    if (perPage < 0) {
      throw new HttpAnswer(423, {
        message: `You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near '' at line 1 (SQL: select * from \`${table}\` order by ${order} offset 0)`,
      });
    }
    const page = Math.max(1, Number.parseInt(q.get('page') ?? '1', 10) || 1);
    return { perPage, page };
  }

  /** The Laravel paginator of the plugin: last_page 0 and from/to null when empty; links relative, keeping only `page`. */
  private paginate(rows: Json[], perPage: number, page: number, path: string): Obj {
    const total = rows.length;
    const lastPage = Math.ceil(total / perPage);
    const data = rows.slice((page - 1) * perPage, page * perPage);
    const link = (p: number): string => `${BASE_PATH}${path}?page=${p}`;
    return {
      total,
      per_page: perPage,
      current_page: page,
      last_page: lastPage,
      next_page_url: page < lastPage ? link(page + 1) : null,
      prev_page_url: page > 1 ? link(page - 1) : null,
      from: data.length ? (page - 1) * perPage + 1 : null,
      to: data.length ? (page - 1) * perPage + data.length : null,
      data,
    };
  }

  private bench(): number {
    return 0.01 + Math.random() * 0.03;
  }

  private route(path: string, q: URLSearchParams): Json | undefined {
    let m: RegExpMatchArray | null;
    if (path === '/subscribers') return this.listSubscribers(q);
    if ((m = path.match(/^\/subscribers\/(\d+)$/))) {
      const id = Number(m[1]);
      const email = q.get('get_by_email');
      const c = id === 0 && email ? [...this.contacts.values()].find((x) => String(x.fields.email).toLowerCase() === email.toLowerCase()) : this.contacts.get(id);
      // An unknown or deleted contact: 422 "Subscriber not found" (not 404).
      if (!c) throw new HttpAnswer(422, { message: 'Subscriber not found' });
      return { subscriber: this.singleRow(c, q.getAll('with[]')), __bench: this.bench() };
    }
    if (path === '/tags') return this.listTags(q);
    if (path === '/lists') return this.listLists(q);
    if ((m = path.match(/^\/tags\/(\d+)$/))) return { tag: (TAGS.find((t) => t.id === Number(m![1])) as unknown as Json) ?? null };
    if (path === '/custom-fields/contacts') return { fields: FIELDS, __bench: this.bench() };
    if (path === '/companies') {
      const { perPage, page } = this.paging(q, 'wp_fc_companies', '`id` desc');
      return { companies: this.paginate([...this.companies].reverse(), perPage, page, path), __bench: this.bench() };
    }
    if (path === '/campaigns') return this.listCampaigns(q);
    if ((m = path.match(/^\/campaigns\/(\d+)$/))) {
      const c = this.campaigns.find((x) => x.id === Number(m![1]));
      if (!c) throw new HttpAnswer(404, { message: 'No query results for model [FluentCrm\\App\\Models\\Campaign].' });
      const { stats: _stats, ...rest } = c;
      return { campaign: rest, __bench: this.bench() };
    }
    if (path === '/funnels') {
      const { perPage, page } = this.paging(q, 'wp_fc_funnels', '`id` desc');
      const rows = [...FUNNELS]
        .sort((a, b) => Number(b.id) - Number(a.id))
        .map((f) => ({ ...structuredClone(f), subscribers_count: this.funnelSubscribers.filter((s) => Number(s.funnel_id) === f.id).length }));
      return { funnels: this.paginate(rows, perPage, page, path), __bench: this.bench() };
    }
    if ((m = path.match(/^\/funnels\/(\d+)$/))) {
      const f = FUNNELS.find((x) => x.id === Number(m![1]));
      if (!f) throw new HttpAnswer(404, { message: 'No query results for model [FluentCrm\\App\\Models\\Funnel].' });
      const { subscribers_count: _n, ...rest } = f;
      return { funnel: rest, __bench: this.bench() };
    }
    if ((m = path.match(/^\/funnels\/(\d+)\/subscribers$/))) return this.listFunnelSubscribers(Number(m[1]), q, path);
    if ((m = path.match(/^\/funnels\/(\d+)\/report$/))) {
      const r = FUNNEL_REPORTS[Number(m[1])];
      if (!r) throw new HttpAnswer(404, { message: 'No query results for model [FluentCrm\\App\\Models\\Funnel].' });
      return { ...(structuredClone(r) as Obj), __bench: this.bench() };
    }
    if (path === '/reports/ping') return { message: 'pong', __bench: this.bench() };
    if (path === '/reports/options') return this.options(q);
    if (path === '/reports/dashboard-stats') return this.dashboardStats();
    if (path === '/reports/subscribers') return this.series(q, (from, to) => this.subscribedCreated(from, to));
    if ((m = path.match(/^\/reports\/email-(sents|opens|clicks)$/))) {
      const per = this.emailSeries[m[1] as 'sents' | 'opens' | 'clicks'];
      return this.series(q, (from, to) => Object.entries(per).flatMap(([d, n]) => (d >= from && d < to ? Array(n).fill(d) : [])));
    }
    if (path === '/webhooks') return { webhooks: [], fields: [], custom_fields: [], lists: LISTS as unknown as Json, tags: TAGS as unknown as Json, schema: {}, __bench: this.bench() };
    return undefined;
  }

  private listSubscribers(q: URLSearchParams): Json {
    const sortBy = q.get('sort_by') ?? 'id';
    const asc = (q.get('sort_type') ?? 'DESC').toUpperCase() === 'ASC';
    const columns = new Set<string>(BASE_KEYS);
    const { perPage, page } = this.paging(q, 'wp_fc_subscribers', `\`${columns.has(sortBy) ? sortBy : 'id'}\` ${asc ? 'asc' : 'desc'}`);
    const valid = ['subscribed', 'pending', 'unsubscribed', 'transactional', 'bounced', 'complained', 'spammed'];
    // statuses[]=bogus is ignored (all contacts come back); order_by/order_type are ignored.
    const statuses = q.getAll('statuses[]').filter((s) => valid.includes(s));
    const tags = q.getAll('tags[]').map(Number);
    const lists = q.getAll('lists[]').map(Number);
    const search = (q.get('search') ?? '').toLowerCase();
    let rows = [...this.contacts.values()]
      .sort((a, b) => Number(a.fields.id) - Number(b.fields.id))
      .filter((c) => !statuses.length || statuses.includes(String(c.fields.status)))
      .filter((c) => !tags.length || c.tags.some((t) => tags.includes(t.id)))
      .filter((c) => !lists.length || c.lists.some((l) => lists.includes(l.id)))
      .filter((c) => !search || `${this.fullName(c)} ${String(c.fields.email)}`.toLowerCase().includes(search));
    // sort_by an unknown column: no ORDER BY at all (table order, id ascending), sort_type has no effect.
    if (columns.has(sortBy)) rows = sortRows(rows, (c) => c.fields[sortBy] as string | number | null, asc, this.shuffleTies && sortBy !== 'id' ? page * perPage : undefined);
    const custom = q.get('custom_fields');
    const withCustom = custom === 'true';
    const pageRows = this.paginate(rows as unknown as Json[], perPage, page, '/subscribers');
    pageRows.data = (pageRows.data as unknown as RealContact[]).map((c) => this.listRow(c, withCustom));
    return { subscribers: pageRows, custom, __bench: this.bench() };
  }

  tagCounts(tagId: number): { subscribersCount: number; totalCount: number } {
    const members = [...this.contacts.values()].filter((c) => c.tags.some((t) => t.id === tagId));
    return { totalCount: members.length, subscribersCount: members.filter((c) => c.fields.status === 'subscribed').length };
  }

  listCounts(listId: number): { subscribersCount: number; totalCount: number } {
    const members = [...this.contacts.values()].filter((c) => c.lists.some((l) => l.id === listId));
    return { totalCount: members.length, subscribersCount: members.filter((c) => c.fields.status === 'subscribed').length };
  }

  /** Tags: a paginator; `subscribersCount` counts subscribed members only; no `totalCount` (site-ny README). */
  private listTags(q: URLSearchParams): Json {
    const sortBy = q.get('sort_by') ?? 'id';
    const asc = (q.get('sort_order') ?? 'DESC').toUpperCase() === 'ASC';
    const { perPage, page } = this.paging(q, 'wp_fc_tags', `\`${sortBy}\` ${asc ? 'asc' : 'desc'}`);
    const search = (q.get('search') ?? '').toLowerCase();
    const exclude = q.get('exclude_counts') === '1' || q.get('exclude_counts') === 'true';
    let rows = TAGS.filter((t) => !search || `${t.title} ${t.slug} ${t.description}`.toLowerCase().includes(search)).map((t) => {
      const out: Obj = { ...t };
      if (!exclude) out.subscribersCount = this.tagCounts(t.id).subscribersCount;
      return out;
    });
    rows = sortRows(rows, (t) => (sortBy === 'title' ? String(t.title) : Number(t.id)), asc);
    const out: Obj = { tags: this.paginate(rows, perPage, page, '/tags') };
    if (q.get('all_tags') === 'true') out.all_tags = TAGS.map((t) => ({ id: String(t.id), title: t.title, slug: t.slug }));
    out.__bench = this.bench();
    return out;
  }

  /** Lists: a plain array and `pagination.total`, no paginator, no `__bench`; `totalCount` and `subscribersCount`. */
  private listLists(q: URLSearchParams): Json {
    const sortBy = q.get('sort_by') ?? 'id';
    const asc = (q.get('sort_order') ?? 'DESC').toUpperCase() === 'ASC';
    const { perPage, page } = this.paging(q, 'wp_fc_lists', `\`${sortBy}\` ${asc ? 'asc' : 'desc'}`);
    const exclude = q.get('exclude_counts') === '1' || q.get('exclude_counts') === 'true';
    let rows: Obj[] = LISTS.map((l) => {
      const out: Obj = { ...l };
      if (!exclude) Object.assign(out, this.listCounts(l.id));
      return out;
    });
    rows = sortRows(rows, (t) => (sortBy === 'title' ? String(t.title) : Number(t.id)), asc);
    return { lists: rows.slice((page - 1) * perPage, page * perPage), pagination: { total: rows.length } };
  }

  private listCampaigns(q: URLSearchParams): Json {
    const sortBy = q.get('sort_by') ?? 'id';
    const asc = (q.get('sort_type') ?? 'DESC').toUpperCase() === 'ASC';
    const { perPage, page } = this.paging(q, 'wp_fc_campaigns', `\`${sortBy}\` ${asc ? 'asc' : 'desc'}`);
    const known = ['id', 'title', 'status', 'created_at', 'updated_at', 'scheduled_at', 'recipients_count'];
    if (!known.includes(sortBy)) {
      throw new HttpAnswer(423, {
        message: `Unknown column '${sortBy}' in 'ORDER BY' (SQL: select * from \`wp_fc_campaigns\` where \`type\` = 'campaign' order by \`${sortBy}\` ${asc ? 'asc' : 'desc'} limit ${perPage} offset ${(page - 1) * perPage})`,
      });
    }
    const withStats = q.getAll('with[]').includes('stats');
    let rows: Obj[] = this.campaigns.map((c) => {
      const out = structuredClone(c);
      if (!withStats) {
        delete out.stats;
        delete out.next_step;
        delete out.labels;
      }
      return out;
    });
    rows = sortRows(rows, (c) => c[sortBy] as string | number | null, asc);
    return { campaigns: this.paginate(rows, perPage, page, '/campaigns'), __bench: this.bench() };
  }

  /** Funnel subscribers: newest id first; `status` a literal filter (`all` matches nothing); each row embeds its contact. */
  private listFunnelSubscribers(funnelId: number, q: URLSearchParams, path: string): Json {
    if (!FUNNELS.some((f) => f.id === funnelId)) throw new HttpAnswer(404, { message: 'No query results for model [FluentCrm\\App\\Models\\Funnel].' });
    const { perPage, page } = this.paging(q, 'wp_fc_funnel_subscribers', '`id` desc');
    const status = q.get('status');
    const rows = this.funnelSubscribers
      .filter((s) => Number(s.funnel_id) === funnelId)
      .filter((s) => status === null || status === '' || s.status === status)
      .sort((a, b) => Number(b.id) - Number(a.id));
    const p = this.paginate(rows, perPage, page, path);
    p.data = (p.data as Obj[]).map((s) => {
      const c = this.contacts.get(Number(s.subscriber_id));
      const { last_sequence, next_sequence_item, metrics, ...head } = s;
      return { ...head, subscriber: c ? this.embedded(c) : null, last_sequence: last_sequence!, next_sequence_item: next_sequence_item!, metrics: metrics! };
    });
    return { funnel_subscribers: p, __bench: this.bench() };
  }

  /** `reports/options`: 422 without `fields`; the named option sets otherwise (tag `id` int, `value` string). */
  private options(q: URLSearchParams): Json {
    const fields = (q.get('fields') ?? '').split(',').filter(Boolean);
    if (!fields.length) throw new HttpAnswer(422, { message: 'Missing requested fields field.' });
    const captured = (capture('GET_reports_options_fields_sync_lookups.json') as Obj).options as Obj;
    const options: Obj = {};
    for (const f of fields) if (f in captured) options[f] = captured[f]!;
    return { options, __bench: this.bench() };
  }

  private dashboardStats(): Json {
    const body = structuredClone(capture('GET_reports_dashboard-stats.json')) as Obj;
    const stats = body.stats as Record<string, Obj>;
    stats.total_subscribers!.count = [...this.contacts.values()].filter((c) => c.fields.status === 'subscribed').length;
    stats.total_campaigns!.count = this.campaigns.length;
    stats.email_sent!.count = Object.values(this.emailSeries.sents).reduce((a, b) => a + b, 0);
    stats.tags!.count = TAGS.length;
    stats.total_automations!.count = FUNNELS.filter((f) => f.status === 'published').length;
    body.__bench = this.bench();
    return body;
  }

  /** Site days on which subscribed contacts were created, one entry per contact (`reports/subscribers` counts subscribed ones only). */
  private subscribedCreated(from: string, to: string): string[] {
    return [...this.contacts.values()]
      .filter((c) => c.fields.status === 'subscribed')
      .map((c) => String(c.fields.created_at).slice(0, 10))
      .filter((d) => d >= from && d < to);
  }

  /**
   * A report series `{stats: {key: int}}`. No params: the last 30 days and today, 31 daily keys.
   * `date_range[]=a&date_range[]=b`: a up to b with b excluded; over 92 days, month keys (`Nov 2025`),
   * a final partial month only if it has rows. A date PHP cannot parse: 423 with PHP's message.
   */
  private series(q: URLSearchParams, days: (from: string, to: string) => string[]): Json {
    const range = q.getAll('date_range[]');
    const today = siteDate(Date.now());
    const addDays = (d: string, n: number): string => new Date(Date.parse(`${d}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
    let from: string;
    let to: string;
    if (range.length >= 2) {
      for (const d of range.slice(0, 2)) {
        if (!/^\d{4}-\d{2}-\d{2}/.test(d)) throw new HttpAnswer(423, { message: `Failed to parse time string (${d}) at position 0 (${d[0] ?? ''}): The timezone could not be found in the database` });
      }
      from = range[0]!.slice(0, 10);
      to = range[1]!.slice(0, 10);
    } else {
      from = addDays(today, -30);
      to = addDays(today, 1);
    }
    const hits = days(from, to);
    const spanDays = Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
    const stats: Record<string, number> = {};
    if (spanDays > 92) {
      const monthKey = (d: string): string => new Date(`${d}T00:00:00Z`).toLocaleString('en-US', { month: 'short', year: 'numeric', timeZone: 'UTC' });
      const lastMonth = monthKey(addDays(to, -1));
      for (let d = from; d < to; d = addDays(d, 1)) if (monthKey(d) !== lastMonth) stats[monthKey(d)] ??= 0;
      for (const d of hits) stats[monthKey(d)] = (stats[monthKey(d)] ?? 0) + 1;
    } else {
      for (let d = from; d < to; d = addDays(d, 1)) stats[d] = 0;
      for (const d of hits) stats[d] = (stats[d] ?? 0) + 1;
    }
    return { stats, __bench: this.bench() };
  }
}

/** The environment a user gives `crmsync` for this site: its URL, credentials and time zone, and a warehouse under `dir`. */
export function realSiteCliEnv(baseUrl: string, dir: string, taskQueue: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    ...Object.fromEntries(['TEMPORAL_CLI_PATH', 'XDG_CACHE_HOME'].flatMap((k) => (process.env[k] ? [[k, process.env[k]]] : []))),
    CRMSYNC_EMBEDDED_IDLE: '0',
    CRM_BASE_URL: baseUrl,
    CRM_USERNAME: REAL_USER,
    CRM_PASSWORD: REAL_PASSWORD,
    CRM_TIMEZONE: SITE_TZ,
    CRMSYNC_DB: join(dir, 'crm.duckdb'),
    CRMSYNC_LAKE: join(dir, 'lake'),
    CRMSYNC_DATA_DIR: dir,
    CRMSYNC_LOG_LEVEL: 'warn',
    CRMSYNC_TASK_QUEUE: taskQueue,
  };
}
