// `crmsync verify` against an independent CRM written from the interface text alone
// (test/independent/spec-server.ts), run as a user runs it: the built CLI in a child process, the
// embedded Temporal, temp directories. The differences verify must name are worked out here from
// the server's data before and after it was changed behind crmsync's back (the kinds and fields are
// those README.md and docs/sync.md "Verify" promise), never from crmsync's code.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CAMPAIGNS,
  CAMPAIGN_STATS,
  COMPANIES,
  FIELDS,
  FUNNELS,
  LISTS,
  SpecServer,
  TAGS,
  seedContact,
  type Json,
  type LoggedRequest,
  type SpecContact,
  specServerCliEnv,
  siteWallMs,
} from './spec-server.js';
import { runBuiltCli } from './built-cli.js';

const TZ = 'America/New_York';
const STREAMS = ['contacts', 'tags', 'lists', 'custom_fields', 'companies', 'campaigns', 'funnels', 'funnel_subscribers'];
type Obj = Record<string, Json>;

/** One difference as docs/sync.md "Verify" describes it: stream, kind, id, and `field` where the kind has one. */
interface Diff {
  stream: string;
  kind: string;
  id: string;
  field?: string;
}
interface Example extends Diff {
  warehouse?: unknown;
  crm?: unknown;
  detail?: string;
}
interface Group {
  stream: string;
  kind: string;
  count: number;
  examples: Example[];
}
interface Report {
  ok: boolean;
  total: number;
  groups: Group[];
  streams: string[];
  skipped: string[];
}

let server: SpecServer;
let dir: string;
let env: Record<string, string>;

function crmsync(args: string[], extra: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runBuiltCli(args, { ...env, ...extra }, dir);
}

async function verifyJson(args: string[] = []): Promise<{ code: number | null; report: Report; stderr: string }> {
  const res = await crmsync(['verify', '--json', ...args]);
  let report: Report;
  try {
    report = JSON.parse(res.stdout) as Report;
  } catch {
    throw new Error(`verify --json printed no JSON (exit ${String(res.code)}):\n${res.stdout}\n${res.stderr}`);
  }
  return { code: res.code, report, stderr: res.stderr };
}

/** Site wall time `YYYY-MM-DD HH:MM:SS` in TZ to the ISO 8601 UTC instant. */
const siteIso = (wall: string): string => new Date(siteWallMs(wall, TZ)).toISOString();

/** Everything the server serves, copied: the state crmsync last synced, or the state now. */
interface World {
  contacts: Map<number, SpecContact>;
  tags: Obj[];
  lists: Obj[];
  fields: Obj[];
  companies: Obj[];
  campaigns: Obj[];
  stats: Record<number, Json>;
  funnels: Obj[];
  funnelSubscribers: Obj[];
}
function snapshot(): World {
  return structuredClone({
    contacts: server.contacts,
    tags: TAGS as unknown as Obj[],
    lists: LISTS as unknown as Obj[],
    fields: FIELDS as Obj[],
    companies: COMPANIES as Obj[],
    campaigns: CAMPAIGNS as Obj[],
    stats: CAMPAIGN_STATS,
    funnels: FUNNELS as Obj[],
    funnelSubscribers: server.funnelSubscriberRows as Obj[],
  });
}

