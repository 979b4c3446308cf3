// crmsync's pull against an independent CRM written from the interface text alone
// (test/independent/spec-server.ts), run as a user runs it: the built CLI in a child process.
// Expected values come from the server's state and the spec's rules, never from crmsync's code.
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
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
  funnelSubscribers,
  seedContact,
  type Json,
  type SpecContact,
  specServerCliEnv,
  siteWallMs,
} from './spec-server.js';
import { runBuiltCli } from './built-cli.js';
import { readWarehouse, type Row } from './duck.js';

const TZ = 'America/New_York';

/** Site wall time `YYYY-MM-DD HH:MM:SS` in TZ to epoch ms; refuses a wall time at a clock change. */
const siteMs = (wall: string): number => siteWallMs(wall, TZ, { refuseRepeated: true });

const num = (v: Json | unknown): number => Number(v);
const ids = (v: unknown): number[] => (v as unknown[]).map(Number).sort((a, b) => a - b);

let server: SpecServer;
let dir: string;
let env: Record<string, string>;

function crmsync(args: string[], extra: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runBuiltCli(args, { ...env, ...extra }, dir);
}

const withDb = <T>(fn: (q: (sql: string) => Promise<Row[]>) => Promise<T>): Promise<T> => readWarehouse(dir, fn);

const CONTACT_SQL = `SELECT id, user_id, hash, email, first_name, last_name, full_name, status, contact_type, phone,
  address_line_1, address_line_2, city, state, postal_code, country, strftime(date_of_birth, '%Y-%m-%d') AS date_of_birth, photo,
  tag_ids, list_ids, CAST(custom_values AS VARCHAR) AS custom_values, epoch_ms(created_at) AS created_ms, epoch_ms(updated_at) AS updated_ms,
  _deleted_at IS NOT NULL AS deleted FROM contacts ORDER BY id`;

/** What the warehouse must hold for one live contact of the server, by the spec's field table. */
function expectedContact(c: SpecContact): Row {
  return {
    id: c.id,
    user_id: c.user_id,
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
    tag_ids: [...c.tagIds].sort((a, b) => a - b),
    list_ids: [...c.listIds].sort((a, b) => a - b),
    custom_values: c.custom,
    created_ms: siteMs(c.created_at),
    updated_ms: siteMs(c.updated_at),
    deleted: false,
  };
}

function actualContact(r: Row): Row {
  return {
    ...r,
    id: num(r.id),
    user_id: r.user_id === null ? null : num(r.user_id),
    tag_ids: ids(r.tag_ids),
    list_ids: ids(r.list_ids),
    custom_values: JSON.parse(r.custom_values as string),
    created_ms: num(r.created_ms),
    updated_ms: num(r.updated_ms),
  };
}

/** Every live contact of the server is in the warehouse with exactly its fields, memberships and custom values. */
async function expectContactsMatch(deletedIds: number[]): Promise<void> {
  await withDb(async (q) => {
    const rows = (await q(CONTACT_SQL)).map(actualContact);
    const live = rows.filter((r) => !r.deleted);
    const expected = [...server.contacts.values()].sort((a, b) => a.id - b.id).map(expectedContact);
    expect(live.map((r) => r.id)).toEqual(expected.map((r) => r.id));
    for (let i = 0; i < expected.length; i++) expect(live[i], `contact ${String(expected[i]!.id)}`).toEqual(expected[i]);
    expect(rows.filter((r) => r.deleted).map((r) => r.id)).toEqual(deletedIds);
    const pairs = (sql: string): Promise<string[]> => q(sql).then((rs) => rs.map((r) => `${String(r.a)}:${String(r.b)}`).sort());
    const want = (key: 'tagIds' | 'listIds'): string[] => [...server.contacts.values()].flatMap((c) => c[key].map((t) => `${c.id}:${t}`)).sort();
    expect(await pairs('SELECT contact_id AS a, tag_id AS b FROM contact_tags')).toEqual(want('tagIds'));
    expect(await pairs('SELECT contact_id AS a, list_id AS b FROM contact_lists')).toEqual(want('listIds'));
    expect(await q('SELECT count(*)::INT AS n FROM _contact_rejects')).toEqual([{ n: 0 }]);
  });
}

