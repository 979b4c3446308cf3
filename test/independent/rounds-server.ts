// A mutable CRM for many rounds of changes, written from the interface text
// (../shared/spec/crm-rest-api.md) and the captured real deployment (../shared/fixtures/fluentcrm-2.9),
// without reading crmsync's client or simulator. Unlike spec-server.ts, every resource here can be
// created, edited and deleted between syncs, the clock is the real one (in the site's zone), and the
// contact listing also honours the real plugin's `sort_by`/`sort_type` (including `updated_at`, with
// no tie-breaker: rows sharing an `updated_at` second come back in a new order on every request).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { paginate, PASSWORD, USER, type Json, type LoggedRequest } from './spec-server.js';

export const STATUSES = ['subscribed', 'unsubscribed', 'pending', 'bounced', 'complained'] as const;

export interface RContact {
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
  created_at: string;
  updated_at: string;
}

export interface RTag {
  id: number;
  title: string;
  slug: string;
  description: string;
  created_at: string;
  updated_at: string;
}
export interface RList extends RTag {
  is_public: '0' | '1';
}
export interface RField {
  field_key: string;
  type: string;
  label: string;
  slug: string;
  options?: string[];
}
export interface RCompany {
  id: number;
  name: string;
  industry: string;
  website: string;
  email: string;
  phone: string;
  description: string;
  logo: string;
  linkedin_url: string;
  address_line_1: string;
  address_line_2: string;
  city: string;
  state: string;
  country: string;
  postal_code: string;
  employees_number: number;
  type: string;
  owner_id: number;
  status: string;
  created_at: string;
  updated_at: string;
}
export interface RCampaign {
  id: number;
  title: string;
  slug: string;
  status: string;
  email_subject: string;
  email_pre_header: string;
  email_body: string;
  recipients_count: number;
  scheduled_at: string | null;
  design_template: string;
  settings: Record<string, Json>;
  created_at: string;
  updated_at: string;
  stats: { sent: number; opens: number; clicks: number };
}
export interface RFunnel {
  id: number;
  title: string;
  trigger_name: string;
  status: string;
  conditions: Json;
  settings: Record<string, Json>;
  created_by: number;
  /** ISO 8601 UTC, as funnels show (Response conventions 5). */
  created_at: string;
  updated_at: string;
  description: string;
  labels: string[];
}
export interface RFunnelSub {
  id: number;
  funnel_id: number;
  subscriber_id: number;
  status: string;
  last_sequence_id: number;
  next_sequence_id: number;
  next_execution_time: string;
  created_at: string;
  updated_at: string;
  metrics: Json[];
}

