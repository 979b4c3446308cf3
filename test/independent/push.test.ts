/**
 * `crmsync push` as a user runs it (docs/push.md), against push-server.ts: a CRM written from the
 * interface specification alone. What the CRM received is judged from the server's side, what
 * crmsync recorded from its ledger.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Buffer } from 'node:buffer';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../cli/run-cli.js';
import { startPushServer, type PushServer, type RecordedRequest } from './push-server.js';

const USER = 'api-manager';
const PASSWORD = 'abcd EFGH 1234 ijkl MNOP 5678';
const ROWS = 36;
const REJECTED = 'reject.me@example.test';
const RETRY_AFTER_S = 1;
const MAX_PER_SECOND = 5;

const TAGS = [
  { id: 1, title: 'VIP', slug: 'vip' },
  { id: 2, title: 'Newsletter Reader', slug: 'newsletter-reader' },
  { id: 3, title: 'Webinar 2026', slug: 'webinar-2026' },
  // More tags than crmsync's page size (500): the spec's GET /tags answers one plain array.
  ...Array.from({ length: 600 }, (_, i) => ({ id: 10 + i, title: `Filler ${10 + i}`, slug: `filler-${10 + i}` })),
];
const LISTS = [
  { id: 1, title: 'Customers', slug: 'customers' },
  { id: 2, title: 'Prospects', slug: 'prospects' },
];
const FIELDS = [
  { field_key: 'single-select', type: 'select-one' as const, label: 'Favorite Color', slug: 'favorite_color', options: ['Red', 'Green', 'Blue'] },
  { field_key: 'number', type: 'number' as const, label: 'Membership Number', slug: 'membership_number' },
  { field_key: 'date', type: 'date' as const, label: 'Renewal Date', slug: 'renewal_date' },
  { field_key: 'checkbox', type: 'checkbox' as const, label: 'Interests', slug: 'interests', options: ['Books', 'Music', 'Travel'] },
];

interface SourceRow {
  email: string;
  status: string;
  first_name: string | null;
  last_name: string | null;
  phone: string | null;
  city: string | null;
  postal_code: string | null;
  date_of_birth: string | null;
  tags: string | null;
  lists: string[] | null;
  cf_membership_number: number | null;
  cf_favorite_color: string | null;
  cf_renewal_date: string | null;
  custom_values: string | null;
}

function sourceRows(): SourceRow[] {
  const rows: SourceRow[] = [];
  for (let i = 0; i < ROWS; i++) {
    rows.push({
      email: i % 7 === 3 ? `Mixed.Case${i}@Example.TEST` : `person${i}@example.test`,
      status: i % 5 === 0 ? 'Pending' : i % 9 === 0 ? 'unsubscribed' : 'subscribed',
      first_name: `Ann ${i}`,
      last_name: i % 4 === 0 ? null : `O'Brien "${i}"`,
      phone: i % 3 === 0 ? `+1-555-01${String(i).padStart(2, '0')}` : null,
      city: i % 2 === 0 ? 'Zürich' : '',
      postal_code: `0${1000 + i}`,
      date_of_birth: i % 6 === 0 ? null : `19${70 + (i % 30)}-0${1 + (i % 9)}-1${i % 10}`,
      tags: i % 2 === 0 ? 'VIP, newsletter-reader' : i % 3 === 0 ? '3' : i === 35 ? 'Filler 599' : null,
      lists: i % 4 === 1 ? ['Customers', 'prospects'] : null,
      cf_membership_number: i % 3 === 1 ? 4000 + i : null,
      cf_favorite_color: i % 5 === 2 ? 'Blue' : null,
      cf_renewal_date: i % 4 === 2 ? `2027-0${1 + (i % 9)}-2${i % 8}` : null,
      custom_values: i % 6 === 5 ? JSON.stringify({ interests: ['Books', 'Travel'] }) : null,
    });
  }
  rows.push({ ...rows[1]!, email: REJECTED, first_name: 'Rejected' });
  return rows;
}

function sqlText(v: string | null): string {
  return v === null ? 'NULL' : `'${v.replace(/'/g, "''")}'`;
}

async function writeSource(dbPath: string, rows: SourceRow[]): Promise<void> {
  const instance = await DuckDBInstance.create(dbPath);
  const con = await instance.connect();
  await con.run(`CREATE TABLE marketing_upserts (email VARCHAR, status VARCHAR, first_name VARCHAR, last_name VARCHAR, phone VARCHAR, city VARCHAR,
    postal_code VARCHAR, date_of_birth DATE, tags VARCHAR, lists VARCHAR[], cf_membership_number INTEGER, cf_favorite_color VARCHAR,
    cf_renewal_date DATE, custom_values VARCHAR, analyst_note VARCHAR)`);
  const values = rows
    .map(
      (r) =>
        `(${sqlText(r.email)}, ${sqlText(r.status)}, ${sqlText(r.first_name)}, ${sqlText(r.last_name)}, ${sqlText(r.phone)}, ${sqlText(r.city)}, ${sqlText(r.postal_code)}, ` +
        `${r.date_of_birth === null ? 'NULL' : `DATE '${r.date_of_birth}'`}, ${sqlText(r.tags)}, ${r.lists === null ? 'NULL' : `[${r.lists.map(sqlText).join(', ')}]`}, ` +
        `${r.cf_membership_number ?? 'NULL'}, ${sqlText(r.cf_favorite_color)}, ${r.cf_renewal_date === null ? 'NULL' : `DATE '${r.cf_renewal_date}'`}, ${sqlText(r.custom_values)}, 'ignore me')`,
    )
    .join(',\n');
  await con.run(`INSERT INTO marketing_upserts VALUES ${values}`);
  con.closeSync();
  instance.closeSync();
}

async function readTable(dbPath: string, sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(dbPath, { access_mode: 'READ_ONLY' });
  const con = await instance.connect();
  try {
    const reader = await con.runAndReadAll(sql);
    return reader.getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    con.closeSync();
    instance.closeSync();
  }
}

/** The body the spec wants for a source row: strings, YYYY-MM-DD, tag and list ids, custom values as strings. */
function expectedStored(r: SourceRow): Record<string, unknown> {
  const tagIds = (text: string | null): number[] =>
    text === null
      ? []
      : text
          .split(',')
          .map((s) => s.trim().toLowerCase())
          .map((s) => (/^\d+$/.test(s) ? Number(s) : TAGS.find((t) => t.title.toLowerCase() === s || t.slug === s)!.id));
  const cv: Record<string, string | string[]> = {};
  if (r.custom_values) Object.assign(cv, JSON.parse(r.custom_values));
  if (r.cf_membership_number !== null) cv.membership_number = String(r.cf_membership_number);
  if (r.cf_favorite_color !== null) cv.favorite_color = r.cf_favorite_color;
  if (r.cf_renewal_date !== null) cv.renewal_date = r.cf_renewal_date;
  const out: Record<string, unknown> = { email: r.email, status: r.status.toLowerCase() };
  for (const f of ['first_name', 'last_name', 'phone', 'city', 'postal_code', 'date_of_birth'] as const) if (r[f] !== null && r[f] !== '') out[f] = r[f];
  const tags = tagIds(r.tags);
  if (tags.length) out.tags = tags.sort((a, b) => a - b);
  const lists = (r.lists ?? []).map((s) => LISTS.find((l) => l.title.toLowerCase() === s.toLowerCase() || l.slug === s.toLowerCase())!.id);
  if (lists.length) out.lists = lists.sort((a, b) => a - b);
  if (Object.keys(cv).length) out.custom_values = cv;
  return out;
}

