/**
 * `crmsync push` as a user runs it (the compiled CLI, docs/push.md), against real-push-server.ts: a
 * CRM that answers as the captured FluentCRM 2.9 deployment does (../shared/fixtures/fluentcrm-2.9/),
 * not as the written interface says. The analyst's source is a DuckDB table made as docs/push.md,
 * "Source columns", describes; what the CRM ends up holding is judged from the server's records,
 * what crmsync recorded from `_push_ledger`, `_push_runs` and `push_dead_letters`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBuiltCli } from './built-cli.js';
import { PASSWORD, USER, specServerCliEnv } from './spec-server.js';
import { startRealPushServer, type RealContact, type RealPushServer, type RealRequest, type RealPushServerOptions } from './real-push-server.js';

type CliResult = Awaited<ReturnType<typeof runBuiltCli>>;
const CLI_TIMEOUT = 150_000;
const DOCS = readFileSync(fileURLToPath(new URL('../../docs/push.md', import.meta.url)), 'utf8');

// The captured site's tags (GET_tags.json) and enough more that a reader of only the first page
// (15 by default on the real site, or one request of a few hundred) misses some.
const TAGS = [
  { id: 1, title: 'VIP', slug: 'vip', description: 'High value contacts' },
  { id: 2, title: 'Newsletter Reader', slug: 'newsletter-reader', description: 'Opens the weekly newsletter' },
  { id: 3, title: 'Webinar 2026', slug: 'webinar-2026', description: 'Registered for the 2026 webinar' },
  ...Array.from({ length: 530 }, (_, i) => ({ id: 4 + i, title: `Segment ${4 + i}`, slug: `segment-${4 + i}` })),
];
const LISTS = [
  { id: 1, title: 'Customers', slug: 'customers', description: 'Paying customers' },
  { id: 2, title: 'Prospects', slug: 'prospects', description: 'Leads in the pipeline' },
  { id: 3, title: 'Partners', slug: 'partners', description: 'Agency and reseller partners' },
];
// GET_custom-fields_contacts.json, plus a checkbox field.
const FIELDS = [
  { label: 'Favorite Color', slug: 'favorite_color', type: 'select-one', field_key: 'single-select', options: ['Red', 'Green', 'Blue'], group: 'default' },
  { label: 'Membership Number', slug: 'membership_number', type: 'number', field_key: 'number', group: 'default' },
  { label: 'Renewal Date', slug: 'renewal_date', type: 'date', field_key: 'date', group: 'default' },
  { label: 'Interests', slug: 'interests', type: 'checkbox', field_key: 'checkbox', options: ['Books', 'Music', 'Travel'], group: 'default' },
];
// Contacts of the captured site (GET_subscribers_0_get_by_email, POST_subscribers_force_update_*).
const SEEDED: RealPushServerOptions['contacts'] = [
  {
    id: 1,
    email: 'ada.lovelace1@example.test',
    status: 'unsubscribed',
    first_name: 'Ada',
    last_name: 'Lovelace',
    city: 'Berlin',
    country: 'DE',
    phone: '+1-555-0100',
    tags: [1, 2],
    lists: [1],
    custom_values: { favorite_color: 'Red', membership_number: '1000', renewal_date: '2026-01-15' },
  },
  {
    id: 2,
    email: 'grace.ritchie2@example.test',
    status: 'subscribed',
    first_name: 'Grace',
    last_name: 'Ritchie',
    city: 'Porto',
    country: 'PT',
    phone: '+1-555-0101',
    company_id: '1',
    tags: [1, 2],
    custom_values: { favorite_color: 'Red' },
  },
  { id: 3, email: 'alan.knuth3@example.test', status: 'bounced', first_name: 'Alan', last_name: 'Knuth', city: 'Austin', country: 'US', phone: '+1-555-0102', company_id: '1' },
  { id: 16, email: 'sophie.thompson16@example.test', status: 'subscribed', first_name: 'Sophie', last_name: 'Thompson', city: 'Toronto', country: 'CA', phone: '+1-555-0115' },
];

interface Row {
  email: string | null;
  status: string | null;
  first_name?: string | null;
  last_name?: string | null;
  phone?: string | null;
  address_line_1?: string | null;
  city?: string | null;
  postal_code?: string | null;
  country?: string | null;
  date_of_birth?: string | null;
  tags?: string | null;
  lists?: string[] | null;
  cf_membership_number?: number | null;
  cf_favorite_color?: string | null;
  custom_values?: string | null;
}

const SQL_ERROR_EMAIL = 'sql.error@example.test';
const SQL_ERROR = "SQLSTATE[22001]: String data, right truncated: 1406 Data too long for column 'phone' at row 1 (SQL: insert into `wp_fc_subscribers` (`email`, `status`, `phone`) values (...))";
const UNICODE_EMAIL = 'jürgen@example.test';
const NEW_ROWS = 12;
const CV_ONLY_EMAIL = 'cv.only@example.test';
const REFUSED_EMAIL = 'refused.by.site@example.test';
const REFUSED_MESSAGE = 'The email must be a valid email address.';
const TAG_CHANGED_EMAIL = 'new1@example.test';

/** Rows docs/push.md, "Local checks", says are never sent, with the field the rejection names. */
const LOCALLY_INVALID: Array<{ row: Row; field: RegExp; key: string }> = [
  { row: { email: 'typo.status@example.test', status: 'subscirbed', first_name: 'Typo' }, field: /^status$/, key: 'typo.status@example.test' },
  { row: { email: 'no.status@example.test', status: null, first_name: 'NoStatus' }, field: /^status$/, key: 'no.status@example.test' },
  { row: { email: 'not-an-email', status: 'subscribed' }, field: /^email$/, key: 'not-an-email' },
  { row: { email: 'Dup.Person@example.test', status: 'subscribed', first_name: 'First' }, field: /^email$/, key: 'dup.person@example.test' },
  { row: { email: 'dup.person@EXAMPLE.test', status: 'pending', first_name: 'Second' }, field: /^email$/, key: 'dup.person@example.test' },
  { row: { email: 'unknown.tag@example.test', status: 'subscribed', tags: 'No Such Tag' }, field: /^tags/, key: 'unknown.tag@example.test' },
  { row: { email: 'unknown.tagid@example.test', status: 'subscribed', tags: '9999' }, field: /^tags/, key: 'unknown.tagid@example.test' },
  { row: { email: 'unknown.list@example.test', status: 'subscribed', lists: ['Nope'] }, field: /^lists/, key: 'unknown.list@example.test' },
  { row: { email: 'unknown.field@example.test', status: 'subscribed', custom_values: '{"not_a_field": "x"}' }, field: /not_a_field/, key: 'unknown.field@example.test' },
  { row: { email: 'purple@example.test', status: 'subscribed', cf_favorite_color: 'Purple' }, field: /favorite_color/, key: 'purple@example.test' },
  { row: { email: 'bad.date@example.test', status: 'subscribed', custom_values: '{"renewal_date": "2027-02-30"}' }, field: /renewal_date/, key: 'bad.date@example.test' },
  { row: { email: 'bad.birthday@example.test', status: 'subscribed', date_of_birth: '1990-13-01' }, field: /^date_of_birth$/, key: 'bad.birthday@example.test' },
  { row: { email: 'long.name@example.test', status: 'subscribed', first_name: 'x'.repeat(256) }, field: /^first_name$/, key: 'long.name@example.test' },
];
const INVALID_KEYS = [...new Set(LOCALLY_INVALID.map((x) => x.key))];