/** The wall time `YYYY-MM-DD HH:MM:SS` of epoch `ms` in `timeZone` (the CRM's zone-less site time). */
export function wallIn(ms: number, timeZone: string): string {
  const fmt = new Intl.DateTimeFormat('en-CA', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
  const p = Object.fromEntries(fmt.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

/** A small seeded generator (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export class RoundsServer {
  contacts = new Map<number, RContact>();
  tags = new Map<number, RTag>();
  lists = new Map<number, RList>();
  fields: RField[] = [];
  companies: RCompany[] = [];
  campaigns: RCampaign[] = [];
  funnels: RFunnel[] = [];
  funnelSubs: RFunnelSub[] = [];
  requests: LoggedRequest[] = [];
  /** Called for every request before it is answered (to change the data mid-sync). */
  onRequest: ((r: LoggedRequest) => void) | undefined;
  baseUrl = '';
  private tieRandom: () => number;
  private server = createServer((req, res) => this.handle(req, res));

  constructor(
    readonly timeZone: string,
    tieSeed: number,
  ) {
    this.tieRandom = rng(tieSeed);
  }

  /** The site's wall clock now (the CRM stamps `created_at`/`updated_at` with it). */
  now(): string {
    return wallIn(Date.now(), this.timeZone);
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

  /** "Deleting a tag removes it from all contacts; contacts are kept" (Tags); the same for lists. */
  deleteTag(id: number): void {
    this.tags.delete(id);
    for (const c of this.contacts.values()) c.tagIds = c.tagIds.filter((t) => t !== id);
  }
  deleteList(id: number): void {
    this.lists.delete(id);
    for (const c of this.contacts.values()) c.listIds = c.listIds.filter((t) => t !== id);
  }

  /** A contact as listings and the single view serve it; ids sometimes numeric strings (conventions 4). */
  render(c: RContact, withCustom: boolean): Json {
    const ref = (ids: number[], from: Map<number, RTag>): Json[] =>
      ids.map((id) => {
        const t = from.get(id)!;
        return { id: (c.id + id) % 3 === 0 ? String(id) : id, title: t.title, slug: t.slug };
      });
    const out: Record<string, Json> = {
      id: c.id % 7 === 3 ? String(c.id) : c.id,
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
      tags: ref(c.tagIds, this.tags),
      lists: ref(c.listIds, this.lists as Map<number, RTag>),
      created_at: c.created_at,
      updated_at: c.updated_at,
    };
    // No values: `[]` as the real plugin sends it for some contacts (fixtures README, Custom fields; DESIGN.md tolerates it).
    if (withCustom) out.custom_values = Object.keys(c.custom).length === 0 && c.id % 2 === 0 ? [] : { ...c.custom };
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
    const expected = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
    if (req.headers.authorization !== expected) return fail(401, 'rest_not_logged_in', 'Missing or invalid credentials.');
    if (req.method !== 'GET' || !url.pathname.startsWith('/v2/')) return fail(404, 'rest_no_route', 'No route was found matching the URL and request method.');
    try {
      const body = this.route(url.pathname.slice(3), url.searchParams, url);
      if (body === undefined) return fail(404, 'rest_no_route', 'No route was found matching the URL and request method.');
      if (typeof body === 'object' && body !== null && !Array.isArray(body) && 'error' in body) {
        const e = body.error as [number, string, string];
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
    if (path === '/tags') return { tags: [...this.tags.values()].sort((a, b) => b.id - a.id).map((t) => this.taxonomy(t, 'tagIds', q)) };
    if (path === '/lists') return { lists: [...this.lists.values()].sort((a, b) => b.id - a.id).map((l) => this.taxonomy(l, 'listIds', q)) };
    if (path === '/custom-fields/contacts') return { fields: this.fields.map((f) => ({ ...f }) as unknown as Json) };
    if (path === '/companies') {
      const rows = [...this.companies].sort((a, b) => b.id - a.id).map((c) => ({ ...c, employees_number: c.id % 2 ? c.employees_number : String(c.employees_number) }) as unknown as Json);
      const r = paginate(rows, q, 10, url, bad) as Record<string, Json>;
      return 'error' in r ? r : { companies: { current_page: r.current_page!, per_page: r.per_page!, total: String(r.total), last_page: r.last_page!, data: r.data! } };
    }
    if (path === '/campaigns') {
      const withStats = q.getAll('with[]').includes('stats');
      const rows = [...this.campaigns]
        .sort((a, b) => b.id - a.id)
        .map((c) => {
          const { stats, ...rest } = c;
          return (withStats ? { ...rest, stats: { ...stats } } : rest) as unknown as Json;
        });
      return paginate(rows, q, 10, url, bad);
    }
    if (path === '/funnels') {
      const withCount = q.getAll('with[]').includes('subscribers_count');
      const all = [...this.funnels]
        .sort((a, b) => b.id - a.id)
        .map((f) => (withCount ? { ...f, subscribers_count: this.funnelSubs.filter((s) => s.funnel_id === f.id).length } : { ...f }) as unknown as Json);
      const p = paginate(all, q, 10, url, bad) as Record<string, Json>;
      if ('error' in p) return p;
      return { funnels: p.data!, total: p.total!, per_page: p.per_page!, current_page: p.current_page!, last_page: p.last_page! };
    }
    if ((m = path.match(/^\/funnels\/(\d+)\/subscribers$/))) {
      const id = Number(m[1]);
      if (!this.funnels.some((f) => f.id === id)) return notFound('funnel');
      const status = q.get('status');
      if (status !== null && !['all', 'active', 'completed', 'cancelled', 'pending', 'waiting'].includes(status)) return bad('Invalid status.');
      const rows = this.funnelSubs
        .filter((s) => s.funnel_id === id)
        .filter((s) => status === null || status === 'all' || s.status === status)
        .sort((a, b) => b.id - a.id)
        .map(
          (s) =>
            ({
              ...s,
              funnel_id: String(s.funnel_id),
              subscriber_id: s.id % 2 ? String(s.subscriber_id) : s.subscriber_id,
              subscriber: { id: s.subscriber_id },
              last_sequence: { id: s.last_sequence_id },
              next_sequence_item: {},
            }) as unknown as Json,
        );
      const r = paginate(rows, q, 15, url, bad) as Record<string, Json>;
      return 'error' in r ? r : { funnel_subscribers: { current_page: r.current_page!, per_page: r.per_page!, total: String(r.total), last_page: r.last_page!, data: r.data! } };
    }
    if (path === '/reports/options') return { options: { statuses: [...STATUSES] } };
    if (path === '/reports/overview')
      return {
        total_subscribers: this.contacts.size,
        subscriber_growth: { current_period: 5, previous_period: 4, growth_rate: 25 },
        email_stats: { emails_sent: 30, emails_opened: 12, emails_clicked: 4, open_rate: 40, click_rate: 13.33 },
        revenue: { total: 0, growth: 0 },
      };
    if (path === '/reports/subscriber-growth') return { growth: [{ date: '2026-12-01', count: 3 }] };
    if ((m = path.match(/^\/reports\/campaigns\/(\d+)\/email-stats$/))) {
      const c = this.campaigns.find((x) => x.id === Number(m![1]));
      if (!c) return { error: [404, 'report_not_found', 'Unknown report.'] };
      return {
        campaign_id: c.id,
        campaign_title: c.title,
        stats: {
          sent: c.stats.sent,
          delivered: c.stats.sent,
          opened: c.stats.opens,
          clicked: c.stats.clicks,
          unsubscribed: 0,
          bounced: 0,
          delivery_rate: 100,
          open_rate: 0,
          click_rate: 0,
          unsubscribe_rate: 0,
        },
        revenue: { total: 0, orders: 0, conversion_rate: 0 },
      };
    }
    if ((m = path.match(/^\/reports\/funnels\/(\d+)\/conversion-stats$/))) {
      const f = this.funnels.find((x) => x.id === Number(m![1]));
      if (!f) return { error: [404, 'report_not_found', 'Unknown report.'] };
      return { funnel_id: f.id, funnel_title: f.title, subscribers: { total_entered: 1, currently_active: 1, completed: 0, completion_rate: 0 }, sequence_performance: [] };
    }
    if ((m = path.match(/^\/reports\/automations\/(\d+)\/steps$/))) {
      const f = this.funnels.find((x) => x.id === Number(m![1]));
      if (!f) return notFound('funnel');
      const n = this.funnelSubs.filter((s) => s.funnel_id === f.id).length;
      return {
        funnel: { ...f, created_by: String(f.created_by) } as unknown as Json,
        stats: n ? [{ label: 'Entrance', count: n, sequence_id: 0, type: 'root', percent: 100, percent_text: 100, previous_step_count: n, drop_count: 0, drop_percent: 0 }] : [],
      };
    }
    return undefined;
  }

  private taxonomy(t: RTag | RList, key: 'tagIds' | 'listIds', q: URLSearchParams): Json {
    const members = [...this.contacts.values()].filter((c) => c[key].includes(t.id));
    const out: Record<string, Json> = { ...(t as unknown as Record<string, Json>) };
    if (q.get('exclude_counts') !== 'true' && q.get('exclude_counts') !== '1') {
      out.totalCount = members.length;
      out.subscribersCount = members.filter((c) => c.status === 'subscribed').length;
    }
    return out;
  }

  private listContacts(q: URLSearchParams, url: URL, bad: (m: string) => Json): Json {
    // The interface's order_by/order_type; the real plugin's sort_by/sort_type win when sent (fixtures README: order_by is ignored there).
    const sortBy = q.get('sort_by');
    const key = sortBy ?? q.get('order_by') ?? 'id';
    const allowed = sortBy !== null ? ['id', 'email', 'created_at', 'updated_at'] : ['id', 'email', 'created_at'];
    if (!allowed.includes(key)) return bad(`order_by must be one of ${allowed.join(', ')}`);
    const dirRaw = (sortBy !== null ? (q.get('sort_type') ?? 'DESC') : (q.get('order_type') ?? 'DESC')).toUpperCase();
    if (dirRaw !== 'ASC' && dirRaw !== 'DESC') return bad('order_type must be ASC or DESC');
    const statuses = q.getAll('statuses[]');
    if (statuses.some((s) => !(STATUSES as readonly string[]).includes(s))) return bad('Invalid status in statuses.');
    const tags = q.getAll('tags[]').map(Number);
    const lists = q.getAll('lists[]').map(Number);
    const search = (q.get('search') ?? '').toLowerCase();
    const k = key as 'id' | 'email' | 'created_at' | 'updated_at';
    // No tie-breaker on updated_at (site-ny README, Sorting): a fresh random order inside each tie on every request.
    const noise = new Map<number, number>();
    for (const c of this.contacts.values()) noise.set(c.id, this.tieRandom());
    const rows = [...this.contacts.values()]
      .filter((c) => statuses.length === 0 || statuses.includes(c.status))
      .filter((c) => tags.length === 0 || c.tagIds.some((t) => tags.includes(t)))
      .filter((c) => lists.length === 0 || c.listIds.some((l) => lists.includes(l)))
      .filter((c) => !search || `${c.first_name} ${c.last_name} ${c.email}`.toLowerCase().includes(search))
      .sort((a, b) => {
        const x = k === 'id' ? a.id - b.id : a[k] < b[k] ? -1 : a[k] > b[k] ? 1 : 0;
        const cmp = dirRaw === 'ASC' ? x : -x;
        if (cmp !== 0) return cmp;
        return k === 'updated_at' ? noise.get(a.id)! - noise.get(b.id)! : a.id - b.id;
      });
    const page = paginate(
      rows.map((c) => this.render(c, q.get('custom_fields') === 'true' || q.get('custom_fields') === '1')),
      q,
      10,
      url,
      bad,
    ) as Record<string, Json>;
    if (typeof page.total === 'number') page.total = String(page.total);
    return page;
  }
}