const SLACK_MS = 250;
const FIVE_XX_EMAIL = 'person20@example.test';
/** Spec, Contacts, "Create body": the fields a create may carry. */
const CREATE_FIELDS = new Set([
  'email',
  'status',
  'first_name',
  'last_name',
  'phone',
  'address_line_1',
  'address_line_2',
  'city',
  'state',
  'country',
  'postal_code',
  'date_of_birth',
  'tags',
  'lists',
  'custom_values',
  '__force_update',
]);

function cliEnv(server: PushServer, dir: string, password = PASSWORD): Record<string, string> {
  return {
    CRM_BASE_URL: server.baseUrl,
    CRM_USERNAME: USER,
    CRM_PASSWORD: password,
    CRMSYNC_DB: join(dir, 'crm.duckdb'),
    CRMSYNC_LAKE: join(dir, 'lake'),
    CRMSYNC_DATA_DIR: dir,
    CRMSYNC_EMBEDDED_IDLE: '0',
  };
}

function serverOptions(): Parameters<typeof startPushServer>[0] {
  return {
    username: USER,
    password: PASSWORD,
    tags: TAGS,
    lists: LISTS,
    fields: FIELDS,
    maxPerSecond: MAX_PER_SECOND,
    retryAfterSeconds: RETRY_AFTER_S,
    inject429AtPost: [3, 11],
    inject500ForEmail: FIVE_XX_EMAIL,
    rejectEmails: { [REJECTED]: { field: 'phone', message: 'The phone field must be a valid phone number.' } },
  };
}