function newRow(i: number): Row {
  const statuses = ['subscribed', 'Pending', 'unsubscribed', 'SUBSCRIBED'];
  const tagCells = ['VIP, segment-30', '510', 'Segment 530, Newsletter Reader', null];
  return {
    email: i === 2 ? `New${i}@Example.TEST` : `new${i}@example.test`,
    status: statuses[i % 4]!,
    first_name: `Zoë ${i}`,
    last_name: i % 3 === 0 ? null : `O'Neil "${i}"`,
    phone: i % 2 === 0 ? `+49 30 1234${i}` : '',
    address_line_1: i % 5 === 0 ? `Hauptstraße ${i}` : null,
    city: i % 2 === 1 ? 'Zürich' : null,
    postal_code: `0${1000 + i}`,
    country: i % 2 === 0 ? 'DE' : null,
    date_of_birth: i % 3 === 1 ? `198${i % 10}-0${1 + (i % 9)}-2${i % 9}` : null,
    tags: tagCells[(i - 1) % 4]!,
    lists: i % 3 === 0 ? ['customers'] : i % 3 === 1 ? ['Partners', 'prospects'] : null,
    cf_membership_number: i % 2 === 0 ? 5000 + i : null,
    cf_favorite_color: i % 4 === 3 ? 'Blue' : null,
    custom_values: i % 3 === 2 ? '{"interests": ["Books", "Travel"], "renewal_date": "2027-03-31"}' : null,
  };
}

function sourceRows(): Row[] {
  return [
    // Existing contacts, upserted (the force-update captures' cases).
    { email: 'Grace.Ritchie2@Example.TEST', status: 'subscribed', first_name: 'Grace', last_name: null, city: '', tags: 'Webinar 2026', cf_favorite_color: 'Green' },
    { email: 'ada.lovelace1@example.test', status: 'unsubscribed', last_name: 'Byron', lists: ['prospects'], custom_values: '{"renewal_date": "2027-01-15"}' },
    { email: 'alan.knuth3@example.test', status: 'Subscribed', first_name: 'Alan' },
    { email: 'sophie.thompson16@example.test', status: 'pending', first_name: 'Sophie' },
    ...Array.from({ length: NEW_ROWS }, (_, i) => newRow(i + 1)),
    ...LOCALLY_INVALID.map((x) => x.row),
    { email: UNICODE_EMAIL, status: 'subscribed', first_name: 'Jürgen' },
    // Custom values only in custom_values, while the table also has cf_ columns for those slugs (NULL here).
    { email: CV_ONLY_EMAIL, status: 'subscribed', first_name: 'Cv', custom_values: '{"membership_number": 1001, "favorite_color": "Green"}' },
    // Database trouble on the CRM's side (423: any database exception) and a PHP fatal (500).
    { email: 'deadlock@example.test', status: 'subscribed', first_name: 'Dead', tags: 'VIP' },
    { email: 'lockwait@example.test', status: 'pending', first_name: 'Lock' },
    { email: SQL_ERROR_EMAIL, status: 'subscribed', first_name: 'Sql', phone: '+1-555-0199' },
    { email: 'fatal@example.test', status: 'subscribed', first_name: 'Fatal', lists: ['Customers'] },
    // Valid by crmsync's checks, refused by the site's own validation (422, the captured bare map).
    { email: REFUSED_EMAIL, status: 'subscribed', first_name: 'Refused' },
  ];
}

