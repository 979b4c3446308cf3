// Many rounds of changes against an independent, mutable CRM (test/independent/rounds-server.ts),
// each followed by `crmsync sync` run as a user runs it (the built CLI in a child process), and after
// each round every warehouse table that mirrors the CRM compared with the server's state, row by row
// and column by column. Expected values come from the server's state, the interface
// (../shared/spec/crm-rest-api.md), the captured real deployment (../shared/fixtures/fluentcrm-2.9)
// and crmsync's user docs (README.md, docs/sync.md, docs/warehouse.md, docs/report.md), never from
// crmsync's code.
//
// What the docs promise that makes one incremental run enough after each round (docs/sync.md,
// "Fresh without webhooks", "Staleness bound"): new contacts, edits that change `updated_at` (where
// the CRM orders by `updated_at`, as the real plugin does with `sort_by`; this server does too),
// and membership changes that move a tag's or list's count are as fresh as the last run; deletes
// show in the CRM's total and make the run sweep; small streams are re-read whole each run. The
// generator keeps every round inside that bound: a membership change that moves no count is
// joined by one that does (see `makeMembershipCountsMove`).
//
// One Temporal dev server (the cached CLI, README "Temporal") and one `crmsync worker` serve every
// round (README: with TEMPORAL_ADDRESS set, `sync` only starts workflows and a worker runs them);
// the warehouse is read through the lake's catalog, read-only, as analysts read it while the
// worker owns the DuckDB file (docs/warehouse.md, "The catalog").
//
// The rounds (ROUNDS = 9 after the backfill): every round edits fields (names, status, email, custom
// values, phone cleared or set, ...) of many contacts in one second (no tie-breaker on updated_at),
// attaches and detaches tags and lists without touching updated_at, adds contacts, and edits tags, lists,
// custom fields, companies, campaigns, funnels and funnel subscribers. Besides: deletes and a contact
// deleted and created again with the same email (rounds 2, 6, 9); edits committed late, stamped inside
// the updated-first scan's overlap (3, 8); more than two pages of new contacts (5); a contact edited while
// the sync pages (4); a contact deleted and another edited while the updated-first scan pages (7, where the
// run may or may not see them and the next run must); `--full` with a tag and a list deleted with their
// members, and a delete and a signup while the full scan pages (6, which must end equal and say so).
// After each round: contacts, contact_tags, contact_lists, contacts_history (one version per change a
// sync saw, no overlaps or gaps, open version = contacts), tombstones, the small streams, the views
// contacts_current and tag_list_member_counts, and _sync_runs with the summary; at the end `crmsync
// verify` and contacts_as_of at the end of every round.
//
// Left out on purpose (the docs do not say what one run must do, see the report): a tag or list deleted
// with members in an incremental run, and the summary's "rows" against _sync_runs.
//
// ROUNDS_SEED=<n> replays another seed (the seed in use is printed).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection, createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBuiltCli } from './built-cli.js';
import { duck, type Q, type Row } from './duck.js';
import { RoundsServer, STATUSES, rng, wallIn, type RCampaign, type RCompany, type RContact, type RField, type RFunnel, type RFunnelSub, type RList, type RTag } from './rounds-server.js';
import { siteWallMs, specServerCliEnv } from './spec-server.js';

const SEED = Number(process.env.ROUNDS_SEED ?? 20261206);
const TZ = 'America/New_York';
const PER_PAGE = 40;
const ROUNDS = 9;
const FULL_ROUND = 6;
const MID_SYNC_EDIT_ROUND = 4;
const MID_SYNC_DELETE_ROUND = 7;
/**
 * Rounds with deletes (and a contact deleted and created again with the same email). A delete makes the
 * run sweep (docs/sync.md: "the CRM's total ≠ live rows held"), so the other rounds are the ones where the
 * freshness checks alone (updated-first scan, membership repair) must find every change.
 */
const DELETE_ROUNDS = [2, FULL_ROUND, 9];
/** Rounds with edits committed late (stamped before the newest updated_at the last sync saw). */
const LATE_ROUNDS = [3, 8];
const BIN = fileURLToPath(new URL('../../bin/crmsync.js', import.meta.url));
const SMALL = ['tags', 'lists', 'custom_fields', 'companies', 'campaigns', 'funnels', 'funnel_subscribers'] as const;
type Small = (typeof SMALL)[number];

console.log(`rounds.test.ts: seed ${SEED} (ROUNDS_SEED=<n> replays another)`);

// ---- Seeded choices ------------------------------------------------------------------------------

const rand = rng(SEED);
const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const chance = (p: number): boolean => rand() < p;
function sample<T>(xs: readonly T[], k: number): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a.slice(0, Math.max(0, Math.min(k, a.length)));
}

/** A site wall time of epoch `ms` that is neither skipped nor repeated by a clock change, so it reads as one instant. */
function safeWall(ms: number): string {
  for (let t = ms; ; t += 3 * 3_600_000) {
    const w = wallIn(t, TZ);
    try {
      siteWallMs(w, TZ, { refuseRepeated: true });
      return w;
    } catch {
      /* at a clock change: move on */
    }
  }
}
/** Site wall time to epoch ms (Response conventions 5: zone-less site time; CRM_TIMEZONE names the zone). */
const siteMs = (wall: string): number => siteWallMs(wall, TZ, { refuseRepeated: true });
const randomPastWall = (fromMs: number, toMs: number): string => safeWall(fromMs + Math.floor(rand() * (toMs - fromMs)));

const FIRST = ['Ada', 'Zoë', 'Łukasz', "Seán O'Brien", 'Grace', 'Émile', 'Li', 'Maria José', 'Tom', '', 'Ngozi', '李', 'Åsa', 'Dmitrí'];
const LAST = ['Lovelace', 'Smith', 'Kowalski', 'Nuñez', 'Hopper', 'Zola', 'Wei', 'da Silva', 'Ng', 'Solo', '', 'Müller-Lüdenscheidt', "O'Neil"];
const CITIES: [string, string, string][] = [
  ['Boston', 'MA', 'US'],
  ['São Paulo', 'SP', 'BR'],
  ['Kraków', '', 'PL'],
  ['Zürich', 'ZH', 'CH'],
  ['Lagos', 'LA', 'NG'],
  ['', '', ''],
];
let emailCounter = 0;
const freshEmail = (id: number): string => `p${id}.${(++emailCounter).toString(36)}@example.test`;

function randomCustom(fields: RField[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const f of fields) if (chance(0.45)) out[f.slug] = customValue(f);
  return out;
}
function customValue(f: RField): string | string[] {
  switch (f.type) {
    case 'number':
      return String(int(0, 5000));
    case 'date':
      return `202${int(5, 8)}-${String(int(1, 12)).padStart(2, '0')}-${String(int(1, 28)).padStart(2, '0')}`;
    case 'checkbox':
      return sample(f.options!, int(1, f.options!.length));
    case 'select-one':
    case 'radio':
      return pick(f.options!);
    case 'url':
      return `https://site.test/${int(1, 999)}?q=ü&x=${int(1, 9)}`;
    default:
      return pick(['nick "q"', 'ünï', "it's", 'plain', 'a\\b', '  spaced  ']);
  }
}

function makeContact(id: number, created: string, updated: string, fields: RField[], tagIds: number[], listIds: number[]): RContact {
  const [city, state, country] = pick(CITIES);
  return {
    id,
    user_id: chance(0.2) ? id + 1000 : null,
    hash: `h${id.toString(16).padStart(8, '0')}`,
    email: freshEmail(id),
    first_name: pick(FIRST),
    last_name: pick(LAST),
    status: pick(STATUSES),
    contact_type: chance(0.3) ? 'customer' : 'lead',
    phone: chance(0.5) ? `+1-555-${String(int(0, 9999)).padStart(4, '0')}` : '',
    address_line_1: chance(0.7) ? `${int(1, 999)} Main St` : '',
    address_line_2: chance(0.3) ? `Apt ${int(1, 99)}` : '',
    city,
    state,
    postal_code: chance(0.8) ? String(int(1000, 99999)) : '',
    country,
    date_of_birth: `19${int(50, 99)}-${String(int(1, 12)).padStart(2, '0')}-${String(int(1, 28)).padStart(2, '0')}`,
    photo: `https://gravatar.test/${id}.png`,
    tagIds: [...new Set(tagIds)].sort((a, b) => a - b),
    listIds: [...new Set(listIds)].sort((a, b) => a - b),
    custom: randomCustom(fields),
    created_at: created,
    updated_at: updated,
  };
}

// ---- Normalized rows: the columns docs/warehouse.md and the interface define, as the server holds them

const n = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const sortedIds = (v: unknown): number[] => ((v as unknown[] | null) ?? []).map(Number).sort((a, b) => a - b);
const ms = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const stable = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x as object).sort(([a], [b]) => a.localeCompare(b))) : x));