const same = (a: unknown, b: unknown): boolean => canon(a) === canon(b);
function canon(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${k}:${canon((v as Obj)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v ?? null);
}

/** The contact columns of the spec's field table that `contacts` types (docs/warehouse.md), tags and lists aside. */
const CONTACT_FIELDS = [
  'user_id',
  'hash',
  'email',
  'first_name',
  'last_name',
  'status',
  'contact_type',
  'phone',
  'address_line_1',
  'address_line_2',
  'city',
  'state',
  'postal_code',
  'country',
  'date_of_birth',
  'photo',
  'created_at',
  'updated_at',
] as const;

/** The differences between two worlds that verify must name (docs/sync.md, Verify). */
function expectedDiffs(was: World, now: World): Diff[] {
  const out: Diff[] = [];
  const s = 'contacts';
  for (const [id, c] of now.contacts) {
    const w = was.contacts.get(id);
    if (!w) {
      out.push({ stream: s, kind: 'missing_in_warehouse', id: String(id) });
      continue;
    }
    const full = (x: SpecContact): string => `${x.first_name} ${x.last_name}`.trim();
    for (const f of CONTACT_FIELDS) if (!same(w[f], c[f])) out.push({ stream: s, kind: 'contact_field_mismatch', id: String(id), field: f });
    if (full(w) !== full(c)) out.push({ stream: s, kind: 'contact_field_mismatch', id: String(id), field: 'full_name' });
    // tag_ids and list_ids are typed columns of `contacts` too (docs/warehouse.md): "every typed column".
    const sorted = (x: number[]): number[] => [...x].sort((a, b) => a - b);
    if (!same(sorted(w.tagIds), sorted(c.tagIds))) out.push({ stream: s, kind: 'contact_field_mismatch', id: String(id), field: 'tag_ids' });
    if (!same(sorted(w.listIds), sorted(c.listIds))) out.push({ stream: s, kind: 'contact_field_mismatch', id: String(id), field: 'list_ids' });
    for (const slug of new Set([...Object.keys(w.custom), ...Object.keys(c.custom)]))
      if (!same(w.custom[slug], c.custom[slug])) out.push({ stream: s, kind: 'custom_value_mismatch', id: String(id), field: slug });
    for (const [key, word] of [
      ['tagIds', 'tag'],
      ['listIds', 'list'],
    ] as const) {
      for (const t of c[key]) if (!w[key].includes(t)) out.push({ stream: s, kind: 'missing_membership', id: String(id), field: `${word} ${t}` });
      for (const t of w[key]) if (!c[key].includes(t)) out.push({ stream: s, kind: 'extra_membership', id: String(id), field: `${word} ${t}` });
    }
  }
  // A contact gone from the CRM: "its memberships are not listed again".
  for (const id of was.contacts.keys()) if (!now.contacts.has(id)) out.push({ stream: s, kind: 'deleted_in_crm', id: String(id) });

  // Tags and lists as the listing serves them: counts included (the interface's default).
  const taxonomy = (world: World, rows: Obj[], key: 'tagIds' | 'listIds'): Obj[] =>
    rows.map((t) => {
      const members = [...world.contacts.values()].filter((c) => c[key].includes(Number(t.id)));
      return { ...t, total_count: members.length, subscribers_count: members.filter((c) => c.status === 'subscribed').length };
    });
  const rows = (stream: string, titleKey: string, idOf: (r: Obj) => string, a: Obj[], b: Obj[]): void => {
    const before = new Map(a.map((r) => [idOf(r), r]));
    const after = new Map(b.map((r) => [idOf(r), r]));
    for (const [id, r] of after) {
      const w = before.get(id);
      if (!w) {
        out.push({ stream, kind: 'missing_in_warehouse', id });
        continue;
      }
      for (const k of new Set([...Object.keys(w), ...Object.keys(r)])) {
        if (same(w[k], r[k])) continue;
        out.push({ stream, kind: k === titleKey ? 'title_mismatch' : 'field_mismatch', id, field: k });
      }
    }
    for (const id of before.keys()) if (!after.has(id)) out.push({ stream, kind: 'deleted_in_crm', id });
  };
  const byId = (r: Obj): string => String(Number(r.id));
  rows('tags', 'title', byId, taxonomy(was, was.tags, 'tagIds'), taxonomy(now, now.tags, 'tagIds'));
  rows('lists', 'title', byId, taxonomy(was, was.lists, 'listIds'), taxonomy(now, now.lists, 'listIds'));
  rows('custom_fields', 'label', (r) => String(r.slug), was.fields, now.fields);
  rows('companies', 'name', byId, was.companies, now.companies);
  const withStats = (world: World): Obj[] => world.campaigns.map((c) => ({ ...c, stats: world.stats[Number(c.id)]! }));
  rows('campaigns', 'title', byId, withStats(was), withStats(now));
  const withCount = (world: World): Obj[] => world.funnels.map((f) => ({ ...f, subscribers_count: world.funnelSubscribers.filter((x) => Number(x.funnel_id) === Number(f.id)).length }));
  rows('funnels', 'title', byId, withCount(was), withCount(now));
  rows('funnel_subscribers', '', (r) => `${Number(r.funnel_id)}/${Number(r.id)}`, was.funnelSubscribers, now.funnelSubscribers);
  return out;
}

const key = (d: Diff): string => `${d.stream} ${d.kind} ${d.id}${d.field === undefined ? '' : ` ${d.field}`}`;
const byKind = (diffs: Diff[]): Map<string, Diff[]> => {
  const m = new Map<string, Diff[]>();
  for (const d of diffs) m.set(`${d.stream} ${d.kind}`, [...(m.get(`${d.stream} ${d.kind}`) ?? []), d]);
  return m;
};

/**
 * The report names exactly the expected differences: the same groups, each with its count, and its
 * examples ("the first five, each with its id") drawn from the expected ones without repeats.
 */
function expectReport(report: Report, expected: Diff[]): void {
  const want = byKind(expected);
  expect(report.groups.map((g) => `${g.stream} ${g.kind}`).sort()).toEqual([...want.keys()].sort());
  for (const g of report.groups) {
    const diffs = want.get(`${g.stream} ${g.kind}`)!;
    expect(g.count, `${g.stream} ${g.kind}`).toBe(diffs.length);
    expect(g.examples, `${g.stream} ${g.kind}`).toHaveLength(Math.min(5, diffs.length));
    const shown = g.examples.map((e) => key({ stream: g.stream, kind: g.kind, id: String(e.id), ...(e.field === undefined ? {} : { field: e.field }) }));
    expect(new Set(shown).size, `${g.stream} ${g.kind}: ${shown.join('; ')}`).toBe(shown.length);
    const allowed = new Set(diffs.map(key));
    for (const k of shown) expect(allowed, `${k} is not a planted difference`).toContain(k);
    // Groups of five or fewer show every difference: each of their ids is named.
    if (diffs.length <= 5) expect(shown.sort()).toEqual(diffs.map(key).sort());
  }
  expect(report.total).toBe(expected.length);
  expect(report.ok).toBe(false);
}

const example = (report: Report, stream: string, kind: string, id: string, field: string): Example | undefined =>
  report.groups.find((g) => g.stream === stream && g.kind === kind)?.examples.find((e) => String(e.id) === id && e.field === field);

describe('crmsync verify against an independent reading of the interface', () => {
  let was: World;

  beforeAll(async () => {
    server = new SpecServer(Array.from({ length: 30 }, (_, i) => i + 1));
    const baseUrl = await server.start();
    dir = await mkdtemp(join(tmpdir(), 'crmsync-indep-verify-'));
    env = specServerCliEnv(baseUrl, dir, TZ);
  });
  afterAll(async () => {
    if (process.env.SPEC_SERVER_LOG && server) await writeFile(process.env.SPEC_SERVER_LOG, server.requests.map((r) => JSON.stringify(r)).join('\n'));
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('after a sync, verify says the warehouse matches, also from a server that caps per_page', { timeout: 40_000 }, async () => {
    const sync = await crmsync(['sync', '--per-page', '10']);
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stdout).toMatch(/contacts +backfill +rows 30 +inserted 30/);
    was = snapshot();

    const text = await crmsync(['verify']);
    expect(text.code, text.stdout + text.stderr).toBe(0);
    expect(text.stdout).toMatch(/the warehouse matches the CRM/);
    expect(text.stdout).toMatch(/not compared: reports/);

    // "Maximum per_page value: not shown" (Limits): a server may serve fewer rows than asked and
    // say so in per_page; verify must read every page all the same.
    server.perPageCap = 7;
    const from = server.requests.length;
    try {
      const { code, report, stderr } = await verifyJson();
      expect(code, stderr).toBe(0);
      expect(report).toMatchObject({ ok: true, total: 0, groups: [] });
      expect([...report.streams].sort()).toEqual([...STREAMS].sort());
      expect(report.skipped.join('\n')).toMatch(/^reports/m);
    } finally {
      server.perPageCap = Infinity;
    }
    const log = server.requests.slice(from);
    // Read-only, authenticated, and array parameters as name[]=value (Endpoints).
    expect(log.every((r) => r.method === 'GET' && r.status === 200)).toBe(true);
    for (const r of log) for (const k of Object.keys(r.query)) expect(['tags', 'lists', 'statuses', 'with', 'company_ids']).not.toContain(k);
    const pages = (path: string, pred: (r: LoggedRequest) => boolean = () => true): Set<string> => new Set(log.filter((r) => r.path === path && pred(r)).map((r) => String(r.query.page ?? '1')));
    // 30 contacts in pages of 7, every one asked with custom values (Contacts: custom_fields boolean).
    expect(pages('/v2/subscribers', (r) => r.query.custom_fields === 'true' || r.query.custom_fields === '1')).toEqual(new Set(['1', '2', '3', '4', '5']));
    // Funnel 1's 117 subscribers in pages of 7.
    expect(pages('/v2/funnels/1/subscribers').size).toBe(17);
    expect(log.some((r) => r.path === '/v2/campaigns' && (r.query['with[]'] as string[] | undefined)?.includes('stats'))).toBe(true);
  });

  it('names each difference made behind its back by kind and id, and exits 1', { timeout: 40_000 }, async () => {
    const at = (id: number): SpecContact => server.contacts.get(id)!;
    // Contacts: a field edit, a status change, custom value changes, tag and list membership changes,
    // a deleted contact and a new one.
    at(4).city = 'Lisbon';
    at(10).status = 'unsubscribed'; // subscribed before (10 % 5 === 0)
    at(8).custom = { ...at(8).custom, plan: 'free' }; // was enterprise
    delete at(9).custom.site;
    at(30).custom = { ...at(30).custom, interests: ['offers'] }; // was news, offers
    at(12).tagIds = [...at(12).tagIds, 2];
    at(5).tagIds = at(5).tagIds.filter((t) => t !== 3);
    at(14).listIds = [...at(14).listIds, 3];
    expect(was.contacts.get(12)!.tagIds).not.toContain(2);
    expect(was.contacts.get(5)!.tagIds).toContain(3);
    expect(was.contacts.get(14)!.listIds).not.toContain(3);
    server.contacts.delete(20);
    server.contacts.set(31, { ...seedContact(31), created_at: '2026-01-10 10:00:00', updated_at: '2026-01-10 10:00:00' });
    // Tags, lists, custom fields, companies, campaigns, funnels and funnel subscribers.
    TAGS[0]!.title = 'VIPs';
    expect([...server.contacts.values()].some((c) => c.tagIds.includes(4))).toBe(false);
    TAGS.splice(3, 1); // tag 4 deleted (it has no members)
    LISTS[1]!.description = 'changed';
    LISTS[2]!.is_public = '0';
    (FIELDS[0] as Obj).label = 'Nick';
    (FIELDS[3] as Obj).options = ['free', 'pro', 'enterprise', 'team'];
    (COMPANIES[1] as Obj).name = 'Globex Corp';
    COMPANIES.push({ ...(COMPANIES[0] as Obj), id: 3, name: 'Initech', created_at: '2026-01-10 11:00:00', updated_at: '2026-01-10 11:00:00' });
    (CAMPAIGNS[2] as Obj).title = 'Draft idea, renamed';
    (CAMPAIGNS[1] as Obj).scheduled_at = '2025-07-16 08:00:00'; // site wall time, EDT
    (CAMPAIGN_STATS[1] as Obj).opens = 13;
    (FUNNELS[0] as Obj).status = 'paused';
    (FUNNELS[1] as Obj).updated_at = '2025-08-01T00:00:00Z'; // ISO 8601 UTC: no site zone applies
    const fs118 = server.funnelSubscriberRows.find((r) => Number((r as Obj).id) === 118) as Obj;
    expect(fs118.status).toBe('completed');
    fs118.status = 'cancelled';
    server.funnelSubscriberRows = server.funnelSubscriberRows.filter((r) => Number((r as Obj).id) !== 119);

    // And, during the text run, a contact deleted while verify pages through the listing (pages of
    // 7): it was on a page already served, so verify saw it live; the row after that page's end
    // shifts onto it, so the listing never shows that one, and verify must read it by id.
    const planted = new Set([4, 5, 8, 9, 10, 12, 14, 20, 30, 31]);
    let shifted: { deleted: number; skipped: number } | undefined;
    const from = server.requests.length;
    const unfiltered = (r: LoggedRequest): boolean => r.path === '/v2/subscribers' && !r.query['tags[]'] && !r.query['lists[]'] && !r.query['statuses[]'] && !r.query.search;
    server.perPageCap = 7;
    server.onRequest = (r) => {
      const page = Number(r.query.page ?? 1);
      if (shifted || !unfiltered(r) || page < 2) return;
      // Only when every earlier page has been answered and no later one asked (requests may overlap).
      const before = server.requests.slice(from, -1).filter(unfiltered);
      const served = new Set(before.filter((x) => x.status !== 0).map((x) => Number(x.query.page ?? 1)));
      if (before.some((x) => Number(x.query.page ?? 1) >= page)) return;
      for (let p = 1; p < page; p++) if (!served.has(p)) return;
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(r.query)) for (const x of Array.isArray(v) ? v : [v]) q.append(k, x);
      const perPage = Math.min(Number(r.query.per_page ?? 10), server.perPageCap);
      const order = server.matching(q).map((c) => c.id);
      const deleted = order.slice(0, perPage).find((id) => !planted.has(id))!;
      shifted = { deleted, skipped: order[(page - 1) * perPage]! };
      server.contacts.delete(deleted);
    };
    let text: Awaited<ReturnType<typeof crmsync>>;
    try {
      text = await crmsync(['verify']);
    } finally {
      server.onRequest = undefined;
      server.perPageCap = Infinity;
    }
    expect(shifted, 'verify read a second page of contacts').toBeDefined();
    // (With pages of 7 read in order the skipped one is contact 8, whose changed custom value verify
    // must then still find through the by-id read.)
    const expected = expectedDiffs(was, snapshot());
    expect(
      byKind(expected)
        .get('contacts deleted_in_crm')!
        .map((d) => d.id)
        .sort(),
    ).toEqual([String(shifted!.deleted), '20'].sort());
    // What the text run could see: the contact deleted mid-scan was listed live before it went.
    const seen = expected.filter((d) => !(d.stream === 'contacts' && d.kind === 'deleted_in_crm' && d.id === String(shifted!.deleted)));

    expect(text.code, text.stdout + text.stderr).toBe(1);
    expect(text.stderr).toMatch(/VERIFY_MISMATCH/);
    expect(text.stdout).toMatch(/^\d+ difference/m);
    // Each contacts group on its own line with its count and its first five ids (all of them when
    // there are five or fewer).
    const contactGroups = byKind(seen.filter((d) => d.stream === 'contacts'));
    expect(text.stdout.split('\n').filter((l) => /^\s*contacts\s/.test(l))).toHaveLength(contactGroups.size);
    for (const [k, diffs] of contactGroups) {
      const kind = k.split(' ')[1]!;
      const line = text.stdout.split('\n').find((l) => new RegExp(`^\\s*contacts\\s+${kind.replace(/_/g, '[ _]')}\\s`, 'i').test(l));
      expect(line, `a line for ${k}`).toBeDefined();
      const m = line!.match(/\s(\d+)\s+ids?\s+(.*)$/);
      expect(m, line).not.toBeNull();
      expect(Number(m![1]), line).toBe(diffs.length);
      const shown = m![2]!
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x !== '…' && x !== '...');
      const ids = diffs.map((d) => d.id);
      expect(shown, line).toHaveLength(Math.min(5, ids.length));
      if (ids.length <= 5) expect([...shown].sort(), line).toEqual([...ids].sort());
      else for (const id of shown) expect(ids, line).toContain(id);
    }
    // The contacts the listing did not show were read by id: the gone one answered 404 (the spec's
    // unknown-id error), the shifted one is live and is not reported.
    const byIdReads = server.requests.slice(from).filter((r) => /^\/v2\/subscribers\/\d+$/.test(r.path));
    expect(byIdReads.filter((r) => r.status === 404).map((r) => r.path)).toEqual(['/v2/subscribers/20']);
    expect(byIdReads.filter((r) => r.path === `/v2/subscribers/${shifted!.skipped}`).map((r) => r.status)).toEqual([200]);
    expect(byIdReads.every((r) => (r.query['with[]'] as string[] | undefined)?.some((w) => w === 'subscriber.custom_values' || w === 'custom_fields'))).toBe(true);

    // --json, with the server still: exactly the differences the data says, and no others.
    const { code, report, stderr } = await verifyJson();
    expect(code, stderr).toBe(1);
    expectReport(report, expected);
    // Values as the docs print them: times as ISO 8601 UTC instants; zone-less CRM times in the site zone.
    expect(example(report, 'contacts', 'contact_field_mismatch', '10', 'status')).toMatchObject({ warehouse: 'subscribed', crm: 'unsubscribed' });
    expect(example(report, 'contacts', 'custom_value_mismatch', '8', 'plan')).toMatchObject({ warehouse: 'enterprise', crm: 'free' });
    expect(example(report, 'campaigns', 'field_mismatch', '2', 'scheduled_at')).toMatchObject({ warehouse: siteIso('2025-07-15 08:00:00'), crm: '2025-07-16T12:00:00.000Z' });
    expect(example(report, 'funnels', 'field_mismatch', '2', 'updated_at')).toMatchObject({ warehouse: '2025-02-11T05:06:07.000Z', crm: '2025-08-01T00:00:00.000Z' });
    expect(example(report, 'tags', 'title_mismatch', '1', 'title')).toMatchObject({ warehouse: 'VIP', crm: 'VIPs' });
    // --stream contacts: the contact groups alone.
    const contactsOnly = await verifyJson(['--stream', 'contacts']);
    expect(contactsOnly.code, contactsOnly.stderr).toBe(1);
    expect(contactsOnly.report.streams).toEqual(['contacts']);
    expectReport(
      contactsOnly.report,
      expected.filter((d) => d.stream === 'contacts'),
    );

    // --stream narrows the comparison to that stream.
    const tagsOnly = await verifyJson(['--stream', 'tags']);
    expect(tagsOnly.code, tagsOnly.stderr).toBe(1);
    expect(tagsOnly.report.streams).toEqual(['tags']);
    expectReport(
      tagsOnly.report,
      expected.filter((d) => d.stream === 'tags'),
    );
  });

  it('after `crmsync sync --full` (what verify says repairs it) verify is clean again', { timeout: 40_000 }, async () => {
    const sync = await crmsync(['sync', '--full', '--per-page', '10']);
    expect(sync.code, sync.stderr).toBe(0);
    const { code, report, stderr } = await verifyJson();
    expect(code, JSON.stringify(report.groups, null, 1) + stderr).toBe(0);
    expect(report).toMatchObject({ ok: true, total: 0, groups: [] });
    const text = await crmsync(['verify']);
    expect(text.code, text.stdout).toBe(0);
    expect(text.stdout).toMatch(/the warehouse matches the CRM/);
  });

  it('a cleared field, an unlinked user and an edit time at a clock change, then clean after sync --full', { timeout: 40_000 }, async () => {
    was = snapshot();
    const at = (id: number): SpecContact => server.contacts.get(id)!;
    expect(at(3).phone).not.toBe('');
    // updated_at just after New York's spring-forward gap (02:00 to 03:00 EDT on 2026-03-08).
    Object.assign(at(3), { phone: '', updated_at: '2026-03-08 03:30:00' });
    expect(at(6).user_id).not.toBeNull();
    at(6).user_id = null; // "linked platform user, if any"
    const expected = expectedDiffs(was, snapshot());
    expect(expected.map(key).sort()).toEqual(['contacts contact_field_mismatch 3 phone', 'contacts contact_field_mismatch 3 updated_at', 'contacts contact_field_mismatch 6 user_id']);
    const { code, report, stderr } = await verifyJson();
    expect(code, stderr).toBe(1);
    expectReport(report, expected);
    expect(example(report, 'contacts', 'contact_field_mismatch', '3', 'updated_at')).toMatchObject({ warehouse: siteIso(was.contacts.get(3)!.updated_at), crm: '2026-03-08T07:30:00.000Z' });
    expect(example(report, 'contacts', 'contact_field_mismatch', '6', 'user_id')).toMatchObject({ crm: null });

    const sync = await crmsync(['sync', '--full', '--per-page', '10']);
    expect(sync.code, sync.stderr).toBe(0);
    const after = await verifyJson();
    expect(after.code, JSON.stringify(after.report.groups, null, 1)).toBe(0);
    expect(after.report).toMatchObject({ ok: true, total: 0 });
  });

  // Authentication 10: "missing or invalid credentials give 401; a valid user without the capability
  // gives 403". docs/sync.md: "a companies listing the CRM refuses is \"not compared\" rather than a failure".
  it('a 403 on companies leaves them not compared; wrong credentials (401) fail without saying it matches', { timeout: 30_000 }, async () => {
    server.forbidden = ['/companies'];
    try {
      const { code, report, stderr } = await verifyJson();
      expect(code, JSON.stringify(report) + stderr).toBe(0);
      expect(report).toMatchObject({ ok: true, total: 0, groups: [] });
      expect(report.skipped.join('\n')).toMatch(/companies/);
    } finally {
      server.forbidden = [];
    }
    const from = server.requests.length;
    const res = await crmsync(['verify'], { CRM_PASSWORD: 'wrong password' });
    expect(res.code).not.toBe(0);
    expect(res.stdout).not.toMatch(/matches/);
    expect(res.stderr).toMatch(/CRM_UNAUTHORIZED/);
    expect(res.stdout + res.stderr).not.toContain('wrong password');
    expect(server.requests.slice(from).every((r) => r.status === 401)).toBe(true);
  });
});