const sqlText = (v: string | null | undefined): string => (v === null || v === undefined ? 'NULL' : `'${v.replace(/'/g, "''")}'`);

async function withDb<T>(dbPath: string, readOnly: boolean, fn: (run: (sql: string) => Promise<Record<string, unknown>[]>) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(dbPath, readOnly ? { access_mode: 'READ_ONLY' } : {});
  const con = await instance.connect();
  try {
    return await fn(async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[]);
  } finally {
    con.closeSync();
    instance.closeSync();
  }
}

async function writeSource(dbPath: string, rows: Row[]): Promise<void> {
  await withDb(dbPath, false, async (run) => {
    await run(`CREATE TABLE marketing_upserts (email VARCHAR, status VARCHAR, first_name VARCHAR, last_name VARCHAR, phone VARCHAR, address_line_1 VARCHAR,
      city VARCHAR, postal_code VARCHAR, country VARCHAR, date_of_birth VARCHAR, tags VARCHAR, lists VARCHAR[], cf_membership_number INTEGER,
      cf_favorite_color VARCHAR, custom_values VARCHAR, analyst_note VARCHAR)`);
    const values = rows.map(
      (r) =>
        `(${sqlText(r.email)}, ${sqlText(r.status)}, ${sqlText(r.first_name)}, ${sqlText(r.last_name)}, ${sqlText(r.phone)}, ${sqlText(r.address_line_1)}, ` +
        `${sqlText(r.city)}, ${sqlText(r.postal_code)}, ${sqlText(r.country)}, ${sqlText(r.date_of_birth)}, ${sqlText(r.tags)}, ` +
        `${r.lists ? `[${r.lists.map(sqlText).join(', ')}]` : 'NULL'}, ${r.cf_membership_number ?? 'NULL'}, ${sqlText(r.cf_favorite_color)}, ${sqlText(r.custom_values)}, 'not a CRM column')`,
    );
    await run(`INSERT INTO marketing_upserts VALUES ${values.join(',\n')}`);
  });
}

const readAll = (dbPath: string, sql: string): Promise<Record<string, unknown>[]> => withDb(dbPath, true, (run) => run(sql));

const lower = (s: unknown): string => String(s).toLowerCase();
const posts = (list: RealRequest[]): RealRequest[] => list.filter((r) => r.method === 'POST' && r.path === '/subscribers');
const writes = (list: RealRequest[]): RealRequest[] => list.filter((r) => r.method !== 'GET');
const bodyOf = (r: RealRequest): Record<string, unknown> => (r.body ?? {}) as Record<string, unknown>;
const emailOf = (r: RealRequest): string => lower(bodyOf(r).email);
const tagIds = (cell: string | null | undefined): number[] =>
  (cell ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '')
    .map((s) => (/^\d+$/.test(s) ? Number(s) : TAGS.find((t) => t.title.toLowerCase() === s || t.slug === s)!.id));
const listIds = (cell: string[] | null | undefined): number[] => (cell ?? []).map((s) => LISTS.find((l) => l.title.toLowerCase() === s.toLowerCase() || l.slug === s.toLowerCase())!.id);
const sorted = (xs: number[]): number[] => [...xs].sort((a, b) => a - b);

/**
 * What the CRM must hold for a row after an upsert, by docs/push.md ("Source columns" and "What the
 * CRM does with an upsert"): every non-empty cell lands; empty cells leave the field as it was; tags
 * and lists are added to what the contact had; an existing subscribed contact sent pending stays
 * subscribed.
 */
function expectedRecord(row: Row, before: RealContact | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let status = row.status!.toLowerCase();
  if (before?.status === 'subscribed' && status === 'pending') status = 'subscribed';
  out.status = status;
  for (const f of ['first_name', 'last_name', 'phone', 'address_line_1', 'city', 'postal_code', 'country', 'date_of_birth'] as const) {
    const v = row[f];
    out[f] = v !== null && v !== undefined && v !== '' ? v : (before?.[f] ?? null);
  }
  out.tags = sorted([...new Set([...(before?.tags ?? []), ...tagIds(row.tags)])]);
  out.lists = sorted([...new Set([...(before?.lists ?? []), ...listIds(row.lists)])]);
  const cv: Record<string, unknown> = { ...(before?.custom_values ?? {}) };
  if (row.custom_values) for (const [k, v] of Object.entries(JSON.parse(row.custom_values) as Record<string, unknown>)) cv[k] = Array.isArray(v) ? v : String(v);
  if (row.cf_membership_number !== null && row.cf_membership_number !== undefined) cv.membership_number = String(row.cf_membership_number);
  if (row.cf_favorite_color) cv.favorite_color = row.cf_favorite_color;
  out.custom_values = cv;
  return out;
}