/** The contact columns of docs/warehouse.md ("every contact field from the interface") for one server contact. */
function expectContact(c: RContact): Row {
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
    custom_values: Object.fromEntries(Object.entries(c.custom).map(([k, v]) => [k, Array.isArray(v) ? [...v] : v])),
    created_ms: siteMs(c.created_at),
    updated_ms: siteMs(c.updated_at),
  };
}
const CONTACT_COLS = `id, user_id, hash, email, first_name, last_name, full_name, status, contact_type, phone, address_line_1, address_line_2,
  city, state, postal_code, country, strftime(date_of_birth, '%Y-%m-%d') AS date_of_birth, photo, tag_ids, list_ids,
  CAST(custom_values AS VARCHAR) AS custom_values, epoch_ms(created_at) AS created_ms, epoch_ms(updated_at) AS updated_ms`;
function actualContact(r: Row): Row {
  const cv = r.custom_values === null ? null : (JSON.parse(r.custom_values as string) as unknown);
  return {
    id: n(r.id),
    user_id: n(r.user_id),
    hash: r.hash,
    email: r.email,
    first_name: r.first_name,
    last_name: r.last_name,
    full_name: r.full_name,
    status: r.status,
    contact_type: r.contact_type,
    phone: r.phone,
    address_line_1: r.address_line_1,
    address_line_2: r.address_line_2,
    city: r.city,
    state: r.state,
    postal_code: r.postal_code,
    country: r.country,
    date_of_birth: r.date_of_birth,
    photo: r.photo,
    tag_ids: sortedIds(r.tag_ids),
    list_ids: sortedIds(r.list_ids),
    // The real CRM sends `[]` for no custom values (fixtures README); the interface an object. Both mean none.
    custom_values: Array.isArray(cv) && cv.length === 0 ? {} : cv,
    created_ms: ms(r.created_ms),
    updated_ms: ms(r.updated_ms),
  };
}

const expectTag = (t: RTag, key: 'tagIds' | 'listIds', s: RoundsServer): Row => {
  const members = [...s.contacts.values()].filter((c) => c[key].includes(t.id));
  return {
    id: t.id,
    title: t.title,
    slug: t.slug,
    description: t.description,
    ...(key === 'listIds' ? { is_public: (t as RList).is_public === '1' } : {}),
    total_count: members.length,
    subscribers_count: members.filter((c) => c.status === 'subscribed').length,
    created_ms: siteMs(t.created_at),
    updated_ms: siteMs(t.updated_at),
  };
};
const expectField = (f: RField): Row => ({ slug: f.slug, label: f.label, type: f.type, field_key: f.field_key, options: f.options?.length ? f.options : null });
const expectCompany = (c: RCompany): Row => ({
  id: c.id,
  name: c.name,
  industry: c.industry,
  website: c.website,
  email: c.email,
  phone: c.phone,
  type: c.type,
  owner_id: c.owner_id,
  employees_number: c.employees_number,
  status: c.status,
  city: c.city,
  country: c.country,
  created_ms: siteMs(c.created_at),
  updated_ms: siteMs(c.updated_at),
});
const expectCampaign = (c: RCampaign): Row => ({
  id: c.id,
  title: c.title,
  slug: c.slug,
  status: c.status,
  email_subject: c.email_subject,
  email_pre_header: c.email_pre_header,
  recipients_count: c.recipients_count,
  scheduled_ms: c.scheduled_at === null ? null : siteMs(c.scheduled_at),
  design_template: c.design_template,
  created_ms: siteMs(c.created_at),
  updated_ms: siteMs(c.updated_at),
  stats: c.stats,
});
// Funnels carry ISO 8601 UTC (Response conventions 5).
const expectFunnel = (f: RFunnel, s: RoundsServer): Row => ({
  id: f.id,
  title: f.title,
  trigger_name: f.trigger_name,
  status: f.status,
  subscribers_count: s.funnelSubs.filter((x) => x.funnel_id === f.id).length,
  created_ms: Date.parse(f.created_at),
  updated_ms: Date.parse(f.updated_at),
});
const expectFunnelSub = (x: RFunnelSub): Row => ({
  id: x.id,
  funnel_id: x.funnel_id,
  subscriber_id: x.subscriber_id,
  status: x.status,
  last_sequence_id: x.last_sequence_id,
  next_sequence_id: x.next_sequence_id,
  next_ms: siteMs(x.next_execution_time),
  created_ms: siteMs(x.created_at),
  updated_ms: siteMs(x.updated_at),
  metrics: metricsAsInstants(x.metrics as Record<string, unknown>[], siteMs),
});
/**
 * The metric rows with their times as instants: docs/warehouse.md says the client normalizes timestamps
 * to ISO UTC, so a zone-less site time inside `metrics` may come back as an ISO instant.
 */
function metricsAsInstants(rows: Record<string, unknown>[], read: (t: string) => number): Record<string, unknown>[] {
  return rows.map((m) => ({ ...m, created_at: read(String(m.created_at)), updated_at: read(String(m.updated_at)) }));
}

/** Per small stream: its key, the SQL of its columns, how a warehouse row reads, and the server's rows. */
const SMALL_SPEC: Record<Small, { key: (r: Row) => string; sql: string; read: (r: Row) => Row; want: (s: RoundsServer) => Row[]; tombstones: boolean }> = {
  tags: {
    key: (r) => String(r.id),
    sql: 'SELECT id, title, slug, description, total_count, subscribers_count, epoch_ms(created_at) AS c, epoch_ms(updated_at) AS u, epoch_ms(_deleted_at) AS d FROM tags',
    read: (r) => ({
      id: n(r.id),
      title: r.title,
      slug: r.slug,
      description: r.description,
      total_count: n(r.total_count),
      subscribers_count: n(r.subscribers_count),
      created_ms: ms(r.c),
      updated_ms: ms(r.u),
    }),
    want: (s) => [...s.tags.values()].map((t) => expectTag(t, 'tagIds', s)),
    tombstones: true,
  },
  lists: {
    key: (r) => String(r.id),
    sql: 'SELECT id, title, slug, description, is_public, total_count, subscribers_count, epoch_ms(created_at) AS c, epoch_ms(updated_at) AS u, epoch_ms(_deleted_at) AS d FROM lists',
    read: (r) => ({
      id: n(r.id),
      title: r.title,
      slug: r.slug,
      description: r.description,
      is_public: r.is_public,
      total_count: n(r.total_count),
      subscribers_count: n(r.subscribers_count),
      created_ms: ms(r.c),
      updated_ms: ms(r.u),
    }),
    want: (s) => [...s.lists.values()].map((l) => expectTag(l, 'listIds', s)),
    tombstones: true,
  },
  custom_fields: {
    key: (r) => String(r.slug),
    sql: 'SELECT slug, label, type, field_key, options, epoch_ms(_deleted_at) AS d FROM custom_fields',
    // Fields without options: the spec names none ("present for types that need options"); NULL or [] both say so.
    read: (r) => ({ slug: r.slug, label: r.label, type: r.type, field_key: r.field_key, options: (r.options as string[] | null)?.length ? r.options : null }),
    want: (s) => s.fields.map(expectField),
    tombstones: true,
  },
  companies: {
    key: (r) => String(r.id),
    sql: `SELECT id, name, industry, website, email, phone, type, owner_id, employees_number, status, city, country,
      epoch_ms(created_at) AS c, epoch_ms(updated_at) AS u, epoch_ms(_deleted_at) AS d FROM companies`,
    read: (r) => ({
      id: n(r.id),
      name: r.name,
      industry: r.industry,
      website: r.website,
      email: r.email,
      phone: r.phone,
      type: r.type,
      owner_id: n(r.owner_id),
      employees_number: n(r.employees_number),
      status: r.status,
      city: r.city,
      country: r.country,
      created_ms: ms(r.c),
      updated_ms: ms(r.u),
    }),
    want: (s) => s.companies.map(expectCompany),
    tombstones: true,
  },
  campaigns: {
    key: (r) => String(r.id),
    sql: `SELECT id, title, slug, status, email_subject, email_pre_header, recipients_count, epoch_ms(scheduled_at) AS s, design_template,
      epoch_ms(created_at) AS c, epoch_ms(updated_at) AS u, CAST(stats AS VARCHAR) AS stats, epoch_ms(_deleted_at) AS d FROM campaigns`,
    read: (r) => ({
      id: n(r.id),
      title: r.title,
      slug: r.slug,
      status: r.status,
      email_subject: r.email_subject,
      email_pre_header: r.email_pre_header,
      recipients_count: n(r.recipients_count),
      scheduled_ms: ms(r.s),
      design_template: r.design_template,
      created_ms: ms(r.c),
      updated_ms: ms(r.u),
      stats: r.stats === null ? null : (JSON.parse(r.stats as string) as unknown),
    }),
    want: (s) => s.campaigns.map(expectCampaign),
    tombstones: true,
  },
  funnels: {
    key: (r) => String(r.id),
    sql: 'SELECT id, title, trigger_name, status, subscribers_count, epoch_ms(created_at) AS c, epoch_ms(updated_at) AS u, epoch_ms(_deleted_at) AS d FROM funnels',
    read: (r) => ({ id: n(r.id), title: r.title, trigger_name: r.trigger_name, status: r.status, subscribers_count: n(r.subscribers_count), created_ms: ms(r.c), updated_ms: ms(r.u) }),
    want: (s) => s.funnels.map((f) => expectFunnel(f, s)),
    tombstones: true,
  },
  // docs/sync.md: funnel subscribers are "merged completely per funnel; subscribers of funnels gone from the CRM are removed".
  funnel_subscribers: {
    key: (r) => String(r.id),
    sql: `SELECT id, funnel_id, subscriber_id, status, last_sequence_id, next_sequence_id, epoch_ms(next_execution_time) AS nx,
      epoch_ms(created_at) AS c, epoch_ms(updated_at) AS u, CAST(metrics AS VARCHAR) AS metrics, NULL AS d FROM funnel_subscribers`,
    read: (r) => ({
      id: n(r.id),
      funnel_id: n(r.funnel_id),
      subscriber_id: n(r.subscriber_id),
      status: r.status,
      last_sequence_id: n(r.last_sequence_id),
      next_sequence_id: n(r.next_sequence_id),
      next_ms: ms(r.nx),
      created_ms: ms(r.c),
      updated_ms: ms(r.u),
      metrics: r.metrics === null ? null : metricsAsInstants(JSON.parse(r.metrics as string) as Record<string, unknown>[], (t) => Date.parse(t)),
    }),
    want: (s) => s.funnelSubs.map(expectFunnelSub),
    tombstones: false,
  },
};