const lower = (e: unknown): string => String(e).toLowerCase();
const emailOf = (r: RecordedRequest): string => lower((r.body as { email?: unknown } | undefined)?.email);
const ok = (r: RecordedRequest): boolean => r.status !== undefined && r.status >= 200 && r.status < 300;

function normalisedBody(body: unknown): Record<string, unknown> {
  const b = { ...(body as Record<string, unknown>) };
  delete b.__force_update;
  for (const k of ['tags', 'lists']) if (Array.isArray(b[k])) b[k] = [...(b[k] as number[])].sort((x, y) => x - y);
  return b;
}

describe('crmsync push against a CRM written from the spec', () => {
  const dirs: string[] = [];
  const servers: PushServer[] = [];
  let dir: string;
  let server: PushServer;
  let first: CliResult;
  let firstRequests: RecordedRequest[];
  let rows: SourceRow[];
  let ledger: Record<string, unknown>[];
  let runs: Record<string, unknown>[];
  let deadLetters: Record<string, unknown>[];
  const posts = (list: RecordedRequest[]): RecordedRequest[] => list.filter((r) => r.method === 'POST' && r.path === '/subscribers');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'crmsync-independent-push-'));
    dirs.push(dir);
    rows = sourceRows();
    server = await startPushServer(serverOptions());
    servers.push(server);
    await writeSource(join(dir, 'crm.duckdb'), rows);
    first = await runCli(['push', '--from', 'marketing_upserts'], cliEnv(server, dir), 60_000);
    firstRequests = [...server.requests];
    ledger = await readTable(join(dir, 'crm.duckdb'), 'SELECT * FROM _push_ledger');
    runs = await readTable(join(dir, 'crm.duckdb'), 'SELECT * FROM _push_runs');
    deadLetters = await readTable(join(dir, 'crm.duckdb'), 'SELECT * FROM push_dead_letters');
  }, 75_000);

  afterAll(async () => {
    for (const s of servers) await s.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('finishes the push and reports every row (exit 1: one row was refused)', () => {
    expect(first.code, first.stderr.slice(-2000)).toBe(1);
    expect(first.stdout).toMatch(/sent 37\s+succeeded 36\s+failed 1/);
  });

  it('authenticates every request with HTTP Basic base64(username:application_password), never in the URL (spec, Authentication 1, 4)', () => {
    const expected = 'Basic ' + Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
    expect(firstRequests.length).toBeGreaterThan(0);
    for (const r of firstRequests) {
      expect(r.headers.authorization).toBe(expected);
      expect(r.query.has('_host_http_referer')).toBe(false);
    }
    expect(firstRequests.filter((r) => r.status === 401 || r.status === 403)).toEqual([]);
  });

  it('calls only endpoints the spec defines, and none of them 404s', () => {
    const routes = new Set(firstRequests.map((r) => `${r.method} ${r.path}`));
    for (const route of routes) expect(['GET /custom-fields/contacts', 'GET /tags', 'GET /lists', 'POST /subscribers']).toContain(route);
    expect(firstRequests.filter((r) => r.status === 404)).toEqual([]);
  });

  it('sends each create as JSON with __force_update (boolean true or the string "yes") and only the create fields (spec, Contacts, Create body)', () => {
    for (const r of posts(firstRequests)) {
      expect(r.headers['content-type']).toMatch(/^application\/json\b/);
      expect([true, 'yes']).toContain((r.body as Record<string, unknown>).__force_update);
      for (const key of Object.keys(r.body as object)) expect(CREATE_FIELDS.has(key), `unexpected field ${key}`).toBe(true);
    }
    expect(server.notes).toEqual([]);
  });

  it('encodes every field as the spec wants: strings, YYYY-MM-DD dates, tag and list ids, custom values as strings or arrays of strings', () => {
    for (const row of rows.filter((r) => r.email !== REJECTED)) {
      const landed = posts(firstRequests).filter((r) => emailOf(r) === lower(row.email) && ok(r));
      expect(landed, row.email).toHaveLength(1);
      expect(normalisedBody(landed[0]!.body)).toEqual(expectedStored(row));
    }
    // The tag named only past the first 500 (crmsync pages GET /tags; the spec's answer is one array).
    const filler = posts(firstRequests).find((r) => emailOf(r) === 'person35@example.test' && ok(r));
    expect((filler?.body as { tags?: number[] }).tags).toEqual([599]);
  });

  it('lands every valid row exactly once in effect, and the CRM holds exactly them', () => {
    const valid = rows.filter((r) => r.email !== REJECTED);
    for (const row of valid)
      expect(
        posts(firstRequests).filter((r) => emailOf(r) === lower(row.email) && ok(r)),
        row.email,
      ).toHaveLength(1);
    expect([...server.contacts.keys()].sort()).toEqual(valid.map((r) => lower(r.email)).sort());
    // The row the CRM refused with 422 is not sent again in the same run: a validation error is final.
    const refused = posts(firstRequests).filter((r) => emailOf(r) === REJECTED);
    expect(refused.map((r) => r.status)).toEqual([422]);
    // The row that met the 5xx was sent again and landed.
    expect(
      posts(firstRequests)
        .filter((r) => emailOf(r) === FIVE_XX_EMAIL && r.status !== 429)
        .map((r) => r.status),
    ).toEqual([500, 200]);
  });

  it("waits out every Retry-After: no request starts within a 429 answer's Retry-After", () => {
    const limited = firstRequests.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(2); // the two injected ones at least
    for (const l of limited) {
      const from = l.respondedAt! + SLACK_MS;
      const until = l.respondedAt! + l.retryAfter! * 1000 - 50;
      const early = firstRequests.filter((r) => r.arrivedAt > from && r.arrivedAt < until);
      expect(early.map((r) => `#${r.seq} ${Math.round(r.arrivedAt - l.respondedAt!)} ms after the 429 #${l.seq}`)).toEqual([]);
    }
  });

  it('keeps to the rate limit it learns: rate-limited answers are a minority of requests', () => {
    const byLimiter = firstRequests.filter((r) => r.reason === 'rate_limit').length;
    expect(byLimiter / posts(firstRequests).length).toBeLessThanOrEqual(0.25);
  });

  it('after the 5xx starts no more than the rows already in progress (16 at most) before the batch is retried', () => {
    const all = posts(firstRequests);
    const fiveXX = all.findIndex((r) => r.status === 500);
    expect(fiveXX).toBeGreaterThanOrEqual(0);
    const seenBefore = new Set(all.slice(0, fiveXX + 1).map(emailOf));
    const after = all.slice(fiveXX + 1);
    const firstResend = after.findIndex((r) => seenBefore.has(emailOf(r)));
    expect(firstResend).toBeGreaterThanOrEqual(0);
    expect(firstResend).toBeLessThanOrEqual(15);
  });

  it('records per row in the ledger what the CRM answered', () => {
    expect(ledger).toHaveLength(37);
    for (const row of rows.filter((r) => r.email !== REJECTED)) {
      const l = ledger.find((x) => x.push_key === lower(row.email));
      const stored = server.contacts.get(lower(row.email))!;
      expect(l, row.email).toMatchObject({ outcome: 'succeeded', http_status: 200, action_type: 'created', contact_id: String(stored.id) });
      expect(l!.pushed_fingerprint).toBe(l!.fingerprint);
    }
    const refused = ledger.find((x) => x.push_key === REJECTED)!;
    // Spec, Errors: "422 | validation failed; the message names the field".
    expect(refused).toMatchObject({ outcome: 'failed', http_status: 422, retryable: false, pushed_fingerprint: null, error_field: 'phone' });
    expect(String(refused.error_message)).toContain('The phone field must be a valid phone number.');
    expect(deadLetters.map((d) => lower(d.email))).toEqual([REJECTED]);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'succeeded', rows_read: 37, planned_new: 37, sent: 37, succeeded: 36, failed: 1 });
  });

  describe('a second run of the same source, and a push with wrong credentials (run side by side)', () => {
    let again: CliResult;
    let againRequests: RecordedRequest[];
    let againLedger: Record<string, unknown>[];
    let againRuns: Record<string, unknown>[];
    let denied: CliResult;
    let other: PushServer;

    beforeAll(async () => {
      const otherDir = mkdtempSync(join(tmpdir(), 'crmsync-independent-push-401-'));
      dirs.push(otherDir);
      other = await startPushServer(serverOptions());
      servers.push(other);
      await writeSource(join(otherDir, 'crm.duckdb'), rows);
      [again, denied] = await Promise.all([
        runCli(['push', '--from', 'marketing_upserts'], cliEnv(server, dir), 60_000),
        runCli(['push', '--from', 'marketing_upserts'], cliEnv(other, otherDir, 'wrong password 0000'), 60_000),
      ]);
      againRequests = server.requests.slice(firstRequests.length);
      againLedger = await readTable(join(dir, 'crm.duckdb'), `SELECT * FROM _push_ledger WHERE push_key = '${REJECTED}'`);
      againRuns = await readTable(join(dir, 'crm.duckdb'), 'SELECT * FROM _push_runs');
    }, 75_000);

    it('plans only the refused row again (retry 1, unchanged 36) and sends none of the pushed rows again', () => {
      expect(again.stdout).toMatch(/retry 1\s+unchanged 36/);
      expect(posts(againRequests).filter((r) => emailOf(r) !== REJECTED)).toEqual([]);
    });

    // docs/push.md, Plan: "`retry` | yes: the last attempt failed; failures are retried on every run
    // until they succeed". Each start of a push is a run of its own (the workflow id and the start
    // time), so the row that failed in the first run is sent again, not taken as finished.
    it('(docs/push.md Plan, retry): a second run actually re-sends the failed row to the CRM', () => {
      expect(posts(againRequests).map(emailOf)).toEqual([REJECTED]);
    });

    it('(docs/push.md Ledger): the failed row counts a second consecutive failure after the second run', () => {
      expect(againLedger[0]).toMatchObject({ outcome: 'failed', failures: 2 });
    });

    it('(docs/push.md Ledger and views: "_push_runs: one row per run"): two runs leave two rows in _push_runs', () => {
      expect(againRuns).toHaveLength(2);
    });

    it('stops on 401 (spec, Authentication 10: invalid credentials give 401) naming the fix, without the password', () => {
      expect(denied.code).toBe(1);
      expect(denied.stderr).toMatch(/CRM_UNAUTHORIZED/);
      expect(denied.stderr + denied.stdout).not.toContain('wrong password 0000');
      expect(posts(other.requests).length).toBeLessThanOrEqual(16);
      expect(other.contacts.size).toBe(0);
    });
  });
});