const FIRST_IDS = Array.from({ length: 47 }, (_, i) => i + 1).filter((i) => i !== 13 && i !== 30); // 45 contacts, 5 pages of 10

describe('crmsync pull against an independent reading of the interface', () => {
  beforeAll(async () => {
    server = new SpecServer(FIRST_IDS);
    const baseUrl = await server.start();
    dir = await mkdtemp(join(tmpdir(), 'crmsync-indep-pull-'));
    env = specServerCliEnv(baseUrl, dir, TZ);
  });
  afterAll(async () => {
    // SPEC_SERVER_LOG=file keeps what crmsync asked for (method, path, query, status) for reading.
    if (process.env.SPEC_SERVER_LOG && server) await writeFile(process.env.SPEC_SERVER_LOG, server.requests.map((r) => JSON.stringify(r)).join('\n'));
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('refuses wrong credentials (401) as CRM_UNAUTHORIZED', async () => {
    const res = await crmsync(['sync', '--stream', 'contacts'], { CRM_PASSWORD: 'wrong password' });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/CRM_UNAUTHORIZED/);
    expect(res.stderr).not.toContain('wrong password');
    expect(server.requests.every((r) => r.status === 401)).toBe(true);
    server.requests.length = 0;
  });

  it('first sync: every contact and every small stream exactly as served', { timeout: 45_000 }, async () => {
    // Spot checks of the conversion helper itself: EST and EDT wall times of the seed.
    expect(seedContact(1).created_at).toBe('2025-01-09 09:31:01');
    expect(new Date(siteMs('2025-01-09 09:31:01')).toISOString()).toBe('2025-01-09T14:31:01.000Z');
    expect(seedContact(45).created_at).toBe('2025-10-02 06:15:45');
    expect(new Date(siteMs('2025-10-02 06:15:45')).toISOString()).toBe('2025-10-02T10:15:45.000Z');
    expect(new Set([...server.contacts.values()].map((c) => c.status))).toEqual(new Set(['subscribed', 'unsubscribed', 'pending', 'bounced', 'complained']));

    const res = await crmsync(['sync', '--per-page', '10']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/contacts +backfill +rows 45 +inserted 45/);

    // What crmsync asked for: authenticated GETs only, array parameters as name[]=value (Endpoints).
    const log = server.requests;
    expect(log.every((r) => r.method === 'GET' && r.status !== 401)).toBe(true);
    for (const r of log) for (const k of Object.keys(r.query)) expect(['tags', 'lists', 'statuses', 'with', 'company_ids']).not.toContain(k);
    const listing = log.filter((r) => r.path === '/v2/subscribers' && r.query.custom_fields === 'true');
    expect(listing.length).toBeGreaterThanOrEqual(5);
    for (const r of listing) expect(['id', 'email', 'created_at', 'updated_at']).toContain(r.query.order_by);

    await expectContactsMatch([]);

    await withDb(async (q) => {
      // Tags and lists: ids and counts as numbers or numeric strings; zone-less times in the site zone.
      const tags = await q('SELECT id, title, slug, description, total_count, subscribers_count, epoch_ms(created_at) AS c, epoch_ms(updated_at) AS u, _deleted_at FROM tags ORDER BY id');
      expect(tags.map((r) => ({ ...r, id: num(r.id), total_count: num(r.total_count), subscribers_count: num(r.subscribers_count), c: num(r.c), u: num(r.u) }))).toEqual(
        TAGS.map((t) => {
          const members = [...server.contacts.values()].filter((c) => c.tagIds.includes(t.id));
          return {
            id: t.id,
            title: t.title,
            slug: t.slug,
            description: t.description,
            total_count: members.length,
            subscribers_count: members.filter((c) => c.status === 'subscribed').length,
            c: siteMs(t.created_at),
            u: siteMs(t.updated_at),
            _deleted_at: null,
          };
        }),
      );
      const lists = await q('SELECT id, title, is_public, total_count, epoch_ms(created_at) AS c FROM lists ORDER BY id');
      expect(lists.map((r) => ({ ...r, id: num(r.id), total_count: num(r.total_count), c: num(r.c) }))).toEqual(
        LISTS.map((l) => ({
          id: l.id,
          title: l.title,
          is_public: l.is_public === '1',
          total_count: [...server.contacts.values()].filter((c) => c.listIds.includes(l.id)).length,
          c: siteMs(l.created_at),
        })),
      );
      const fields = await q('SELECT slug, label, type, field_key, options FROM custom_fields WHERE _deleted_at IS NULL ORDER BY slug');
      const wantFields = (FIELDS as Record<string, Json>[])
        .map((f) => ({ slug: f.slug, label: f.label, type: f.type, field_key: f.field_key, options: f.options ?? null }))
        .sort((a, b) => String(a.slug).localeCompare(String(b.slug)));
      // Fields without options: the spec names none ("present for types that need options"); NULL or [] both say so.
      expect(fields.map((f) => ({ ...f, options: (f.options as string[] | null)?.length ? f.options : null }))).toEqual(wantFields);

      const companies = await q('SELECT id, name, type, owner_id, employees_number, status, city, epoch_ms(created_at) AS c FROM companies ORDER BY id');
      expect(companies.map((r) => ({ ...r, id: num(r.id), owner_id: num(r.owner_id), employees_number: num(r.employees_number), c: num(r.c) }))).toEqual(
        (COMPANIES as Record<string, Json>[]).map((c) => ({
          id: num(c.id),
          name: c.name,
          type: c.type,
          owner_id: num(c.owner_id),
          employees_number: num(c.employees_number),
          status: c.status,
          city: c.city,
          c: siteMs(c.created_at as string),
        })),
      );

      const campaigns = await q('SELECT id, title, status, recipients_count, epoch_ms(scheduled_at) AS s, epoch_ms(created_at) AS c, CAST(stats AS VARCHAR) AS stats FROM campaigns ORDER BY id');
      expect(campaigns.map((r) => ({ ...r, id: num(r.id), recipients_count: num(r.recipients_count), s: r.s === null ? null : num(r.s), c: num(r.c), stats: JSON.parse(r.stats as string) }))).toEqual(
        (CAMPAIGNS as Record<string, Json>[]).map((c) => ({
          id: num(c.id),
          title: c.title,
          status: c.status,
          recipients_count: num(c.recipients_count),
          s: c.scheduled_at === null ? null : siteMs(c.scheduled_at as string),
          c: siteMs(c.created_at as string),
          stats: CAMPAIGN_STATS[num(c.id)],
        })),
      );

      // Funnels carry ISO 8601 UTC: the site zone must not shift them (Response conventions 5).
      const funnels = await q('SELECT id, title, trigger_name, status, epoch_ms(created_at) AS c, epoch_ms(updated_at) AS u FROM funnels ORDER BY id');
      expect(funnels.map((r) => ({ ...r, id: num(r.id), c: num(r.c), u: num(r.u) }))).toEqual(
        (FUNNELS as Record<string, Json>[]).map((f) => ({
          id: num(f.id),
          title: f.title,
          trigger_name: f.trigger_name,
          status: f.status,
          c: Date.parse(f.created_at as string),
          u: Date.parse(f.updated_at as string),
        })),
      );

      const subs = await q(`SELECT id, funnel_id, subscriber_id, status, last_sequence_id, next_sequence_id, epoch_ms(next_execution_time) AS n,
        epoch_ms(created_at) AS c, epoch_ms(updated_at) AS u, json_array_length(metrics) AS m FROM funnel_subscribers ORDER BY funnel_id, id`);
      expect(subs.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, k === 'status' ? v : num(v)])))).toEqual(
        (funnelSubscribers() as Record<string, Json>[])
          .map((s) => ({
            id: num(s.id),
            funnel_id: num(s.funnel_id),
            subscriber_id: num(s.subscriber_id),
            status: s.status,
            last_sequence_id: num(s.last_sequence_id),
            next_sequence_id: num(s.next_sequence_id),
            n: siteMs(s.next_execution_time as string),
            c: siteMs(s.created_at as string),
            u: siteMs(s.updated_at as string),
            m: 1,
          }))
          .sort((a, b) => a.funnel_id - b.funnel_id || a.id - b.id),
      );

      // Reports: the interface's routes, one snapshot each, the step report flattened.
      const overview = await q('SELECT CAST(data AS VARCHAR) AS d FROM report_overview');
      expect(overview).toHaveLength(1);
      expect(JSON.parse(overview[0]!.d as string)).toMatchObject({ total_subscribers: 45, email_stats: { emails_sent: 30 } });
      expect(await q('SELECT count(*)::INT AS n FROM report_campaign_email_stats')).toEqual([{ n: 3 }]);
      expect(await q('SELECT count(*)::INT AS n FROM report_funnel_conversion_stats')).toEqual([{ n: 2 }]);
      expect(await q('SELECT count(*)::INT AS n FROM report_automation_steps')).toEqual([{ n: 2 }]);
      const steps = await q('SELECT funnel_id::INT AS f, sequence_id::INT AS s, type, count::INT AS n, percent, percent_text FROM report_automation_step_rows ORDER BY f, n DESC, s');
      expect(steps).toEqual([
        { f: 1, s: 12, type: 'benchmark', n: 20, percent: 100, percent_text: 117.65 },
        { f: 1, s: 0, type: 'root', n: 17, percent: 100, percent_text: 100 },
        { f: 1, s: 10, type: 'action', n: 15, percent: 88.24, percent_text: 88.24 },
      ]);
      expect(await q('SELECT count(*)::INT AS n FROM report_subscriber_growth')).toEqual([{ n: 1 }]);
    });
  });

  // Funnel `subscribers_count` is "conditional (`with[]=subscribers_count`)" (Resources, Funnel).
  // crmsync asks for it (fluentcrm-2.9 sends it unasked), so the column is filled against the interface too.
  it('funnels.subscribers_count holds the count the interface offers with[]=subscribers_count', async () => {
    await withDb(async (q) => {
      const rows = await q('SELECT id::INT AS id, subscribers_count::INT AS n FROM funnels ORDER BY id');
      expect(rows).toEqual([
        { id: 1, n: 117 },
        { id: 2, n: 2 },
      ]);
    });
  });

  it('second sync: exactly the edits, deletes, new contacts and membership changes, also with a delete mid-scan', { timeout: 45_000 }, async () => {
    server.requests.length = 0;
    const at = (id: number): SpecContact => server.contacts.get(id)!;
    Object.assign(at(5), { status: 'unsubscribed', email: 'five@example.test', updated_at: '2026-01-10 09:00:00' });
    Object.assign(at(8), { first_name: 'Renée', custom: { plan: 'enterprise', score: '7', interests: ['news', 'events'] }, updated_at: '2026-01-10 09:05:00' });
    Object.assign(at(33), { custom: {}, phone: '+44 20 7946 0000', updated_at: '2026-01-10 09:10:00' });
    // Membership only (the spec does not say whether it moves updated_at; here it does not).
    Object.assign(at(12), { tagIds: [1, 4], listIds: [2] });
    server.contacts.delete(3);
    server.contacts.delete(20);
    server.contacts.set(48, { ...seedContact(48), created_at: '2026-01-10 10:00:00', updated_at: '2026-01-10 10:00:00' });
    server.contacts.set(49, { ...seedContact(49), created_at: '2026-01-10 10:01:00', updated_at: '2026-01-10 10:01:00' });
    // And one contact deleted while the sync pages through the listing (offsets shift under it).
    let shifted = false;
    server.onRequest = (r) => {
      if (!shifted && r.path === '/v2/subscribers' && r.query.page === '3') {
        shifted = true;
        server.contacts.delete(7);
      }
    };

    const res = await crmsync(['sync', '--per-page', '10']);
    server.onRequest = undefined;
    expect(res.code, res.stderr).toBe(0);
    expect(shifted).toBe(true);
    await expectContactsMatch([3, 7, 20]);

    await withDb(async (q) => {
      // Exactly the changed contacts got a new version; the others kept their one open version.
      const versions = await q('SELECT id::INT AS id, count(*)::INT AS n FROM contacts_history GROUP BY id HAVING count(*) > 1 ORDER BY id');
      expect(versions).toEqual([5, 8, 12, 33].map((id) => ({ id, n: 2 })));
      const open = await q('SELECT id::INT AS id FROM contacts_history WHERE valid_to IS NULL ORDER BY id');
      expect(open.map((r) => r.id)).toEqual([...server.contacts.keys()].sort((a, b) => a - b));
      // The tombstoned contacts lost their memberships (contact_tags holds current ones only: checked above) and kept their last fields.
      const gone = await q('SELECT id::INT AS id, email FROM contacts WHERE _deleted_at IS NOT NULL ORDER BY id');
      expect(gone).toEqual([3, 7, 20].map((id) => ({ id, email: `contact${id}@example.test` })));
      const run = await q("SELECT inserted::INT AS i, updated::INT AS u, deleted::INT AS d, status FROM _sync_runs WHERE stream = 'contacts' ORDER BY started_at DESC LIMIT 1");
      expect(run).toEqual([{ i: 2, u: 4, d: 3, status: 'succeeded' }]);
      // Tag counts moved by the changes are re-read too.
      const t4 = await q('SELECT total_count::INT AS n FROM tags WHERE id = 4');
      expect(t4).toEqual([{ n: 1 }]);
    });
    // The deleted contacts were confirmed one by one and answered 404 as the spec's unknown-id error.
    const confirms = server.requests.filter((r) => /^\/v2\/subscribers\/\d+$/.test(r.path));
    expect(
      confirms
        .filter((r) => r.status === 404)
        .map((r) => r.path)
        .sort(),
    ).toEqual(['/v2/subscribers/20', '/v2/subscribers/3', '/v2/subscribers/7']);
  });

  /** Runs crmsync in a data directory of its own, while the server answers 403 on `forbidden`. */
  async function asUserWithout(name: string, forbidden: string[], args: string[]): Promise<{ code: number | null; out: string }> {
    const own = join(dir, name);
    await mkdir(own, { recursive: true });
    server.forbidden = forbidden;
    try {
      const res = await crmsync(args, { CRMSYNC_DB: join(own, 'crm.duckdb'), CRMSYNC_LAKE: join(own, 'lake'), CRMSYNC_DATA_DIR: own, CRMSYNC_TASK_QUEUE: `indep-${randomUUID().slice(0, 12)}` });
      return { code: res.code, out: res.stdout + res.stderr };
    } finally {
      server.forbidden = [];
    }
  }

  // Authentication 10: "missing or invalid credentials give 401; a valid user without the capability
  // gives 403". Authentication 9: "viewing contacts for GET". A user who may read contacts but not
  // view reports (crm_view_dashboard) has valid credentials, and every route of a contacts pull.
  // crmsync checks credentials on /reports/options; its 403 proves them, and a contact read stands in.
  it('a contacts-only user (403 on reports) can still pull contacts', { timeout: 30_000 }, async () => {
    const res = await asUserWithout('no-dashboard', ['/reports'], ['sync', '--stream', 'contacts', '--per-page', '10']);
    expect(res.code, res.out).toBe(0);
    expect(res.out).toMatch(new RegExp(`contacts +backfill +rows ${server.contacts.size} `));
  });

  // A 403 on /companies means the user lacks crm_manage_contact_cats (Authentication 7 and 10);
  // fluentcrm-2.9 answers the same 403 for its company module switched off, even to an admin, so
  // crmsync skips the stream and names both causes.
  it('a 403 on companies names the missing capability as well as the module', { timeout: 30_000 }, async () => {
    const res = await asUserWithout('no-cats', ['/companies'], ['sync', '--stream', 'companies']);
    expect(res.code, res.out).toBe(0);
    expect(res.out).toMatch(/company module is off, or the API user lacks crm_manage_contact_cats/);
  });
});