function heldRecord(c: RealContact | undefined): Record<string, unknown> | undefined {
  if (!c) return undefined;
  const out: Record<string, unknown> = { status: c.status };
  for (const f of ['first_name', 'last_name', 'phone', 'address_line_1', 'city', 'postal_code', 'country', 'date_of_birth'] as const) out[f] = c[f];
  out.tags = sorted(c.tags);
  out.lists = sorted(c.lists);
  out.custom_values = { ...c.custom_values };
  return out;
}

function serverOptions(): RealPushServerOptions {
  return {
    admin: { username: USER, password: PASSWORD },
    editor: { username: 'editor1', password: 'edit or12 pass word' },
    tags: TAGS,
    lists: LISTS,
    fields: FIELDS,
    contacts: structuredClone(SEEDED),
    deadlock: { 'deadlock@example.test': { times: 1, kind: 'deadlock' }, 'lockwait@example.test': { times: 1, kind: 'lock_wait' } },
    sqlError: new Map([[SQL_ERROR_EMAIL, SQL_ERROR]]),
    fatal: { 'fatal@example.test': 1 },
    refuse: { [REFUSED_EMAIL]: { email: { email: REFUSED_MESSAGE } } },
    latencyMs: 3,
  };
}

describe('crmsync push against a CRM that answers as the captured FluentCRM 2.9 site does', () => {
  const dirs: string[] = [];
  const servers: RealPushServer[] = [];
  let dir: string;
  let db: string;
  let server: RealPushServer;
  let rows: Row[];
  let before: Map<string, RealContact>;
  let dry: CliResult;
  let dryRequests: RealRequest[];
  let first: CliResult;
  let firstRequests: RealRequest[];
  let ledger: Record<string, unknown>[];
  let runs: Record<string, unknown>[];
  let deadLetters: Record<string, unknown>[];
  const ledgerOf = (key: string): Record<string, unknown> | undefined => ledger.find((l) => l.push_key === key);
  const unicodeLedger = (): Record<string, unknown> | undefined => ledger.find((l) => lower(l.push_key) === UNICODE_EMAIL || lower(l.email) === UNICODE_EMAIL);
  /** Rows crmsync may send: not invalid by the local checks (the unicode email is judged separately). */
  const validRows = (): Row[] => rows.filter((r) => !INVALID_KEYS.includes(lower(r.email)) && lower(r.email) !== UNICODE_EMAIL);

  beforeAll(
    async () => {
      dir = mkdtempSync(join(tmpdir(), 'crmsync-independent-real-push-'));
      dirs.push(dir);
      db = join(dir, 'crm.duckdb');
      rows = sourceRows();
      server = await startRealPushServer(serverOptions());
      servers.push(server);
      before = new Map([...server.contacts].map(([k, c]) => [k, structuredClone(c)]));
      await writeSource(db, rows);
      const env = specServerCliEnv(server.baseUrl, dir, 'UTC');
      dry = await runBuiltCli(['push', '--from', 'marketing_upserts', '--dry-run', '--sample', '50'], env, dir, CLI_TIMEOUT);
      dryRequests = [...server.requests];
      first = await runBuiltCli(['push', '--from', 'marketing_upserts'], env, dir, CLI_TIMEOUT);
      firstRequests = server.requests.slice(dryRequests.length);
      ledger = await readAll(db, "SELECT * FROM _push_ledger WHERE source = 'marketing_upserts'");
      runs = await readAll(db, 'SELECT * FROM _push_runs');
      deadLetters = await readAll(db, 'SELECT * FROM push_dead_letters');
    },
    2 * CLI_TIMEOUT + 30_000,
  );

  afterAll(async () => {
    for (const s of servers) await s.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  describe('--dry-run (docs/push.md: "counts by action and a sample, nothing sent"; "a dry run that finds invalid rows exits 1")', () => {
    it('sends nothing that writes, and exits 1 because rows are invalid', () => {
      expect(dry.code, dry.stderr.slice(-2000)).toBe(1);
      expect(writes(dryRequests)).toEqual([]);
      expect([...server.contacts.keys()].length).toBeGreaterThan(0);
    });

    it('counts every source row once: all new or invalid (nothing was pushed before)', () => {
      const m = /new (\d+)\s+changed (\d+)\s+retry (\d+)\s+unchanged (\d+)\s+invalid (\d+)/.exec(dry.stdout);
      expect(m, dry.stdout).not.toBeNull();
      const [n, changed, retry, unchanged, invalid] = m!.slice(1).map(Number) as [number, number, number, number, number];
      expect({ changed, retry, unchanged }).toEqual({ changed: 0, retry: 0, unchanged: 0 });
      expect(n + invalid).toBe(rows.length);
      // The locally invalid rows (both duplicates count), and perhaps the unicode email.
      expect(invalid === LOCALLY_INVALID.length || invalid === LOCALLY_INVALID.length + 1, dry.stdout).toBe(true);
    });
  });

  describe('the push', () => {
    it('finishes and reports the rows (exit 1: some rows were rejected or failed)', () => {
      expect(first.code, first.stderr.slice(-3000)).toBe(1);
      expect(first.stdout).toMatch(/sent \d+\s+succeeded \d+\s+failed \d+/);
    });

    it('sends every upsert as JSON with a __force_update value the real CRM honours ("yes" or JSON true; "true" and 1 give 422 duplicate)', () => {
      expect(posts(firstRequests).length).toBeGreaterThan(0);
      for (const r of posts(firstRequests)) {
        const b = bodyOf(r);
        const forced = b.__force_update === 'yes' || b.__force_update === true || r.query.get('__force_update') === 'yes';
        expect(forced, r.raw).toBe(true);
        expect(String(r.headers['content-type'])).toMatch(/^application\/json/);
      }
      // No upsert of an existing contact met the duplicate 422.
      expect(posts(firstRequests).filter((r) => r.status === 422 && JSON.stringify(r.body).includes('unique'))).toEqual([]);
    });

    it('never sends an empty string (the real CRM ignores it; docs: "Empty and NULL cells are left out of the body") nor a field the CRM would drop', () => {
      for (const r of posts(firstRequests)) {
        for (const [k, v] of Object.entries(bodyOf(r))) expect(v, `${emailOf(r)} ${k}`).not.toBe('');
        const cv = bodyOf(r).custom_values as Record<string, unknown> | undefined;
        for (const slug of Object.keys(cv ?? {})) expect(FIELDS.map((f) => f.slug)).toContain(slug);
        expect(Object.keys(bodyOf(r))).not.toContain('analyst_note');
      }
    });

    it('sends a status the real CRM knows, lower-cased (it stores "Pending" or any unknown value as subscribed)', () => {
      for (const r of posts(firstRequests)) expect(['subscribed', 'unsubscribed', 'pending', 'bounced', 'complained']).toContain(bodyOf(r).status);
    });

    it('sends no locally invalid row (docs/push.md, Local checks: "rows that fail are never sent")', () => {
      const sent = new Set(posts(firstRequests).map(emailOf));
      for (const key of INVALID_KEYS) expect(sent.has(key), key).toBe(false);
    });

    it('leaves each valid row in the CRM as the row asked, by docs/push.md (columns, custom values, tags and lists; upsert merge rules)', () => {
      for (const row of validRows().filter((r) => r.email !== SQL_ERROR_EMAIL && r.email !== CV_ONLY_EMAIL && r.email !== REFUSED_EMAIL)) {
        const key = lower(row.email);
        expect(heldRecord(server.contacts.get(key)), key).toEqual(expectedRecord(row, before.get(key)));
      }
    });

    // docs/push.md, Source columns: "`custom_values` | a JSON object (or JSON text) of custom field slug
    // to value"; "`cf_<slug>` | ... wins over the same slug in `custom_values`"; "Empty and NULL cells are
    // left out of the body". A NULL cf_ cell is left out, so it has nothing to win with: the value in
    // custom_values must reach the CRM (crmsync dropped it without a word until this test).
    it('sends a custom value given in custom_values when the cf_ column of that slug is NULL (docs/push.md, Source columns)', () => {
      expect(server.contacts.get(CV_ONLY_EMAIL)?.custom_values).toEqual({ membership_number: '1001', favorite_color: 'Green' });
    });

    it('updates existing contacts by email whatever its case, without a second contact (the real CRM matches email case-insensitively)', () => {
      expect(server.contacts.get('grace.ritchie2@example.test')?.id).toBe(2);
      expect(ledgerOf('grace.ritchie2@example.test')).toMatchObject({ outcome: 'succeeded', action_type: 'updated', contact_id: '2', http_status: 200 });
      const ids = [...server.contacts.values()].map((c) => c.id);
      expect(new Set(ids).size).toBe(ids.length);
      // Bounced → subscribed is applied by the real CRM.
      expect(server.contacts.get('alan.knuth3@example.test')?.status).toBe('subscribed');
    });

    it('records every source row in _push_ledger (one row per lower-cased email) with its outcome', () => {
      const keys = [...new Set(rows.map((r) => lower(r.email)))];
      expect(ledger).toHaveLength(keys.length);
      for (const row of validRows().filter((r) => r.email !== SQL_ERROR_EMAIL && r.email !== REFUSED_EMAIL)) {
        const key = lower(row.email);
        const stored = server.contacts.get(key)!;
        expect(ledgerOf(key), key).toMatchObject({
          outcome: 'succeeded',
          http_status: 200,
          contact_id: String(stored.id),
          action_type: before.has(key) ? 'updated' : 'created',
        });
        expect(ledgerOf(key)!.pushed_fingerprint).toBe(ledgerOf(key)!.fingerprint);
      }
    });

    it('names the field and the fix of every locally rejected row, and lists them in push_dead_letters', () => {
      for (const { key, field } of LOCALLY_INVALID) {
        const l = ledgerOf(key);
        expect(l, key).toMatchObject({ outcome: 'rejected' });
        expect(String(l!.error_field), key).toMatch(field);
        expect(String(l!.error_message).length, key).toBeGreaterThan(10);
      }
      expect(String(ledgerOf('purple@example.test')!.error_message)).toMatch(/Purple[\s\S]*Red[\s\S]*Green[\s\S]*Blue/);
      const dead = new Set(deadLetters.map((d) => d.push_key));
      for (const key of INVALID_KEYS) expect(dead.has(key), key).toBe(true);
    });

    it("refuses the email the real CRM calls invalid (PHP FILTER_VALIDATE_EMAIL: no non-ASCII) locally or records the CRM's 422, naming the field email", () => {
      const l = unicodeLedger();
      expect(l).toBeDefined();
      expect(['rejected', 'failed']).toContain(l!.outcome);
      expect(l!.error_field).toBe('email');
      if (l!.outcome === 'failed') expect(l).toMatchObject({ http_status: 422, retryable: false });
      expect(server.contacts.has(UNICODE_EMAIL)).toBe(false);
    });

    it("records the real 422 (a bare map {field: {rule: message}}, no code or message) as failed, naming the field and the CRM's words, sent once", () => {
      expect(
        posts(firstRequests)
          .filter((r) => emailOf(r) === REFUSED_EMAIL)
          .map((r) => r.status),
      ).toEqual([422]);
      const l = ledgerOf(REFUSED_EMAIL);
      expect(l).toMatchObject({ outcome: 'failed', http_status: 422, retryable: false, error_field: 'email' });
      expect(String(l!.error_message)).toContain(REFUSED_MESSAGE);
      expect(deadLetters.map((d) => d.push_key)).toContain(REFUSED_EMAIL);
    });

    it('retries a 423 deadlock and a 423 lock wait timeout (docs/sync.md, Errors: CRM_DATABASE_BUSY is retried): both rows land once', () => {
      for (const email of ['deadlock@example.test', 'lockwait@example.test']) {
        const sent = posts(firstRequests).filter((r) => emailOf(r) === email);
        expect(
          sent.map((r) => r.status),
          email,
        ).toEqual([423, 200]);
        expect(ledgerOf(email), email).toMatchObject({ outcome: 'succeeded', http_status: 200 });
      }
    });

    it('retries a PHP fatal (500, JSON or the HTML error page): the row lands', () => {
      const sent = posts(firstRequests).filter((r) => emailOf(r) === 'fatal@example.test');
      expect(sent.map((r) => r.status)).toEqual([500, 200]);
      expect(ledgerOf('fatal@example.test')).toMatchObject({ outcome: 'succeeded', action_type: 'created' });
    });

    it('reports a 423 that is not a lock as final (docs/sync.md: "any other 423 is final"; docs/push.md: the row is failed and the push goes on), sent once', () => {
      const sent = posts(firstRequests).filter((r) => emailOf(r) === SQL_ERROR_EMAIL);
      expect(sent.map((r) => r.status)).toEqual([423]);
      const l = ledgerOf(SQL_ERROR_EMAIL);
      expect(l).toMatchObject({ outcome: 'failed', http_status: 423, retryable: false });
      expect(String(l!.error_message)).toContain('Data too long');
      expect(deadLetters.map((d) => d.push_key)).toContain(SQL_ERROR_EMAIL);
    });

    it('counts the run in _push_runs with the plan and send totals', () => {
      expect(runs).toHaveLength(1);
      const unicodeRejected = unicodeLedger()?.outcome === 'rejected';
      const invalid = LOCALLY_INVALID.length + (unicodeRejected ? 1 : 0);
      const sent = rows.length - invalid;
      const failed = 2 + (unicodeRejected ? 0 : 1);
      expect(runs[0]).toMatchObject({ rows_read: rows.length, planned_new: sent, invalid, sent, succeeded: sent - failed, failed });
    });
  });

  describe('what the real CRM does with __force_update that a user would not expect (docs/push.md must say so, or crmsync must handle it)', () => {
    it('documents that empty cells cannot clear a field, that tags and lists are only added, and that subscribed sent pending stays subscribed', () => {
      const section = DOCS.slice(DOCS.indexOf('## What the CRM does with an upsert'));
      expect(section).toMatch(/Empty strings do not blank fields/);
      expect(section).toMatch(/Tags and lists are added, never removed/);
      expect(section).toMatch(/subscribed contact sent `pending` stays subscribed/);
    });

    it('the pending row for a subscribed contact: the CRM keeps subscribed, the ledger says succeeded (documented)', () => {
      expect(server.contacts.get('sophie.thompson16@example.test')?.status).toBe('subscribed');
      expect(ledgerOf('sophie.thompson16@example.test')).toMatchObject({ outcome: 'succeeded', action_type: 'updated' });
    });
  });

  describe('after the analyst fixes rows and the CRM recovers, a second push; and a push by an editor (run side by side)', () => {
    let again: CliResult;
    let againRequests: RealRequest[];
    let againLedger: Record<string, unknown>[];
    let firstLedger: Record<string, unknown>[];
    let againRuns: Record<string, unknown>[];
    let editor: CliResult;
    let editorServer: RealPushServer;
    let create: CliResult;
    let createServer: RealPushServer;
    let createDb: string;
    let createLedger: Record<string, unknown>[];
    let tagsBefore: number[];

    beforeAll(async () => {
      firstLedger = ledger;
      tagsBefore = [...(server.contacts.get(TAG_CHANGED_EMAIL)?.tags ?? [])];
      await withDb(db, false, async (run) => {
        await run("UPDATE marketing_upserts SET status = 'subscribed' WHERE email = 'typo.status@example.test'");
        await run("UPDATE marketing_upserts SET tags = 'VIP' WHERE email = 'unknown.tag@example.test'");
        await run(`UPDATE marketing_upserts SET tags = 'VIP' WHERE email = '${TAG_CHANGED_EMAIL}'`);
      });
      server.options.sqlError!.delete(SQL_ERROR_EMAIL);
      const editorDir = mkdtempSync(join(tmpdir(), 'crmsync-independent-real-push-403-'));
      dirs.push(editorDir);
      editorServer = await startRealPushServer(serverOptions());
      servers.push(editorServer);
      await writeSource(join(editorDir, 'crm.duckdb'), rows);
      const createDir = mkdtempSync(join(tmpdir(), 'crmsync-independent-real-push-create-'));
      dirs.push(createDir);
      createDb = join(createDir, 'crm.duckdb');
      createServer = await startRealPushServer(serverOptions());
      servers.push(createServer);
      await withDb(createDb, false, async (run) => {
        await run(`CREATE TABLE new_segments AS SELECT * FROM (VALUES
          ('brand.tag@example.test', 'subscribed', 'Spring Promo 2027', ['Newsletter 2027']),
          ('two.rows@example.test', 'pending', 'spring promo 2027, VIP', ['newsletter 2027', 'Customers']),
          ('slug.clash@example.test', 'subscribed', 'Webinar 2026!', NULL)) t(email, status, tags, lists)`);
      });
      const start = server.requests.length;
      [again, editor, create] = await Promise.all([
        runBuiltCli(['push', '--from', 'marketing_upserts'], specServerCliEnv(server.baseUrl, dir, 'UTC'), dir, CLI_TIMEOUT),
        runBuiltCli(
          ['push', '--from', 'marketing_upserts'],
          { ...specServerCliEnv(editorServer.baseUrl, editorDir, 'UTC'), CRM_USERNAME: 'editor1', CRM_PASSWORD: 'edit or12 pass word' },
          editorDir,
          CLI_TIMEOUT,
        ),
        runBuiltCli(
          ['push', '--from', 'SELECT email, status, tags, lists FROM new_segments', '--create-missing-tags'],
          specServerCliEnv(createServer.baseUrl, createDir, 'UTC'),
          createDir,
          CLI_TIMEOUT,
        ),
      ]);
      createLedger = await readAll(createDb, 'SELECT * FROM _push_ledger');
      againRequests = server.requests.slice(start);
      againLedger = await readAll(db, "SELECT * FROM _push_ledger WHERE source = 'marketing_upserts'");
      againRuns = await readAll(db, 'SELECT * FROM _push_runs ORDER BY started_at');
    }, CLI_TIMEOUT + 30_000);

    const againOf = (key: string): Record<string, unknown> | undefined => againLedger.find((l) => l.push_key === key);

    it('sends only the fixed rows, the changed row and the rows that failed (docs/push.md, Plan: new, changed, retry; unchanged and invalid are not sent)', () => {
      const expected = ['typo.status@example.test', 'unknown.tag@example.test', TAG_CHANGED_EMAIL, SQL_ERROR_EMAIL, REFUSED_EMAIL];
      if (firstLedger.find((l) => lower(l.email) === UNICODE_EMAIL)?.outcome === 'failed') expected.push(UNICODE_EMAIL);
      expect([...new Set(posts(againRequests).map(emailOf))].sort(), `second push: exit ${String(again.code)}\n${again.stdout}\n${again.stderr}`).toEqual(expected.sort());
      expect(again.stdout).toMatch(/changed 1\b/);
    });

    it('lands the fixed rows and the row the CRM refused before, and the ledger says so', () => {
      expect(server.contacts.get('typo.status@example.test')?.status).toBe('subscribed');
      expect(server.contacts.get('unknown.tag@example.test')?.tags).toEqual([1]);
      expect(server.contacts.get(SQL_ERROR_EMAIL)).toMatchObject({ first_name: 'Sql', phone: '+1-555-0199' });
      for (const key of ['typo.status@example.test', 'unknown.tag@example.test', SQL_ERROR_EMAIL, TAG_CHANGED_EMAIL])
        expect(againOf(key), key).toMatchObject({ outcome: 'succeeded', http_status: 200 });
      // The row the site still refuses: failed again, two failures in a row.
      expect(againOf(REFUSED_EMAIL)).toMatchObject({ outcome: 'failed', failures: 2, http_status: 422, error_field: 'email' });
      // Rows still invalid stay rejected.
      for (const key of INVALID_KEYS.filter((k) => !['typo.status@example.test', 'unknown.tag@example.test'].includes(k))) expect(againOf(key)?.outcome, key).toBe('rejected');
    });

    it('a tag removed from the source row stays on the contact (documented: "the CRM keeps the old tag"), and the ledger holds the new content as pushed', () => {
      expect(tagsBefore).toEqual(expect.arrayContaining([1, 30]));
      expect(server.contacts.get(TAG_CHANGED_EMAIL)?.tags).toEqual(expect.arrayContaining([1, 30]));
      const l = againOf(TAG_CHANGED_EMAIL)!;
      expect(l.pushed_fingerprint).toBe(l.fingerprint);
      expect(l.pushed_fingerprint).not.toBe(firstLedger.find((x) => x.push_key === TAG_CHANGED_EMAIL)!.pushed_fingerprint);
    });

    it('records the second push as a run of its own', () => {
      expect(againRuns).toHaveLength(2);
      expect(againRuns[1]).toMatchObject({ planned_changed: 1, planned_retry: 2 + (unicodeLedger()?.outcome === 'failed' ? 1 : 0), unchanged: validRows().length - 3 });
    });

    it('stops on the real 403 rest_forbidden of an editor (docs/push.md, Send: "401 and 403 stop the push"), writing nothing', () => {
      expect(editor.code).toBe(1);
      expect(editor.stderr + editor.stdout).toMatch(/403|forbidden/i);
      expect(editor.stderr + editor.stdout).not.toContain('edit or12 pass word');
      expect(posts(editorServer.requests).length).toBeLessThanOrEqual(16);
      expect([...editorServer.contacts.keys()].sort()).toEqual(SEEDED!.map((c) => c.email).sort());
    });

    describe('--create-missing-tags against the real tag and list creation (200 with the new row under `lists` and `item`; a taken slug is 422 {"slug":{"unique":...}})', () => {
      const created = (kind: '/tags' | '/lists'): RealRequest[] => createServer.requests.filter((r) => r.method === 'POST' && r.path === kind);

      it('creates each missing tag and list once, by title, from a query source', () => {
        // README: "Exit code 1 when rows failed or were rejected".
        expect(create.code, create.stderr.slice(-2000)).toBe(createLedger.every((l) => l.outcome === 'succeeded') ? 0 : 1);
        expect(
          created('/tags')
            .filter((r) => lower(bodyOf(r).title) === 'spring promo 2027')
            .map((r) => r.status),
        ).toEqual([200]);
        expect(
          created('/lists')
            .filter((r) => lower(bodyOf(r).title) === 'newsletter 2027')
            .map((r) => r.status),
        ).toEqual([200]);
        expect(createServer.tags.filter((t) => t.title.toLowerCase() === 'spring promo 2027')).toHaveLength(1);
      });

      it('puts the new tag and list on the contacts that named them', () => {
        const promo = createServer.tags.find((t) => t.title.toLowerCase() === 'spring promo 2027')!;
        const letter = createServer.lists.find((l) => l.title.toLowerCase() === 'newsletter 2027')!;
        expect(createServer.contacts.get('brand.tag@example.test')).toMatchObject({ status: 'subscribed', tags: [promo.id], lists: [letter.id] });
        const two = createServer.contacts.get('two.rows@example.test')!;
        expect(sorted(two.tags)).toEqual(sorted([promo.id, 1]));
        expect(sorted(two.lists)).toEqual(sorted([letter.id, 1]));
        expect(createLedger.filter((l) => ['brand.tag@example.test', 'two.rows@example.test'].includes(String(l.push_key))).map((l) => l.outcome)).toEqual(['succeeded', 'succeeded']);
      });

      it(
        'a second push of the settled query source sends nothing and reads nothing from the CRM (docs/push.md, Plan "unchanged"; Tests: "a fully settled source sends no request at all")',
        async () => {
          const settled = createLedger.every((l) => l.outcome === 'succeeded');
          const startAt = createServer.requests.length;
          const again2 = await runBuiltCli(
            ['push', '--from', 'SELECT email, status, tags, lists FROM new_segments', '--create-missing-tags'],
            specServerCliEnv(createServer.baseUrl, dirname(createDb), 'UTC'),
            dirname(createDb),
            CLI_TIMEOUT,
          );
          expect(again2.code, again2.stderr.slice(-2000)).toBe(settled ? 0 : 1);
          expect(again2.stdout).toMatch(/unchanged 3\b/);
          if (settled) expect(createServer.requests.slice(startAt).map((r) => `${r.method} ${r.path}`)).toEqual([]);
        },
        CLI_TIMEOUT,
      );

      it('does not silently drop a tag whose title makes a slug that is taken (the real CRM refuses to create it)', () => {
        const l = createLedger.find((x) => x.push_key === 'slug.clash@example.test');
        expect(l).toBeDefined();
        const contact = createServer.contacts.get('slug.clash@example.test');
        const reported = (l!.outcome === 'rejected' || l!.outcome === 'failed') && /^tags/.test(String(l!.error_field));
        const landed = l!.outcome === 'succeeded' && (contact?.tags ?? []).length > 0;
        expect(reported || landed, JSON.stringify({ ledger: l, contact, tagPosts: created('/tags').map((r) => [r.raw, r.status]) })).toBe(true);
      });
    });
  });
});