// ---- The run: server, Temporal, worker ------------------------------------------------------------

let server: RoundsServer;
let dir: string;
let env: Record<string, string>;
let temporal: ChildProcess | undefined;
let worker: ChildProcess | undefined;
const childOutput: string[] = [];

function temporalCli(): string {
  // README "Temporal": TEMPORAL_CLI_PATH, then ${XDG_CACHE_HOME:-~/.cache}/crmsync/temporal-v1.5.1/temporal, then PATH.
  const cached = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'crmsync', 'temporal-v1.5.1', 'temporal');
  return process.env.TEMPORAL_CLI_PATH ?? (existsSync(cached) ? cached : 'temporal');
}
const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((r) => {
      const c = createConnection({ port, host: '127.0.0.1' }, () => {
        c.destroy();
        r(true);
      });
      c.once('error', () => r(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`nothing listens on ${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(killer);
}
const catalogQuery = <T>(fn: (q: Q) => Promise<T>): Promise<T> => duck(join(dir, 'lake', 'catalog.duckdb'), { access_mode: 'READ_ONLY' }, fn);

// ---- The model: what each sync saw -------------------------------------------------------------

interface Snapshot {
  contacts: Map<number, Row>;
  small: Record<Small, Map<string, Row>>;
}
/** Every distinct state of each contact a sync saw, in order (what contacts_history must hold). */
const seenVersions = new Map<number, Row[]>();
/** Ids deleted in the CRM after a sync had seen them (tombstones). */
const tombstoned = new Set<number>();
/** Small-stream rows deleted after a sync had seen them, with their last seen row. */
const smallTombstones: Record<Small, Map<string, Row>> = Object.fromEntries(SMALL.map((s) => [s, new Map()])) as Record<Small, Map<string, Row>>;
let lastSnapshot: Snapshot | undefined;
/** Findings per category and round; each category has its own test below. */
const findings: Record<string, string[]> = {};
const note = (category: string, round: number, text: string): void => {
  (findings[category] ??= []).push(`round ${round}: ${text}`);
};
/** After each round: the time its sync ended, what the warehouse held then, and what the CRM held. */
const asOfChecks: { round: number; at: number; model: Map<number, Row>; crm: Map<number, Row> }[] = [];
const roundEnds: number[] = [];
const roundStarts: number[] = [];

function smallSnapshot(): Record<Small, Map<string, Row>> {
  return Object.fromEntries(SMALL.map((s) => [s, new Map(SMALL_SPEC[s].want(server).map((r) => [SMALL_SPEC[s].key(r), r]))])) as Record<Small, Map<string, Row>>;
}

// ---- Round mutations ---------------------------------------------------------------------------

let nextContactId = 0;
let nextTagId = 0;
let nextListId = 0;
let nextCampaignId = 0;
let nextFunnelId = 0;
let nextFunnelSubId = 0;
let nextCompanyId = 0;
/** The tag created in round 3 and deleted, still without members, in round 5. */
let tempTagId = -1;
/** Contacts changed in the current round (for the mid-sync edit, which must touch an unchanged one). */
let touched = new Set<number>();
/** Contacts the CRM changed while the current round's sync ran ('all' when a delete may have shifted any row past a page). */
let lenient: Set<number> | 'all' = new Set();
/** The small streams as they were just before the CRM changed during the current round's sync. */
let smallBeforeMid: Record<Small, Map<string, Row>> | undefined;
/** A contact deleted while the current round's sync ran, with its state just before the delete. */
let deletedMid: { id: number; state: Row } | undefined;

function seed(): void {
  const from = Date.UTC(2024, 0, 1);
  const to = Date.UTC(2026, 10, 25);
  for (const [id, title] of ['VIP', 'Newsletter', 'Beta "Testers"', 'Leads', 'Ünïcode', 'Cold'].entries())
    server.tags.set(id + 1, {
      id: id + 1,
      title,
      slug: title.toLowerCase().replace(/[^a-z]+/g, '-'),
      description: id % 2 ? '' : `about ${title}`,
      created_at: randomPastWall(from, to),
      updated_at: randomPastWall(to, to + 86_400_000),
    });
  nextTagId = 7;
  for (const [id, title] of ['Main', 'Partners', 'Events', 'Weekly'].entries())
    server.lists.set(id + 1, {
      id: id + 1,
      title,
      slug: title.toLowerCase(),
      description: '',
      is_public: id % 2 ? '0' : '1',
      created_at: randomPastWall(from, to),
      updated_at: randomPastWall(to, to + 86_400_000),
    });
  nextListId = 5;
  server.fields = [
    { field_key: 'text', type: 'text', label: 'Nickname', slug: 'nickname' },
    { field_key: 'number', type: 'number', label: 'Score', slug: 'score' },
    { field_key: 'date', type: 'date', label: 'Renewal', slug: 'renewal' },
    { field_key: 'select-one', type: 'select-one', label: 'Plan', slug: 'plan', options: ['free', 'pro', 'enterprise'] },
    { field_key: 'checkbox', type: 'checkbox', label: 'Interests', slug: 'interests', options: ['news', 'events', 'offers'] },
    { field_key: 'radio', type: 'radio', label: 'Channel', slug: 'channel', options: ['email', 'sms'] },
    { field_key: 'url', type: 'url', label: 'Site', slug: 'site' },
  ];
  const size = int(350, 650);
  let id = 0;
  while (server.contacts.size < size) {
    id += chance(0.06) ? 2 : 1; // ids of contacts deleted before the first sync
    const created = fromMsToWall(from + Math.floor(((to - from) * id) / (size * 1.1)));
    const updated = randomPastWall(siteMs(created), to);
    server.contacts.set(id, makeContact(id, created, updated, server.fields, randomTags(), randomLists()));
  }
  nextContactId = id + 1;
  for (let i = 1; i <= 3; i++) server.companies.push(makeCompany(i));
  nextCompanyId = 4;
  const campaignStatuses = ['sent', 'sent', 'scheduled', 'draft'];
  for (let i = 1; i <= 4; i++) server.campaigns.push(makeCampaign(i, campaignStatuses[i - 1]!));
  nextCampaignId = 5;
  for (let i = 1; i <= 3; i++) server.funnels.push(makeFunnel(i));
  nextFunnelId = 4;
  nextFunnelSubId = 1;
  for (const f of server.funnels) for (const c of sample([...server.contacts.keys()], int(10, 40))) server.funnelSubs.push(makeFunnelSub(f.id, c));
}
function fromMsToWall(t: number): string {
  return safeWall(t);
}
function randomTags(): number[] {
  // Tag 6 ("Cold") starts with no members; later rounds give it some. Only tags that exist.
  return [1, 2, 3, 4, 5].filter((t) => server.tags.has(t) && chance(0.3));
}
function randomLists(): number[] {
  return [1, 2, 3].filter((l) => server.lists.has(l) && chance(0.4));
}
function makeCompany(id: number): RCompany {
  const [city, state, country] = pick(CITIES);
  return {
    id,
    name: `Company ${id} ${pick(['GmbH', 'Ltd', 'S.A.', 'Inc'])}`,
    industry: pick(['Energy', 'Retail', 'Software', '']),
    website: `https://c${id}.test`,
    email: `hi@c${id}.test`,
    phone: chance(0.5) ? '+1 555 0100' : '',
    description: '',
    logo: '',
    linkedin_url: '',
    address_line_1: '',
    address_line_2: '',
    city,
    state,
    country,
    postal_code: '',
    employees_number: int(1, 5000),
    type: pick(['Prospect', 'Partner', 'Reseller', 'Vendor', 'Other']),
    owner_id: int(1, 50),
    status: pick(['active', 'inactive']),
    created_at: randomPastWall(Date.UTC(2024, 0, 1), Date.UTC(2026, 10, 1)),
    updated_at: randomPastWall(Date.UTC(2026, 10, 1), Date.UTC(2026, 10, 20)),
  };
}
function makeCampaign(id: number, status: string): RCampaign {
  const sent = status === 'sent' ? int(50, 400) : 0;
  return {
    id,
    title: `Campaign ${id}`,
    slug: `campaign-${id}`,
    status,
    email_subject: `Subject ${id}`,
    email_pre_header: chance(0.5) ? `Pre ${id}` : '',
    email_body: `<p>Body ${id}</p>`,
    recipients_count: sent,
    scheduled_at: status === 'scheduled' ? randomPastWall(Date.UTC(2026, 11, 20), Date.UTC(2026, 11, 30)) : null,
    design_template: pick(['simple', 'plain', 'classic']),
    settings: {},
    created_at: randomPastWall(Date.UTC(2025, 0, 1), Date.UTC(2026, 9, 1)),
    updated_at: randomPastWall(Date.UTC(2026, 9, 1), Date.UTC(2026, 10, 20)),
    stats: { sent, opens: Math.floor(sent / 3), clicks: Math.floor(sent / 10) },
  };
}
const iso = (t: number): string => new Date(Math.floor(t / 1000) * 1000).toISOString().replace('.000Z', 'Z');
function makeFunnel(id: number): RFunnel {
  return {
    id,
    title: `Funnel ${id}`,
    trigger_name: pick(['user_registration', 'custom_winback', 'webhook_signup']),
    status: pick(['published', 'draft', 'paused']),
    conditions: [],
    settings: {},
    created_by: 1,
    created_at: iso(Date.UTC(2025, 0, 1) + int(0, 300) * 86_400_000),
    updated_at: iso(Date.UTC(2026, 9, 1) + int(0, 40) * 86_400_000),
    description: '',
    labels: [],
  };
}
function makeFunnelSub(funnelId: number, contactId: number, stamp?: string): RFunnelSub {
  const id = nextFunnelSubId++;
  const at = stamp ?? randomPastWall(Date.UTC(2026, 0, 1), Date.UTC(2026, 10, 20));
  return {
    id,
    funnel_id: funnelId,
    subscriber_id: contactId,
    status: pick(['active', 'completed', 'cancelled']),
    last_sequence_id: int(1, 5),
    next_sequence_id: int(2, 6),
    next_execution_time: randomPastWall(Date.UTC(2026, 11, 10), Date.UTC(2026, 11, 30)),
    created_at: at,
    updated_at: at,
    metrics: chance(0.5)
      ? [
          {
            id: id * 10,
            funnel_id: funnelId,
            sequence_id: 1,
            subscriber_id: contactId,
            benchmark_value: 1.5,
            benchmark_currency: 'USD',
            status: 'completed',
            notes: '',
            created_at: at,
            updated_at: at,
          },
        ]
      : [],
  };
}

/** One field edit of a contact (the interface's PUT /subscribers/{id} fields), stamped `stamp`. */
function editContact(c: RContact, stamp: string): void {
  const edits = int(1, 3);
  for (let i = 0; i < edits; i++) {
    switch (int(0, 11)) {
      case 0:
        c.first_name = pick(FIRST.filter((x) => x !== c.first_name));
        break;
      case 1:
        c.last_name = pick(LAST.filter((x) => x !== c.last_name));
        break;
      case 2:
        c.status = pick(STATUSES.filter((x) => x !== c.status));
        break;
      case 3:
        c.email = freshEmail(c.id);
        break;
      case 4:
        // phone cleared to empty, or set
        c.phone = c.phone ? '' : `+44 20 ${String(int(1000, 9999))} ${String(int(1000, 9999))}`;
        break;
      case 5: {
        const [city, state, country] = pick(CITIES);
        Object.assign(c, { city, state, country, postal_code: chance(0.5) ? '' : String(int(1000, 99999)) });
        break;
      }
      case 6:
        c.contact_type = c.contact_type === 'lead' ? 'customer' : 'lead';
        break;
      case 7: {
        // a custom value set, changed or removed
        const f = pick(server.fields);
        c.custom = { ...c.custom };
        if (f.slug in c.custom && chance(0.4)) delete c.custom[f.slug];
        else c.custom[f.slug] = customValue(f);
        break;
      }
      case 8:
        c.custom = chance(0.3) ? {} : randomCustom(server.fields);
        break;
      case 9:
        c.user_id = c.user_id === null ? c.id + 2000 : null;
        break;
      case 10:
        c.date_of_birth = `19${int(50, 99)}-${String(int(1, 12)).padStart(2, '0')}-${String(int(1, 28)).padStart(2, '0')}`;
        break;
      default:
        c.address_line_1 = chance(0.3) ? '' : `${int(1, 999)} Elm St`;
        c.address_line_2 = chance(0.5) ? '' : `Unit ${int(1, 50)}`;
    }
  }
  c.updated_at = stamp;
}

/** Ids of the contacts that the last sync saw live. */
const syncedLive = (): number[] => [...(lastSnapshot?.contacts.keys() ?? [])];

/**
 * docs/sync.md "Membership repair": tag and list attach/detach leave `updated_at` alone, and only a
 * tag or list whose count differs from the warehouse's is re-read. The warehouse's count at that point
 * (after the newest-ids read and the updated-first scan) is worked out here from what the last sync saw;
 * where a round changed memberships silently and moved no count, one more member is attached (silently)
 * so the count moves. Without that the change is left to the rolling sweep (the documented bound).
 */
function makeMembershipCountsMove(): void {
  const prev = lastSnapshot!.contacts;
  // The updated-first scan also loads every row of its overlap (5 minutes before the newest updated_at seen).
  const window = Math.max(...[...prev.values()].map((r) => r.updated_ms as number)) - 5 * 60_000 - 60_000;
  const reReadNow = (id: number): boolean => {
    const now = server.contacts.get(id);
    const before = prev.get(id);
    return !before || (now !== undefined && (siteMs(now.updated_at) !== before.updated_ms || siteMs(now.updated_at) >= window));
  };
  for (const key of ['tagIds', 'listIds'] as const) {
    const col = key === 'tagIds' ? 'tag_ids' : 'list_ids';
    const taxonomy = key === 'tagIds' ? [...server.tags.keys()] : [...server.lists.keys()];
    for (const t of taxonomy) {
      for (let attempt = 0; attempt < 3; attempt++) {
        let heldTotal = 0;
        let heldSub = 0;
        let crmTotal = 0;
        let crmSub = 0;
        let silent = false;
        const ids = new Set([...prev.keys(), ...server.contacts.keys()]);
        for (const id of ids) {
          const now = server.contacts.get(id);
          const before = prev.get(id);
          if (now && now[key].includes(t)) {
            crmTotal++;
            if (now.status === 'subscribed') crmSub++;
          }
          const reRead = reReadNow(id);
          const heldMember = reRead ? now![key].includes(t) : (before![col] as number[]).includes(t);
          const heldStatus = reRead ? now!.status : (before!.status as string);
          if (heldMember) {
            heldTotal++;
            if (heldStatus === 'subscribed') heldSub++;
          }
          if (!reRead && now && (before![col] as number[]).includes(t) !== now[key].includes(t)) silent = true;
        }
        if (!silent || heldTotal !== crmTotal || heldSub !== crmSub) break;
        const candidates = [...server.contacts.values()].filter((c) => prev.has(c.id) && !touched.has(c.id) && !reReadNow(c.id) && !c[key].includes(t));
        if (candidates.length === 0) break;
        const c = pick(candidates);
        c[key] = [...c[key], t].sort((a, b) => a - b);
        touched.add(c.id);
      }
    }
  }
}

interface RoundPlan {
  added: number;
  edited: number;
  late: number;
  membership: number;
  deleted: number;
  recreated: number;
}

function mutate(round: number): RoundPlan {
  touched = new Set();
  const stamp = server.now(); // every edit of the round in one second: no tie-breaker (site-ny README, Sorting)
  const live = syncedLive().filter((id) => server.contacts.has(id));
  const plan: RoundPlan = { added: 0, edited: 0, late: 0, membership: 0, deleted: 0, recreated: 0 };

  // Field edits (bumping updated_at), many in the same second.
  for (const id of sample(live, round === 3 ? 130 : int(15, 70))) {
    editContact(server.contacts.get(id)!, stamp);
    touched.add(id);
    plan.edited++;
  }
  // Tag and list memberships attached and detached (updated_at untouched: site-ny README). Most rounds keep
  // to one or two smaller tags or lists, so membership repair re-reads their members; the last round
  // spreads them over every tag and list (more members to re-read than contacts: the run sweeps).
  // ("Temp" stays without members until it is deleted: a tag deleted with members is left to the full round.)
  const taxonomies = [...[...server.tags.keys()].filter((t) => t !== tempTagId).map((t) => ['tagIds', t] as const), ...[...server.lists.keys()].map((id) => ['listIds', id] as const)];
  const small = taxonomies.filter(([key, id]) => [...server.contacts.values()].filter((c) => c[key].includes(id)).length < server.contacts.size / 4);
  const focus = round === ROUNDS ? taxonomies : sample(small.length ? small : taxonomies, int(1, 2));
  for (const id of sample(
    live.filter((x) => !touched.has(x)),
    int(5, 25),
  )) {
    const c = server.contacts.get(id)!;
    const [key, t] = pick(focus);
    c[key] = c[key].includes(t) ? c[key].filter((x) => x !== t) : [...c[key], t].sort((a, b) => a - b);
    touched.add(id);
    plan.membership++;
  }
  // Rows committed late (docs/sync.md, updated-first scan: "The overlap covers rows committed late"): edits
  // stamped 150 s before the newest updated_at the last sync saw, inside its 5 minutes of overlap.
  if (LATE_ROUNDS.includes(round)) {
    const newest = Math.max(...[...lastSnapshot!.contacts.values()].map((r) => r.updated_ms as number));
    const lateStamp = safeWall(newest - 150_000);
    for (const id of sample(
      live.filter((x) => !touched.has(x) && siteMs(server.contacts.get(x)!.updated_at) < newest - 200_000),
      int(3, 8),
    )) {
      const c = server.contacts.get(id)!;
      editContact(c, lateStamp);
      touched.add(id);
      plan.late++;
      // Its updated_at is before the last syncs ended: as of then, the CRM's own clock says it already had this state.
      for (const check of asOfChecks) if (check.at >= siteMs(lateStamp)) check.crm.set(id, expectContact(c));
    }
  }
  // Deletes, and one contact deleted and created again with the same email.
  const deletable = live.filter((x) => !touched.has(x));
  for (const id of sample(deletable, DELETE_ROUNDS.includes(round) ? int(1, 6) : 0)) {
    server.contacts.delete(id);
    server.funnelSubs = server.funnelSubs.filter((s) => s.subscriber_id !== id);
    plan.deleted++;
  }
  if (DELETE_ROUNDS.includes(round) && round !== FULL_ROUND) {
    const victim = pick(live.filter((x) => server.contacts.has(x) && !touched.has(x)));
    const email = server.contacts.get(victim)!.email;
    server.contacts.delete(victim);
    server.funnelSubs = server.funnelSubs.filter((s) => s.subscriber_id !== victim);
    const id = nextContactId++;
    const c = makeContact(id, stamp, stamp, server.fields, randomTags(), randomLists());
    c.email = email;
    server.contacts.set(id, c);
    plan.deleted++;
    plan.recreated++;
    plan.added++;
  }
  // New contacts (an auto-increment id; some created and deleted before the sync: a gap).
  // Round 5 brings more than two pages of them (docs/sync.md: more than 25 new, and page 1 is read again at the page size).
  for (let i = round === 5 ? 95 : int(3, 30); i > 0; i--) {
    const id = nextContactId++;
    if (chance(0.1)) continue;
    server.contacts.set(id, makeContact(id, stamp, stamp, server.fields, randomTags().concat(round >= 3 && server.tags.has(6) && chance(0.3) ? [6] : []), randomLists()));
    plan.added++;
  }

  // Tags, lists, custom fields, companies, campaigns, funnels and their subscribers.
  if (round === 2) server.tags.set(nextTagId, { id: nextTagId++, title: 'Spring', slug: 'spring', description: 'new in round 2', created_at: stamp, updated_at: stamp });
  if (round === 3) {
    tempTagId = nextTagId++;
    server.tags.set(tempTagId, { id: tempTagId, title: 'Temp', slug: 'temp', description: 'never used', created_at: stamp, updated_at: stamp });
  }
  if (round === 5) server.deleteTag(tempTagId); // no members
  if (round === FULL_ROUND) {
    // A tag and a list with members deleted: "removes it from all contacts; contacts are kept" (Tags, Lists).
    server.deleteTag(4);
    server.deleteList(2);
  }
  if (chance(0.7)) {
    const t = pick([...server.tags.values()]);
    Object.assign(t, { title: `${t.title.replace(/ r\d+$/, '')} r${round}`, description: `edited in round ${round}`, updated_at: stamp });
  }
  if (round === 4) server.lists.set(nextListId, { id: nextListId++, title: 'Autumn', slug: 'autumn', description: 'new in round 4', is_public: '1', created_at: stamp, updated_at: stamp });
  if (chance(0.6)) {
    const l = pick([...server.lists.values()]);
    Object.assign(l, { is_public: l.is_public === '1' ? '0' : '1', title: `${l.title.replace(/ r\d+$/, '')} r${round}`, updated_at: stamp });
  }
  if (round === 3) server.fields.push({ field_key: 'select-one', type: 'select-one', label: 'Tier', slug: 'tier', options: ['a', 'b', 'c'] });
  if (round === 7) server.fields.find((f) => f.slug === 'plan')!.options = ['free', 'pro', 'enterprise', 'business'];
  if (round === 8) server.fields.find((f) => f.slug === 'site')!.label = 'Website';
  // Campaigns: stats move, a new draft, status changes, a rename, a delete.
  for (const c of server.campaigns.filter((x) => x.status === 'sent')) {
    c.stats = { ...c.stats, opens: c.stats.opens + int(0, 5), clicks: c.stats.clicks + int(0, 2) };
  }
  if (round === 2) server.campaigns.push({ ...makeCampaign(nextCampaignId++, 'draft'), created_at: stamp, updated_at: stamp });
  if (round === 3) {
    const d = server.campaigns.find((x) => x.status === 'draft')!;
    Object.assign(d, { status: 'scheduled', scheduled_at: safeWall(Date.now() + 7 * 86_400_000), updated_at: stamp });
  }
  if (round === 5) {
    const sc = server.campaigns.find((x) => x.status === 'scheduled')!;
    Object.assign(sc, { status: 'sent', scheduled_at: null, recipients_count: 120, stats: { sent: 120, opens: 0, clicks: 0 }, updated_at: stamp });
  }
  if (round === 7) Object.assign(pick(server.campaigns), { title: `Renamed in round 7 ✓`, updated_at: stamp });
  if (round === 8)
    server.campaigns.splice(
      Math.max(
        0,
        server.campaigns.findIndex((x) => x.status !== 'sent'),
      ),
      1,
    );
  // Funnels.
  if (round === 2) Object.assign(server.funnels[0]!, { status: server.funnels[0]!.status === 'paused' ? 'published' : 'paused', updated_at: iso(Date.now()) });
  if (round === 4) {
    const f = { ...makeFunnel(nextFunnelId++), created_at: iso(Date.now()), updated_at: iso(Date.now()) };
    server.funnels.push(f);
    for (const c of sample([...server.contacts.keys()], 20)) server.funnelSubs.push(makeFunnelSub(f.id, c, stamp));
  }
  if (round === 7) Object.assign(pick(server.funnels), { title: 'Win back “VIP”', updated_at: iso(Date.now()) });
  if (round === 8) {
    const gone = server.funnels.splice(1, 1)[0]!;
    server.funnelSubs = server.funnelSubs.filter((s) => s.funnel_id !== gone.id); // "removes subscriber progress" (Transitions)
  }
  // Funnel subscribers: enrolments added, moved on, removed.
  for (const f of server.funnels) {
    for (const c of sample([...server.contacts.keys()], int(0, 4)))
      if (!server.funnelSubs.some((s) => s.funnel_id === f.id && s.subscriber_id === c)) server.funnelSubs.push(makeFunnelSub(f.id, c, stamp));
  }
  for (const s of sample(server.funnelSubs, int(1, 6))) Object.assign(s, { status: pick(['active', 'completed', 'cancelled']), last_sequence_id: s.last_sequence_id + 1, updated_at: stamp });
  for (const s of sample(server.funnelSubs, int(0, 3))) server.funnelSubs.splice(server.funnelSubs.indexOf(s), 1);
  // Companies.
  if (round === 3 || round === 7) Object.assign(pick(server.companies), { name: `Renamed ${round}`, employees_number: int(1, 9000), city: 'Zürich', updated_at: stamp });
  if (round === 5) server.companies.push({ ...makeCompany(nextCompanyId++), created_at: stamp, updated_at: stamp });
  if (round === 8) server.companies.splice(0, 1);

  makeMembershipCountsMove();
  return plan;
}

// ---- Comparing the warehouse with the server -----------------------------------------------------

async function compareAfterRound(round: number, syncStdout: string, syncStart: number, syncEnd: number, full: boolean): Promise<void> {
  const current: Snapshot = { contacts: new Map([...server.contacts.values()].map((c) => [c.id, expectContact(c)])), small: smallSnapshot() };
  await catalogQuery(async (q) => {
    // contacts: every live contact exactly; tombstones for every contact deleted after a sync saw it.
    const rows = await q(`SELECT ${CONTACT_COLS}, epoch_ms(_deleted_at) AS del FROM contacts ORDER BY id`);
    const byId = new Map(rows.map((r) => [Number(r.id), r]));
    const prevLive = lastSnapshot?.contacts ?? new Map<number, Row>();
    // What the warehouse must hold for each contact: the CRM's state now. Only where the CRM changed while
    // the sync ran (`lenient`) may it hold the state the last sync saw instead (docs/sync.md: "A run that
    // starts after the last change ends equal to the CRM", so the next run must have the later one).
    const isLenient = (id: number): boolean => lenient === 'all' || lenient.has(id);
    let extraVersions = 0;
    for (const id of new Set([...prevLive.keys(), ...current.contacts.keys()])) {
      const now = current.contacts.get(id);
      const before = prevLive.get(id);
      const r = byId.get(id);
      const held = r && r.del === null ? stable(actualContact(r)) : null;
      if (now && held === stable(now)) continue;
      if (!now && held === null) continue;
      if (isLenient(id) && before && held === stable(before)) {
        current.contacts.set(id, before);
        continue;
      }
      if (isLenient(id) && !before && held === null) {
        current.contacts.delete(id);
        continue;
      }
      if (!now) note('tombstones', round, `contact ${id} was deleted in the CRM but is live in the warehouse`);
      else if (!r) note('contacts', round, `contact ${id} missing`);
      else if (r.del !== null) note('contacts', round, `contact ${id} is live in the CRM but tombstoned (_deleted_at ${String(r.del)})`);
      else note('contacts', round, `contact ${id} differs:\n  warehouse ${held}\n  crm       ${stable(now)}`);
    }
    for (const id of prevLive.keys()) if (!current.contacts.has(id)) tombstoned.add(id);
    for (const r of rows) {
      const id = Number(r.id);
      if (current.contacts.has(id) || r.del === null) continue;
      if (!tombstoned.has(id)) note('contacts', round, `contact ${id} is tombstoned but was never deleted after a sync saw it`);
      else {
        const seen = seenVersions.get(id)!;
        // A contact edited and then deleted while the sync ran: the sync may have read its last state before the delete.
        if (deletedMid?.id === id && stable(actualContact(r)) === stable(deletedMid.state) && stable(seen.at(-1)) !== stable(deletedMid.state)) {
          seen.push(deletedMid.state);
          extraVersions++;
        }
        if (stable(actualContact(r)) !== stable(seen.at(-1))) note('tombstones', round, `tombstoned contact ${id} does not keep its last fields`);
        if (Number(r.del) > syncEnd) note('tombstones', round, `contact ${id}: _deleted_at after the sync ended`);
      }
    }
    for (const id of tombstoned) if (!byId.has(id)) note('tombstones', round, `deleted contact ${id} has no row (tombstone) in contacts`);

    // Memberships: current ones of live contacts only (docs/warehouse.md, contact_tags/contact_lists).
    for (const [table, col, key] of [
      ['contact_tags', 'tag_id', 'tag_ids'],
      ['contact_lists', 'list_id', 'list_ids'],
    ] as const) {
      const got = (await q(`SELECT contact_id, ${col} AS x FROM ${table}`)).map((r) => `${String(r.contact_id)}:${String(r.x)}`).sort();
      const want = [...current.contacts.values()].flatMap((c) => (c[key] as number[]).map((t) => `${String(c.id)}:${t}`)).sort();
      const extra = got.filter((x) => !want.includes(x));
      const missing = want.filter((x) => !got.includes(x));
      if (extra.length || missing.length) note('memberships', round, `${table}: extra ${extra.slice(0, 8).join(' ')} (${extra.length}), missing ${missing.slice(0, 8).join(' ')} (${missing.length})`);
    }

    // History: seen versions, in order, intervals that neither overlap nor leave gaps, the open one = contacts.
    for (const [id, want] of current.contacts) {
      const seen = seenVersions.get(id) ?? [];
      if (stable(seen.at(-1)) !== stable(want)) seen.push(want);
      seenVersions.set(id, seen);
    }
    const hist = await q(`SELECT ${CONTACT_COLS}, epoch_ms(valid_from) AS vf, epoch_ms(valid_to) AS vt, _fingerprint AS fp FROM contacts_history ORDER BY id, valid_from, valid_to NULLS LAST`);
    const histById = new Map<number, Row[]>();
    for (const h of hist) {
      const id = Number(h.id);
      if (!histById.has(id)) histById.set(id, []);
      histById.get(id)!.push(h);
    }
    const fps = new Map((await q('SELECT id, _fingerprint AS fp FROM contacts')).map((r) => [Number(r.id), r.fp]));
    for (const [id, seen] of seenVersions) {
      const versions = histById.get(id) ?? [];
      const got = versions.map((v) => stable(actualContact(v)));
      const want = seen.map((s) => stable(s));
      if (got.join('\n') !== want.join('\n')) {
        const i = got.findIndex((g, k) => g !== want[k]);
        note('history', round, `contact ${id}: ${versions.length} versions, ${seen.length} seen by syncs; first difference at version ${i}:\n  history ${got[i] ?? '-'}\n  seen    ${want[i] ?? '-'}`);
      }
      for (let i = 0; i < versions.length; i++) {
        const v = versions[i]!;
        const vf = Number(v.vf);
        const vt = v.vt === null ? null : Number(v.vt);
        if (vt !== null && vt < vf) note('history intervals', round, `contact ${id} version ${i}: valid_to before valid_from`);
        if (i < versions.length - 1) {
          if (vt === null) note('history intervals', round, `contact ${id} version ${i}: open but not the last`);
          else if (vt > Number(versions[i + 1]!.vf)) note('history intervals', round, `contact ${id}: versions ${i} and ${i + 1} overlap`);
          else if (vt < Number(versions[i + 1]!.vf)) note('history intervals', round, `contact ${id}: a gap between versions ${i} and ${i + 1}`);
          if (vt !== null && vt === Number(versions[i + 1]!.vf) && vt === vf) note('history intervals', round, `contact ${id} version ${i} is empty (valid_from = valid_to)`);
        }
      }
      const last = versions.at(-1);
      if (current.contacts.has(id)) {
        if (!last || last.vt !== null) note('history', round, `live contact ${id} has no open version`);
        else if (last.fp !== fps.get(id) || stable(actualContact(last)) !== stable(actualContact(byId.get(id)!))) note('history', round, `contact ${id}: open version differs from contacts`);
      } else if (last && last.vt === null) note('tombstones', round, `deleted contact ${id}: its history version is still open`);
    }

    // Small streams: live rows exactly as served; rows gone from the CRM tombstoned with their last values (or removed).
    for (const s of SMALL) {
      const spec = SMALL_SPEC[s];
      const got = await q(spec.sql);
      const gotByKey = new Map(got.map((r) => [spec.key(r), r]));
      const want = current.small[s];
      // A change the CRM made while this sync ran (smallBeforeMid) may or may not be in this run.
      const alt = smallBeforeMid?.[s];
      for (const k of new Set([...want.keys(), ...(alt?.keys() ?? [])])) {
        const w = want.get(k);
        const a = alt?.get(k);
        const r = gotByKey.get(k);
        const held = r && r.d === null ? stable(spec.read(r)) : null;
        if ((w && held === stable(w)) || (!w && held === null)) continue;
        if (alt && (a ? held === stable(a) : held === null)) {
          if (a) want.set(k, a);
          else want.delete(k);
          continue;
        }
        if (!w) continue; // deleted in the CRM: checked below
        if (!r) note(s, round, `${k} missing`);
        else if (r.d !== null) note(s, round, `${k} is live in the CRM but tombstoned`);
        else note(s, round, `${k} differs:\n  warehouse ${held}\n  crm       ${stable(w)}`);
      }
      for (const [k, row] of lastSnapshot?.small[s] ?? []) if (!want.has(k)) smallTombstones[s].set(k, row);
      for (const [k, r] of gotByKey) {
        if (want.has(k)) continue;
        const last = smallTombstones[s].get(k);
        if (!last) note(s, round, `${k} in the warehouse was never in the CRM`);
        else if (spec.tombstones && r.d === null) note(s, round, `${k} was deleted in the CRM but is live in the warehouse`);
        else if (!spec.tombstones) note(s, round, `${k} was removed in the CRM but is still in the warehouse`);
        else if (stable(spec.read(r)) !== stable(last)) note(s, round, `tombstoned ${k} does not keep its last values`);
      }
      if (spec.tombstones) for (const k of smallTombstones[s].keys()) if (!gotByKey.has(k)) note(s, round, `deleted ${k} has no tombstone row`);
    }

    // Views (docs/warehouse.md "Views"): contacts_current is the live contacts with the titles of their
    // tags and lists; tag_list_member_counts counts members now and at the end of the previous contacts sync.
    {
      const cur = await q('SELECT id, tag_titles, list_titles FROM contacts_current');
      const titles = (ids: number[], from: Map<number, RTag>): string[] => ids.map((t) => from.get(t)?.title ?? `?${t}`).sort();
      const gotIds = cur.map((r) => Number(r.id)).sort((a, b) => a - b);
      const wantIds = [...current.contacts.keys()].sort((a, b) => a - b);
      if (stable(gotIds) !== stable(wantIds)) note('views', round, `contacts_current holds ${gotIds.length} ids, the live contacts are ${wantIds.length}`);
      for (const r of cur) {
        const c = current.contacts.get(Number(r.id));
        if (!c) continue;
        const got = { tags: ((r.tag_titles as string[] | null) ?? []).slice().sort(), lists: ((r.list_titles as string[] | null) ?? []).slice().sort() };
        const want = { tags: titles(c.tag_ids as number[], server.tags), lists: titles(c.list_ids as number[], server.lists as Map<number, RTag>) };
        if (stable(got) !== stable(want)) note('views', round, `contacts_current ${String(r.id)}: titles ${stable(got)}, expected ${stable(want)}`);
      }
      const counts = await q('SELECT kind, id, members, previous_members, change, crm_subscribers FROM tag_list_member_counts');
      const prevModel = lastSnapshot?.contacts;
      for (const [kind, col, from] of [
        ['tag', 'tag_ids', server.tags],
        ['list', 'list_ids', server.lists as Map<number, RTag>],
      ] as const) {
        for (const t of from.values()) {
          const members = (m: Map<number, Row>): number => [...m.values()].filter((c) => (c[col] as number[]).includes(t.id)).length;
          const now = members(current.contacts);
          const prev = prevModel ? members(prevModel) : null;
          const want = {
            members: now,
            previous_members: prev,
            change: prev === null ? null : now - prev,
            // The CRM's own subscribersCount as the run read it (the tags and lists rows compared above).
            crm_subscribers: n(current.small[kind === 'tag' ? 'tags' : 'lists'].get(String(t.id))?.subscribers_count),
          };
          const r = counts.find((x) => x.kind === kind && Number(x.id) === t.id);
          const got = r ? { members: n(r.members), previous_members: n(r.previous_members), change: n(r.change), crm_subscribers: n(r.crm_subscribers) } : undefined;
          if (stable(got) !== stable(want)) note('views', round, `tag_list_member_counts ${kind} ${t.id}: ${stable(got)}, expected ${stable(want)}`);
        }
      }
    }

    // _sync_runs and the summary: rows read, inserted, updated, deleted of this round's run.
    const runs = await q(
      `SELECT run_id, stream, status, inserted, updated, unchanged, deleted FROM _sync_runs WHERE epoch_ms(started_at) >= ${syncStart - 1000} AND epoch_ms(started_at) <= ${syncEnd} ORDER BY stream`,
    );
    const runIds = new Set(runs.map((r) => r.run_id));
    if (runIds.size !== 1) note('sync figures', round, `${runIds.size} runs recorded for one sync`);
    const byStream = new Map(runs.map((r) => [String(r.stream), r]));
    const summary = new Map<string, { rows: number; inserted: number; updated: number; deleted: number }>();
    for (const m of syncStdout.matchAll(/^ {2}(\w+)\s+\w+\s+rows (\d+)\s+inserted (\d+)\s+updated (\d+)\s+deleted (\d+)/gm))
      summary.set(m[1]!, { rows: Number(m[2]), inserted: Number(m[3]), updated: Number(m[4]), deleted: Number(m[5]) });
    /** `unchanged` may be a range [min, max] (a scan read once, or in part twice with its repair pass). */
    const expectFigures = (stream: string, want: { inserted: number; updated: number; deleted: number; unchanged?: number | [number, number] }): void => {
      const r = byStream.get(stream);
      if (!r) return note('sync figures', round, `${stream}: no _sync_runs row`);
      if (r.status !== 'succeeded') note('sync figures', round, `${stream}: status ${String(r.status)}`);
      const got = { inserted: Number(r.inserted), updated: Number(r.updated), deleted: Number(r.deleted), ...(want.unchanged === undefined ? {} : { unchanged: Number(r.unchanged) }) };
      const [lo, hi] = typeof want.unchanged === 'number' ? [want.unchanged, want.unchanged] : (want.unchanged ?? [NaN, NaN]);
      const ok = got.inserted === want.inserted && got.updated === want.updated && got.deleted === want.deleted && (want.unchanged === undefined || (got.unchanged! >= lo && got.unchanged! <= hi));
      if (!ok) note('sync figures', round, `${stream} _sync_runs ${stable(got)}, expected ${stable(want)}`);
      const sm = summary.get(stream);
      const rowsRead = Number(r.inserted) + Number(r.updated) + Number(r.unchanged);
      if (!sm) note('sync figures', round, `${stream}: no summary line`);
      else if (sm.inserted !== Number(r.inserted) || sm.updated !== Number(r.updated) || sm.deleted !== Number(r.deleted))
        note('sync figures', round, `${stream}: summary ${stable(sm)} differs from _sync_runs ${stable(got)}`);
      // The summary's "rows" is not defined by the docs; docs/report.md defines rows read as inserted + updated + unchanged.
      else if (sm.rows !== rowsRead) note('info: summary rows', round, `${stream}: summary rows ${sm.rows}, _sync_runs inserted + updated + unchanged ${rowsRead}`);
    };
    {
      const prevIds = new Set(prevLive.keys());
      const inserted = [...current.contacts.keys()].filter((id) => !prevIds.has(id)).length;
      const updated = [...current.contacts.entries()].filter(([id, row]) => prevIds.has(id) && stable(prevLive.get(id)) !== stable(row)).length + extraVersions;
      const deleted = [...prevIds].filter((id) => !current.contacts.has(id)).length;
      // A full scan reads every live contact; docs/sync.md "Contacts" 6: after drift it reads again in its repair
      // pass, and how those second reads count is not defined: at least every live contact once.
      const once = current.contacts.size - inserted - updated;
      expectFigures('contacts', { inserted, updated, deleted, ...(full ? { unchanged: round === 0 ? once : [once, Infinity] } : {}) });
    }
    for (const s of SMALL) {
      const prev = lastSnapshot?.small[s] ?? new Map<string, Row>();
      const now = current.small[s];
      expectFigures(s, {
        inserted: [...now.keys()].filter((k) => !prev.has(k)).length,
        updated: [...now.entries()].filter(([k, r]) => prev.has(k) && stable(prev.get(k)) !== stable(r)).length,
        deleted: [...prev.keys()].filter((k) => !now.has(k)).length,
        unchanged: [...now.entries()].filter(([k, r]) => prev.has(k) && stable(prev.get(k)) === stable(r)).length,
      });
    }
  });
  lastSnapshot = current;
  asOfChecks.push({ round, at: syncEnd, model: new Map(current.contacts), crm: new Map([...server.contacts.values()].map((c) => [c.id, expectContact(c)])) });
}

async function sync(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; start: number; end: number }> {
  const start = Date.now();
  const r = await runBuiltCli(['sync', '--per-page', String(PER_PAGE), ...args], env, dir, 120_000);
  return { ...r, start, end: Date.now() };
}

describe(`many rounds of CRM changes, each followed by crmsync sync (seed ${SEED})`, () => {
  beforeAll(async () => {
    server = new RoundsServer(TZ, SEED ^ 0x5eed);
    seed();
    const baseUrl = await server.start();
    dir = await mkdtemp(join(tmpdir(), 'crmsync-indep-rounds-'));
    const port = await freePort();
    temporal = spawn(temporalCli(), ['server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'error'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    temporal.stdout!.on('data', (d: Buffer) => childOutput.push(`[temporal] ${d.toString()}`));
    temporal.stderr!.on('data', (d: Buffer) => childOutput.push(`[temporal] ${d.toString()}`));
    await waitForPort(port, 60_000);
    env = { ...specServerCliEnv(baseUrl, dir, TZ), TEMPORAL_ADDRESS: `127.0.0.1:${port}`, CRMSYNC_WORKER_LAUNCH_DEFAULTS: '0' };
    worker = spawn(process.execPath, [BIN, 'worker'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    worker.stdout!.on('data', (d: Buffer) => childOutput.push(`[worker] ${d.toString()}`));
    worker.stderr!.on('data', (d: Buffer) => childOutput.push(`[worker] ${d.toString()}`));
  }, 90_000);

  afterAll(async () => {
    if (server) server.onRequest = undefined;
    await stop(worker);
    await stop(temporal);
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    if (process.env.ROUNDS_DEBUG) console.log(childOutput.join('').slice(-20_000));
    for (const [k, v] of Object.entries(findings)) if (v.length) console.log(`[${k}]\n${v.slice(0, 12).join('\n')}${v.length > 12 ? `\n... ${v.length - 12} more` : ''}`);
  }, 60_000);

  it('round 0: the backfill lands every contact and every small stream', { timeout: 120_000 }, async () => {
    const r = await sync([]);
    expect(r.code, r.stderr + childOutput.join('').slice(-3000)).toBe(0);
    roundStarts.push(r.start);
    roundEnds.push(r.end);
    await compareAfterRound(0, r.stdout, r.start, r.end, true);
  });

  for (let round = 1; round <= ROUNDS; round++) {
    const full = round === FULL_ROUND;
    it(`round ${round}: changes, then crmsync sync${full ? ' --full' : ''} exits 0`, { timeout: 120_000 }, async () => {
      // updated_at has whole seconds: the round's changes come at least a second after the last sync ended.
      const wait = roundEnds.at(-1)! + 1100 - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const plan = mutate(round);
      lenient = new Set();
      smallBeforeMid = undefined;
      deletedMid = undefined;
      let midSyncDone = false;
      if (round === MID_SYNC_EDIT_ROUND) {
        // A contact edited while the sync pages through the listing: on its second listing request.
        let listings = 0;
        const id = pick([...server.contacts.keys()].filter((x) => !touched.has(x) && lastSnapshot!.contacts.has(x)));
        server.onRequest = (req) => {
          if (req.path === '/v2/subscribers' && ++listings === 2 && !midSyncDone) {
            midSyncDone = true;
            lenient = new Set([id]);
            Object.assign(server.contacts.get(id)!, { city: 'Mid-sync City', first_name: 'Mid', updated_at: server.now() });
          }
        };
      }
      if (round === MID_SYNC_DELETE_ROUND) {
        // While the updated-first scan pages (its second descending page), a contact on its first page is
        // deleted and another one edited: rows move across the page boundary under the scan.
        const gone = pick([...touched].filter((x) => server.contacts.has(x) && lastSnapshot!.contacts.has(x)));
        const edited = pick([...server.contacts.keys()].filter((x) => !touched.has(x) && lastSnapshot!.contacts.has(x)));
        server.onRequest = (req) => {
          if (!midSyncDone && req.path === '/v2/subscribers' && req.query.sort_by === 'updated_at' && req.query.sort_type === 'DESC' && req.query.page === '2') {
            midSyncDone = true;
            lenient = 'all';
            smallBeforeMid = smallSnapshot();
            deletedMid = { id: gone, state: expectContact(server.contacts.get(gone)!) };
            server.contacts.delete(gone);
            server.funnelSubs = server.funnelSubs.filter((x) => x.subscriber_id !== gone);
            Object.assign(server.contacts.get(edited)!, { last_name: 'Moved', updated_at: server.now() });
          }
        };
      }
      if (full) {
        // While the full scan pages (its third page, ids ascending): a contact it has already read is deleted
        // and a new one signs up. docs/sync.md "Contacts" 4-6: the page totals move, so the run repairs with
        // one more pass and confirms the contacts it did not see, and the newest-first check loads the new
        // one; nothing changes after that, so this run ends equal to the CRM and says it caught up.
        const gone = pick(
          [...server.contacts.keys()]
            .filter((x) => lastSnapshot!.contacts.has(x))
            .sort((a, b) => a - b)
            .slice(0, PER_PAGE),
        );
        server.onRequest = (req) => {
          if (!midSyncDone && req.path === '/v2/subscribers' && req.query.sort_by === 'id' && req.query.sort_type === 'ASC' && req.query.page === '3') {
            midSyncDone = true;
            smallBeforeMid = smallSnapshot();
            deletedMid = { id: gone, state: expectContact(server.contacts.get(gone)!) };
            server.contacts.delete(gone);
            server.funnelSubs = server.funnelSubs.filter((x) => x.subscriber_id !== gone);
            const id = nextContactId++;
            server.contacts.set(id, makeContact(id, server.now(), server.now(), server.fields, randomTags(), randomLists()));
          }
        };
      }
      const mark = server.requests.length;
      const r = await sync(full ? ['--full'] : []);
      server.onRequest = undefined;
      if (process.env.ROUNDS_DEBUG)
        console.log(
          server.requests
            .slice(mark)
            .filter((q) => q.path === '/v2/subscribers')
            .map((q) => JSON.stringify(q.query))
            .join('\n'),
        );
      roundStarts.push(r.start);
      roundEnds.push(r.end);
      console.log(
        `round ${round}: ${stable(plan)}; sync ${((r.end - r.start) / 1000).toFixed(1)} s\n${r.stdout
          .split('\n')
          .filter((l) => /^ {2}\S|^ {20}/.test(l))
          .join('\n')}`,
      );
      expect(r.code, r.stderr.slice(-3000)).toBe(0);
      if (round === MID_SYNC_EDIT_ROUND || round === MID_SYNC_DELETE_ROUND || full) expect(midSyncDone, 'the change during the sync happened').toBe(true);
      if (full) {
        // docs/sync.md "Contacts" 6: `(CRM changed during the run; …)` beside the stream, `this run caught up with it`.
        if (!/CRM changed during the run/.test(r.stdout) || !/this run caught up with it/.test(r.stdout))
          note(
            'sync figures',
            round,
            `the summary does not say the CRM changed during the run and this run caught up:\n${r.stdout
              .split('\n')
              .filter((l) => /contacts/.test(l))
              .join('\n')}`,
          );
      }
      await compareAfterRound(round, r.stdout, r.start, r.end, full);
    });
  }

  it('crmsync verify at the end: the warehouse matches the CRM (exit 0)', { timeout: 120_000 }, async () => {
    const r = await runBuiltCli(['verify'], env, dir, 120_000);
    expect(r.code, r.stdout + r.stderr.slice(-2000)).toBe(0);
    expect(r.stdout).toMatch(/the warehouse matches the CRM/);
  });

  it("contacts_as_of(the end of each round's sync) gives every contact as it was then", { timeout: 60_000 }, async () => {
    // docs/warehouse.md: "contacts_as_of(ts) | table macro: every contact as it was at ts". At the end of a
    // round's sync the warehouse held exactly the CRM (checked above), except where the CRM changed during
    // that sync: there the CRM's own state then, or the one the warehouse held, are both right.
    expect(asOfChecks.length).toBe(ROUNDS + 1);
    const problems: string[] = [];
    await catalogQuery(async (q) => {
      for (const { round, at, model, crm } of asOfChecks) {
        const rows = await q(`SELECT ${CONTACT_COLS} FROM contacts_as_of(make_timestamptz(${at * 1000}::BIGINT)) ORDER BY id`);
        const got = new Map(rows.map((r) => [Number(r.id), stable(actualContact(r))]));
        for (const id of new Set([...model.keys(), ...crm.keys(), ...got.keys()])) {
          const options = [model.get(id), crm.get(id)].map((x) => (x ? stable(x) : undefined));
          if (!options.includes(got.get(id))) problems.push(`round ${round}: contact ${id} as of ${new Date(at).toISOString()}: ${got.get(id) ?? 'absent'}\n  expected ${options[0] ?? 'absent'}`);
        }
      }
    });
    expect(problems.slice(0, 10)).toEqual([]);
  });

  const category = (name: string, what: string): void => {
    it(`${what} [${name}]`, () => {
      expect(roundEnds.length, 'every round ran').toBe(ROUNDS + 1);
      expect(findings[name] ?? []).toEqual([]);
    });
  };
  category('contacts', 'contacts: every live contact equals the CRM, column by column, after every round');
  category('memberships', 'contact_tags and contact_lists equal the CRM memberships after every round');
  category('tombstones', 'contacts deleted in the CRM are tombstoned with their last fields, and their history closed');
  category('history', 'contacts_history: one version per change a sync saw, the open version equals contacts');
  category('history intervals', 'contacts_history: versions of a contact neither overlap nor leave gaps');
  for (const s of SMALL) category(s, `${s}: equal to the CRM after every round, deleted rows tombstoned`);
  category('sync figures', "each run's _sync_runs figures and summary equal what changed in its round");
  category('views', 'contacts_current and tag_list_member_counts agree with the CRM after every round');
});
