/**
 * `crmsync push` at scale against a CRM that limits its request rate and misbehaves
 * (push-rate-server.ts), run as a user runs it: the compiled CLI in child processes with the
 * embedded Temporal. What must hold comes from docs/push.md, README.md and the interface
 * specification; what happened is judged from the server's records (its own clock) and from the
 * warehouse crmsync wrote (`_push_ledger`, `_push_runs`), never from crmsync's code.
 *
 * - A: a CSV of 1,600 rows (valid rows, rows the local checks must reject, rows the CRM refuses)
 *   against a token-bucket limit with 5xx, resets, answers lost after the write, slow answers and
 *   429s with Retry-After.
 * - B: a warehouse table of 1,500 rows; `crmsync push` and its background worker are SIGKILLed
 *   mid-push, and a second `crmsync push` of the same source follows.
 * - C: the same crash with the workers inside the command (CRMSYNC_EMBEDDED_IDLE=0), against a
 *   strict limit (no burst): the pace the client keeps, and whether a second push finishes. It
 *   runs beside A (a few requests a second).
 * About 4.5 minutes on a loaded 2-core machine. PUSH_RATE_REPORT=1 prints the figures each scenario saw.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { duck, readWarehouse, type Row } from './duck.js';
import { PASSWORD, USER, specServerCliEnv } from './spec-server.js';
import { CREATE_FIELDS, startRateServer, type FieldDef, type RateRequest, type RateServer, type StoredContact, type Taxon } from './push-rate-server.js';

const BIN = fileURLToPath(new URL('../../bin/crmsync.js', import.meta.url));

// ---------------------------------------------------------------------------------------------
// The CRM's definitions.
const TAGS: Taxon[] = [
  { id: 1, title: 'VIP', slug: 'vip' },
  { id: 2, title: 'Newsletter Reader', slug: 'newsletter-reader' },
  { id: 3, title: 'Webinar 2026', slug: 'webinar-2026' },
  ...Array.from({ length: 40 }, (_, i) => ({ id: 10 + i, title: `Segment ${10 + i}`, slug: `segment-${10 + i}` })),
];
const LISTS: Taxon[] = [
  { id: 1, title: 'Customers', slug: 'customers' },
  { id: 2, title: 'Prospects', slug: 'prospects' },
];
const FIELDS: FieldDef[] = [
  { field_key: 'single-select', type: 'select-one', label: 'Favorite Color', slug: 'favorite_color', options: ['Red', 'Green', 'Blue'] },
  { field_key: 'number', type: 'number', label: 'Membership Number', slug: 'membership_number' },
  { field_key: 'date', type: 'date', label: 'Renewal Date', slug: 'renewal_date' },
  { field_key: 'checkbox', type: 'checkbox', label: 'Interests', slug: 'interests', options: ['Books', 'Music', 'Travel'] },
  { field_key: 'text', type: 'text', label: 'Nickname', slug: 'nickname' },
];

// ---------------------------------------------------------------------------------------------
// Processes.
interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}
interface Cli {
  child: ChildProcess;
  done: Promise<CliResult>;
}
const started: Cli[] = [];
/** Processes the commands of this file started (the embedded Temporal, workers), to end by pid. */
const startedPids = new Set<number>();

function startCli(args: string[], env: Record<string, string>, cwd: string, timeoutMs: number): Cli {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  const cli = { child, done };
  started.push(cli);
  return cli;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function waitFor(what: string, pred: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function readJson(path: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** Every descendant of `pid` (children first seen by `ps`), so a test can end what its command started. */
function descendants(pid: number): number[] {
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const p = queue.shift()!;
    let text = '';
    try {
      text = execFileSync('ps', ['-o', 'pid=', '--ppid', String(p)], { encoding: 'utf8' });
    } catch {
      text = '';
    }
    for (const c of text
      .split('\n')
      .map((s) => Number(s.trim()))
      .filter((n) => n > 0)) {
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}

/** README.md "Temporal": the background worker's pid is in `<CRMSYNC_DATA_DIR>/worker.json`; SIGTERM drains it. */
async function stopWorker(dir: string): Promise<void> {
  const pid = readJson(join(dir, 'worker.json'))?.pid;
  if (typeof pid !== 'number' || !alive(pid)) return;
  process.kill(pid, 'SIGTERM');
  const end = Date.now() + 30_000;
  while (alive(pid) && Date.now() < end) await sleep(100);
  if (alive(pid)) process.kill(pid, 'SIGKILL');
}

async function stopEmbeddedTemporal(dir: string): Promise<void> {
  const pid = readJson(join(dir, 'temporal-dev-server.json'))?.pid;
  if (typeof pid === 'number' && alive(pid)) {
    process.kill(pid, 'SIGTERM');
    const end = Date.now() + 10_000;
    while (alive(pid) && Date.now() < end) await sleep(100);
  }
}

const dirs: string[] = [];
const servers: RateServer[] = [];
afterAll(async () => {
  for (const c of started) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
  for (const d of dirs) {
    await stopWorker(d).catch(() => undefined);
    await stopEmbeddedTemporal(d).catch(() => undefined);
  }
  for (const pid of startedPids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  for (const s of servers) await s.close().catch(() => undefined);
  await sleep(300);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}, 90_000);

function newDir(name: string): string {
  const d = mkdtempSync(join(tmpdir(), `crmsync-indep-pushrate-${name}-`));
  dirs.push(d);
  return d;
}

// ---------------------------------------------------------------------------------------------
// Source rows and what the CRM must hold for them (docs/push.md, "Source columns", "Local checks").
interface Src {
  email: string;
  status: string;
  first_name: string;
  last_name: string;
  phone: string;
  city: string;
  country: string;
  date_of_birth: string;
  tags: string;
  lists: string;
  cf_membership_number: string;
  cf_favorite_color: string;
  custom_values: string;
}
const COLUMNS: Array<keyof Src> = [
  'email',
  'status',
  'first_name',
  'last_name',
  'phone',
  'city',
  'country',
  'date_of_birth',
  'tags',
  'lists',
  'cf_membership_number',
  'cf_favorite_color',
  'custom_values',
];
const EMPTY: Src = {
  email: '',
  status: '',
  first_name: '',
  last_name: '',
  phone: '',
  city: '',
  country: '',
  date_of_birth: '',
  tags: '',
  lists: '',
  cf_membership_number: '',
  cf_favorite_color: '',
  custom_values: '',
};

function validRow(i: number, prefix: string): Src {
  const statuses = ['subscribed', 'Pending', 'unsubscribed', 'SUBSCRIBED', 'bounced', 'complained'];
  const tagCells = ['VIP, newsletter-reader', '3', `Webinar 2026, segment-${10 + (i % 40)}`, '', `Segment ${10 + ((i * 7) % 40)}`];
  const listCells = ['Customers, prospects', 'customers', '', 'Prospects'];
  let cv = '';
  if (i % 5 === 2) cv = JSON.stringify({ interests: ['Books', 'Travel'], renewal_date: `2027-0${1 + (i % 9)}-1${i % 10}` });
  else if (i % 7 === 3) cv = JSON.stringify({ nickname: `Nick, "${i}"`, favorite_color: 'Blue' });
  return {
    email: i % 11 === 4 ? `${prefix}.Person${i}@Example.TEST` : `${prefix.toLowerCase()}.person${i}@example.test`,
    status: statuses[i % statuses.length]!,
    first_name: `Zoë ${i}`,
    last_name: i % 3 === 0 ? '' : `O'Neil "${i}"`,
    phone: i % 2 === 0 ? `+49 30 ${100000 + i}` : '',
    city: i % 4 === 0 ? 'Zürich, Kreis 1' : '',
    country: i % 5 === 0 ? 'DE' : '',
    date_of_birth: i % 3 === 1 ? `19${50 + (i % 50)}-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')}` : '',
    tags: tagCells[i % tagCells.length]!,
    lists: listCells[i % listCells.length]!,
    cf_membership_number: i % 2 === 0 ? String(1000 + i) : '',
    // A non-empty cf_ cell wins over the same slug in custom_values (i % 7 === 3 rows name favorite_color Blue there).
    cf_favorite_color: i % 4 === 1 ? ['Red', 'Green', 'Blue'][i % 3]! : '',
    custom_values: cv,
  };
}

/** Rows docs/push.md "Local checks" rejects (never sent), with the ledger key and the field the rejection names. */
function invalidRows(): Array<{ row: Src; key: string; field: RegExp }> {
  const out: Array<{ row: Src; key: string; field: RegExp }> = [];
  for (let k = 0; k < 3; k++) {
    const base = (email: string): Src => ({ ...EMPTY, email, status: 'subscribed', first_name: `Bad ${k}` });
    const add = (row: Src, field: RegExp): void => void out.push({ row, key: row.email.toLowerCase(), field });
    add({ ...base(`not-an-email-${k}`) }, /^email$/);
    add({ ...base(`typo.status${k}@example.test`), status: 'subscirbed' }, /^status$/);
    add({ ...base(`no.status${k}@example.test`), status: '' }, /^status$/);
    add({ ...base(`bad.birthday${k}@example.test`), date_of_birth: '1990-02-30' }, /^date_of_birth$/);
    add({ ...base(`purple${k}@example.test`), cf_favorite_color: 'Purple' }, /favorite_color/);
    add({ ...base(`unknown.field${k}@example.test`), custom_values: '{"no_such_field": "x"}' }, /no_such_field/);
    add({ ...base(`bad.number${k}@example.test`), custom_values: '{"membership_number": "twelve"}' }, /membership_number/);
    add({ ...base(`bad.renewal${k}@example.test`), custom_values: '{"renewal_date": "2027-13-01"}' }, /renewal_date/);
    add({ ...base(`unknown.tag${k}@example.test`), tags: 'No Such Tag' }, /^tags/);
    add({ ...base(`unknown.list${k}@example.test`), lists: 'Nope' }, /^lists/);
    add({ ...base(`long.name${k}@example.test`), first_name: 'x'.repeat(256) }, /^first_name$/);
    // Several rows with the same email: all of them are rejected.
    add({ ...base(`dup${k}@example.test`), first_name: 'First' }, /^email$/);
    add({ ...base(`DUP${k}@Example.test`), first_name: 'Second', status: 'pending' }, /^email$/);
  }
  return out;
}

const tagId = (s: string): number => (/^\d+$/.test(s) ? Number(s) : TAGS.find((t) => t.title.toLowerCase() === s || t.slug === s)!.id);
const listId = (s: string): number => (/^\d+$/.test(s) ? Number(s) : LISTS.find((t) => t.title.toLowerCase() === s || t.slug === s)!.id);
const cells = (text: string): string[] =>
  text
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '');
const sortNum = (xs: number[]): number[] => [...new Set(xs)].sort((a, b) => a - b);

/** What the CRM must hold for a valid source row pushed once into an empty CRM. */
function expectedContact(r: Src): Record<string, unknown> {
  const fields: Record<string, string> = {};
  for (const f of ['first_name', 'last_name', 'phone', 'city', 'country'] as const) if (r[f] !== '') fields[f] = r[f];
  const cv: Record<string, string | string[]> = {};
  if (r.custom_values) for (const [k, v] of Object.entries(JSON.parse(r.custom_values) as Record<string, unknown>)) cv[k] = Array.isArray(v) ? (v as string[]) : String(v);
  if (r.cf_membership_number !== '') cv.membership_number = r.cf_membership_number;
  if (r.cf_favorite_color !== '') cv.favorite_color = r.cf_favorite_color;
  return {
    email: r.email.toLowerCase(),
    status: r.status.toLowerCase(),
    fields,
    date_of_birth: r.date_of_birth === '' ? undefined : r.date_of_birth,
    tags: sortNum(cells(r.tags).map(tagId)),
    lists: sortNum(cells(r.lists).map(listId)),
    custom_values: cv,
  };
}

function heldContact(c: StoredContact): Record<string, unknown> {
  return { email: c.email.toLowerCase(), status: c.status, fields: c.fields, date_of_birth: c.date_of_birth, tags: sortNum(c.tags), lists: sortNum(c.lists), custom_values: c.custom_values };
}

/** JSON with object keys sorted, to compare records whatever order their keys were written in. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

function csvCell(v: string): string {
  return /[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}
function writeCsv(path: string, rows: Src[]): void {
  const lines = [[...COLUMNS, 'analyst_note'].join(',')];
  for (const r of rows) lines.push([...COLUMNS.map((c) => csvCell(r[c])), 'not a CRM column'].join(','));
  writeFileSync(path, lines.join('\n') + '\n');
}

// ---------------------------------------------------------------------------------------------
// What the server saw.
const SLACK_MS = 300;
const posts = (list: RateRequest[]): RateRequest[] => list.filter((r) => r.method === 'POST' && r.path === '/subscribers');
const ok = (r: RateRequest): boolean => r.status !== undefined && r.status >= 200 && r.status < 300;

/** Requests that arrived inside a 429's Retry-After (after SLACK_MS for requests the client had already sent). */
function retryAfterViolations(reqs: RateRequest[], exclude: (r: RateRequest) => boolean = () => false): string[] {
  const out: string[] = [];
  for (const l of reqs.filter((r) => r.status === 429 && r.retryAfter !== undefined && !exclude(r))) {
    const from = l.doneAt! + SLACK_MS;
    const until = l.doneAt! + l.retryAfter! * 1000 - 50;
    for (const r of reqs)
      if (r.arrivedAt > from && r.arrivedAt < until) out.push(`#${r.seq} ${r.method} ${r.path} ${Math.round(r.arrivedAt - l.doneAt!)} ms after the 429 #${l.seq} (Retry-After: ${l.retryAfter})`);
  }
  return out;
}

interface Summary {
  plan: Record<'new' | 'changed' | 'retry' | 'unchanged' | 'invalid', number>;
  sent: number;
  succeeded: number;
  failed: number;
  alreadyPushed: number;
}
function parseSummary(stdout: string): Summary | undefined {
  const p = /plan: new (\d+)\s+changed (\d+)\s+retry (\d+)\s+unchanged (\d+)\s+invalid (\d+)/.exec(stdout);
  const s = /sent (\d+)\s+succeeded (\d+)\s+failed (\d+)(?:\s+already pushed (\d+))?/.exec(stdout);
  if (!p || !s) return undefined;
  return {
    plan: { new: Number(p[1]), changed: Number(p[2]), retry: Number(p[3]), unchanged: Number(p[4]), invalid: Number(p[5]) },
    sent: Number(s[1]),
    succeeded: Number(s[2]),
    failed: Number(s[3]),
    alreadyPushed: Number(s[4] ?? 0),
  };
}

// =============================================================================================
// Scenario C runs beside A (it is light: a few requests a second), and its tests read its result.
const C = { N: 600, LIMIT: 40, RUN_MS: 20_000 };
interface CState {
  server: RateServer;
  killAt: number;
  rate: number;
  rateNote: string;
  second: CliResult;
}
async function runScenarioC(): Promise<CState> {
  const rows = Array.from({ length: C.N }, (_, i) => validRow(i, 'C'));
  const server = await startRateServer({ username: USER, password: PASSWORD, tags: TAGS, lists: LISTS, fields: FIELDS, ratePerSecond: C.LIMIT, burst: 2, retryAfterSeconds: [1] });
  servers.push(server);
  const dir = newDir('c');
  const csv = join(dir, 'upserts.csv');
  writeCsv(csv, rows);
  const env = specServerCliEnv(server.baseUrl, dir, 'UTC');
  const first = startCli(['push', '--from', csv], env, dir, 120_000);
  await waitFor('the first POST', () => posts(server.requests).length > 0 || first.child.exitCode !== null, 60_000);
  const firstPost = posts(server.requests)[0]!.arrivedAt;
  await waitFor('the run time', () => performance.now() - firstPost > C.RUN_MS || first.child.exitCode !== null, C.RUN_MS + 10_000);
  for (const pid of descendants(first.child.pid!)) startedPids.add(pid);
  first.child.kill('SIGKILL');
  const killAt = performance.now();
  await first.done;
  // The pace after the first tenth of the requests it sent (docs/push.md: "once the client has found it").
  const accepted = server.requests.filter((r) => r.status !== 429 && r.arrivedAt <= killAt);
  const from = accepted[Math.floor(accepted.length / 10)]!.arrivedAt;
  const counted = accepted.filter((r) => r.arrivedAt >= from).length;
  const rate = counted / ((killAt - from) / 1000);
  const rateNote = `${counted} accepted requests in ${Math.round(killAt - from)} ms (${rate.toFixed(1)}/s); 429s: ${server.requests.filter((r) => r.status === 429).length}`;
  await sleep(1000);
  const second = await startCli(['push', '--from', csv], env, dir, 100_000).done;
  return { server, killAt, rate, rateNote, second };
}
let scenarioC: Promise<CState>;
beforeAll(() => {
  scenarioC = runScenarioC();
  scenarioC.catch(() => undefined);
});

// =============================================================================================
describe('A: a CSV of 1,600 rows against a rate-limited CRM that fails, resets, loses answers and stalls', () => {
  const RATE = 60;
  /**
   * Batches of 250 rows (docs/push.md: `--batch-size`): with the default of 2,000 one batch takes
   * every interruption of this push as attempts of one activity, whose retry delay grows to 20 s
   * (see the report), which would not fit this file's time.
   */
  const BATCH = '250';
  const VALID = 1560;
  const REFUSED = ['refused.one@example.test', 'refused.two@example.test', 'refused.three@example.test'];
  let server: RateServer;
  let dir: string;
  let valid: Src[];
  let invalid: ReturnType<typeof invalidRows>;
  let all: Src[];
  let result: CliResult;
  let reqs: RateRequest[];
  let ledger: Row[];
  let runs: Row[];

  beforeAll(async () => {
    valid = Array.from({ length: VALID }, (_, i) => validRow(i, 'A'));
    const refused = REFUSED.map((email, i) => ({ ...validRow(5000 + i, 'A'), email }));
    invalid = invalidRows();
    // Invalid rows spread through the file.
    all = [...valid, ...refused];
    invalid.forEach((x, k) => all.splice(Math.floor(((k + 1) * all.length) / (invalid.length + 1)), 0, x.row));
    valid = [...valid, ...refused];
    server = await startRateServer({
      username: USER,
      password: PASSWORD,
      tags: TAGS,
      lists: LISTS,
      fields: FIELDS,
      ratePerSecond: RATE,
      burst: 10,
      retryAfterSeconds: [1, 2],
      faults: { http429: 0.003, http500: 0.003, http502: 0.002, http503: 0.002, reset: 0.008, lost_after_write: 0.008, slow: 0.01 },
      repeatShare: 0.25,
      slowMs: [1000, 3000],
      latencyMs: [80, 200],
      injectedRetryAfterSeconds: 3,
      rejectEmails: Object.fromEntries(REFUSED.map((e) => [e, { field: 'phone', message: 'The phone field must be a valid phone number.' }])),
    });
    servers.push(server);
    dir = newDir('a');
    const csv = join(dir, 'marketing_upserts.csv');
    writeCsv(csv, all);
    result = await startCli(['push', '--from', csv, '--batch-size', BATCH], specServerCliEnv(server.baseUrl, dir, 'UTC'), dir, 240_000).done;
    reqs = [...server.requests];
    if (process.env.PUSH_RATE_REPORT) {
      const ps = posts(reqs);
      const span = (ps.at(-1)!.arrivedAt - ps[0]!.arrivedAt) / 1000;
      const reasons: Record<string, number> = {};
      for (const r of reqs) reasons[`${r.status ?? '-'} ${r.reason ?? ''}`] = (reasons[`${r.status ?? '-'} ${r.reason ?? ''}`] ?? 0) + 1;
      console.log('A', {
        span,
        requests: reqs.length,
        perSecond: reqs.length / span,
        maxInFlight: server.maxInFlight(),
        reasons,
        progress: result.stderr
          .split('\n')
          .filter((l) => l.startsWith('push:'))
          .slice(-3),
      });
    }
    ledger = await readWarehouse(dir, (q) => q('SELECT * FROM _push_ledger'));
    runs = await readWarehouse(dir, (q) => q('SELECT * FROM _push_runs'));
  }, 300_000);

  it('finishes, exits 1 (rows were rejected or refused: README "Reverse sync") and prints its summary', () => {
    expect(result.signal, result.stderr.slice(-3000)).toBeNull();
    expect(result.code, result.stderr.slice(-3000)).toBe(1);
    expect(parseSummary(result.stdout), result.stdout).toBeDefined();
  });

  it('sends only the create fields, as JSON with __force_update, authenticated (spec, Contacts "Create body", Authentication)', () => {
    for (const r of posts(reqs)) {
      expect(r.headers['content-type']).toMatch(/^application\/json\b/);
      expect([true, 'yes']).toContain((r.body as Record<string, unknown>).__force_update);
      for (const key of Object.keys(r.body as object)) expect(CREATE_FIELDS.has(key), `unexpected field ${key}`).toBe(true);
    }
    expect(reqs.filter((r) => r.reason === 'auth' || r.status === 404 || r.reason === 'invalid' || r.reason === 'duplicate')).toEqual([]);
  });

  it('never sends a row the local checks reject (docs/push.md "Local checks")', () => {
    const keys = new Set(invalid.map((x) => x.key));
    expect(
      posts(reqs)
        .filter((r) => keys.has(r.email) || r.email.startsWith('not-an-email'))
        .map((r) => r.email),
    ).toEqual([]);
  });

  it('the CRM holds exactly the valid rows, once each, with their fields, custom values, tags and lists (docs/push.md "Source columns")', () => {
    const pushed = valid.filter((r) => !REFUSED.includes(r.email));
    expect(server.contacts.size).toBe(pushed.length);
    expect([...server.contacts.keys()].sort()).toEqual(pushed.map((r) => r.email.toLowerCase()).sort());
    const wrong: string[] = [];
    for (const r of pushed) {
      const held = heldContact(server.contacts.get(r.email.toLowerCase())!);
      try {
        expect(held).toEqual(expectedContact(r));
      } catch {
        wrong.push(`${r.email}: held ${JSON.stringify(held)} expected ${JSON.stringify(expectedContact(r))}`);
      }
    }
    expect(wrong.slice(0, 5), `${wrong.length} contacts differ`).toEqual([]);
  });

  it('an answer lost after the write neither loses nor doubles the contact: it is written again with the same content', () => {
    const lost = posts(reqs).filter((r) => r.reason === 'lost_after_write');
    expect(lost.length).toBeGreaterThan(5);
    for (const l of lost) {
      const c = server.contacts.get(l.email);
      expect(c, l.email).toBeDefined();
      // The contact holds the source row, and a later request for it was answered.
      expect(
        posts(reqs).some((r) => r.email === l.email && r.seq > l.seq && ok(r)),
        l.email,
      ).toBe(true);
    }
  });

  it('every source row ends in _push_ledger with one outcome (docs/push.md "Ledger and views")', () => {
    const keys = new Set(all.map((r) => r.email.toLowerCase()));
    expect(ledger.length).toBe(keys.size);
    expect(new Set(ledger.map((l) => String(l.push_key))).size).toBe(ledger.length);
    const byKey = new Map(ledger.map((l) => [String(l.push_key), l]));
    const bad: string[] = [];
    for (const r of valid) {
      const key = r.email.toLowerCase();
      const l = byKey.get(key);
      if (REFUSED.includes(key)) {
        // Spec, Errors: 422 "validation failed; the message names the field"; docs/push.md: recorded `failed`.
        if (!(l?.outcome === 'failed' && l.http_status === 422 && l.retryable === false && l.pushed_fingerprint === null)) bad.push(`${key}: ${JSON.stringify(l)}`);
        continue;
      }
      const c = server.contacts.get(key)!;
      if (!(l?.outcome === 'succeeded' && l.http_status === 200 && String(l.contact_id) === String(c.id) && l.pushed_fingerprint === l.fingerprint && l.pushed_fingerprint))
        bad.push(`${key}: ${JSON.stringify(l)}`);
    }
    for (const x of invalid) {
      const l = byKey.get(x.key);
      if (!(l?.outcome === 'rejected' && x.field.test(String(l.error_field)))) bad.push(`${x.key}: ${JSON.stringify(l)} (field ${x.field})`);
    }
    expect(bad.slice(0, 8), `${bad.length} ledger rows wrong`).toEqual([]);
  });

  it('a row the CRM refused with 422 is sent once: a validation error is final (docs/push.md "Send")', () => {
    for (const e of REFUSED)
      expect(
        posts(reqs)
          .filter((r) => r.email === e && r.status !== 429)
          .map((r) => r.status),
        e,
      ).toEqual([422]);
  });

  it('after a 429 with Retry-After: R the CRM sees no request until R has passed (docs/push.md "Send": the limiter pauses on Retry-After)', () => {
    expect(reqs.filter((r) => r.status === 429).length).toBeGreaterThan(3);
    expect(retryAfterViolations(reqs)).toEqual([]);
  });

  it('after a 503 with Retry-After: R no row beyond those in progress (16) starts until R has passed (docs/push.md "Send": PUSH_BATCH_INTERRUPTED with the Retry-After as the next delay)', () => {
    const ps = posts(reqs);
    const problems: string[] = [];
    const fives = ps.filter((r) => r.status === 503);
    expect(fives.length).toBeGreaterThan(0);
    for (const f of fives) {
      const t = f.doneAt!;
      // Rows the batch had in progress may still send their request (up to 16 rows, 8 requests at once).
      const inWindow = new Set(ps.filter((r) => r.arrivedAt > t + SLACK_MS && r.arrivedAt < t + f.retryAfter! * 1000 - 50).map((r) => r.email));
      if (inWindow.size > 16) problems.push(`${inWindow.size} rows sent within ${f.retryAfter} s after the 503 #${f.seq}`);
    }
    expect(problems).toEqual([]);
  });

  it('never has more than 8 requests in flight at the CRM (docs/push.md "Send": the client sends at most 8 requests at once)', () => {
    expect(server.maxInFlight()).toBeGreaterThan(2); // the latency made it use more than one
    expect(server.maxInFlight()).toBeLessThanOrEqual(8);
  });

  it('keeps the limiter\'s 429s under 1% of requests (docs/push.md "Tests and benchmark": 429s under 1% of requests)', () => {
    const limited = reqs.filter((r) => r.reason === 'rate_limit').length;
    expect(limited / reqs.length, `${limited} of ${reqs.length}`).toBeLessThan(0.01);
  });

  it('the summary and _push_runs give what the CRM saw: rows sent, succeeded and failed', () => {
    const ps = posts(reqs);
    const sentRows = new Set(ps.map((r) => r.email)).size;
    const okRows = new Set(ps.filter(ok).map((r) => r.email)).size;
    const failedRows = new Set(ps.filter((r) => r.status === 422).map((r) => r.email)).size;
    const s = parseSummary(result.stdout)!;
    expect({
      new: s.plan.new,
      changed: s.plan.changed,
      retry: s.plan.retry,
      unchanged: s.plan.unchanged,
      sent: s.sent,
      succeeded: s.succeeded,
      failed: s.failed,
      alreadyPushed: s.alreadyPushed,
    }).toEqual({
      new: sentRows,
      changed: 0,
      retry: 0,
      unchanged: 0,
      sent: sentRows,
      succeeded: okRows,
      failed: failedRows,
      alreadyPushed: 0,
    });
    // Invalid: counted by row or by ledger key (the documents do not say which).
    const invalidKeys = new Set(invalid.map((x) => x.key)).size;
    expect([invalid.length, invalidKeys]).toContain(s.plan.invalid);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'succeeded', rows_read: all.length, planned_new: sentRows, sent: sentRows, succeeded: okRows, failed: failedRows, invalid: s.plan.invalid });
  });
});

// =============================================================================================
describe('B: SIGKILL of `crmsync push` and its background worker mid-push, then a second `crmsync push` (a warehouse table of 1,500 rows)', () => {
  const N = 1500;
  const KILL_AFTER = 450;
  const MAX_CONCURRENCY = 4;
  let server: RateServer;
  let dir: string;
  let env: Record<string, string>;
  let rows: Src[];
  let killAt = Infinity;
  let ledgerAtKill: Row[] = [];
  let second: CliResult;
  let third: CliResult;
  let thirdFrom = 0;
  let ledger: Row[];
  let runs: Row[];
  let settled = false;

  beforeAll(async () => {
    rows = Array.from({ length: N }, (_, i) => validRow(i, 'B'));
    server = await startRateServer({
      username: USER,
      password: PASSWORD,
      tags: TAGS,
      lists: LISTS,
      fields: FIELDS,
      ratePerSecond: 40,
      burst: 10,
      retryAfterSeconds: [1, 2],
      faults: { lost_after_write: 0.005, http503: 0.002 },
      latencyMs: [100, 200],
      injectedRetryAfterSeconds: 1,
    });
    servers.push(server);
    dir = newDir('b');
    // The analyst's table in the warehouse file (docs/push.md "Source columns"), typed as an analyst would.
    await duck(join(dir, 'crm.duckdb'), {}, async (q) => {
      const csv = join(dir, 'seed.csv');
      writeCsv(csv, rows);
      await q(`CREATE TABLE marketing_upserts AS SELECT * FROM read_csv('${csv}', all_varchar = true)`);
      await q(`ALTER TABLE marketing_upserts ALTER cf_membership_number TYPE INTEGER`);
      await q(`ALTER TABLE marketing_upserts ALTER date_of_birth TYPE DATE`);
      rmSync(csv);
    });
    // README "Temporal": with CRMSYNC_EMBEDDED_IDLE set, the embedded server and a background worker outlive the command.
    env = { ...specServerCliEnv(server.baseUrl, dir, 'UTC'), CRMSYNC_EMBEDDED_IDLE: '5m', CRM_MAX_CONCURRENCY: String(MAX_CONCURRENCY) };
    const first = startCli(['push', '--from', 'marketing_upserts'], env, dir, 200_000);
    await waitFor(`${KILL_AFTER} contacts written`, () => posts(server.requests).filter((r) => r.delivered).length >= KILL_AFTER || first.child.exitCode !== null, 150_000);
    const workerPid = readJson(join(dir, 'worker.json'))?.pid;
    first.child.kill('SIGKILL');
    if (typeof workerPid === 'number') process.kill(workerPid, 'SIGKILL');
    killAt = performance.now();
    await first.done;
    if (typeof workerPid === 'number') await waitFor('the worker to die', () => !alive(workerPid), 10_000);
    const tdsPid = readJson(join(dir, 'temporal-dev-server.json'))?.pid;
    if (typeof tdsPid === 'number') startedPids.add(tdsPid);
    // What the ledger held as pushed when the worker died.
    ledgerAtKill = await readWarehouse(dir, (q) => q(`SELECT push_key, outcome, pushed_fingerprint FROM _push_ledger`));
    second = await startCli(['push', '--from', 'marketing_upserts'], env, dir, 200_000).done;
    const secondAt = performance.now();
    // The second command may return while the run it resumed still goes on in the worker (README:
    // the worker outlives the command): wait until the CRM holds every row and is quiet.
    const end = Date.now() + 180_000;
    while (Date.now() < end) {
      const last = server.requests.at(-1)?.arrivedAt ?? 0;
      if (server.contacts.size >= N && performance.now() - last > 4000) {
        settled = true;
        break;
      }
      await sleep(500);
    }
    await stopWorker(dir);
    if (process.env.PUSH_RATE_REPORT) {
      const ps = posts(server.requests);
      const before = ps.filter((r) => r.arrivedAt < killAt);
      const after = ps.filter((r) => r.arrivedAt > secondAt);
      console.log('B', {
        second: `${second.code} ${second.stdout.trim()} ${second.stderr.trim().slice(-300)}`,
        preKillRate: before.length / ((killAt - before[0]!.arrivedAt) / 1000),
        firstPostAfterSecondPushMs: after[0] ? after[0].arrivedAt - secondAt : undefined,
        resumedSpan: after.length ? (after.at(-1)!.arrivedAt - after[0]!.arrivedAt) / 1000 : 0,
        ledgerAtKill: ledgerAtKill.length,
        maxInFlight: server.maxInFlight(),
      });
    }
    ledger = await readWarehouse(dir, (q) => q('SELECT * FROM _push_ledger'));
    runs = await readWarehouse(dir, (q) => q('SELECT * FROM _push_runs ORDER BY started_at'));
    if (process.env.PUSH_RATE_REPORT) console.log('B runs', JSON.stringify(runs));
    thirdFrom = server.requests.length;
    third = await startCli(['push', '--from', 'marketing_upserts'], env, dir, 120_000).done;
    await stopWorker(dir);
  }, 420_000);

  it('the job finishes after the crash: the CRM holds exactly the 1,500 rows with their content', () => {
    expect(killAt).toBeLessThan(Infinity);
    expect(settled, `second push: ${second.code} ${second.stdout} ${second.stderr.slice(-1500)}`).toBe(true);
    expect(server.contacts.size).toBe(N);
    const wrong = rows.filter((r) => canonical(heldContact(server.contacts.get(r.email.toLowerCase())!)) !== canonical(expectedContact(r)));
    expect(wrong.map((r) => r.email).slice(0, 5), `${wrong.length} differ`).toEqual([]);
  });

  it('the ledger is complete: every row succeeded with the CRM contact id (docs/push.md "Ledger and views")', () => {
    expect(ledger).toHaveLength(N);
    const bad = ledger.filter((l) => !(l.outcome === 'succeeded' && l.pushed_fingerprint && String(l.contact_id) === String(server.contacts.get(String(l.push_key))?.id)));
    expect(bad.slice(0, 5), `${bad.length} wrong`).toEqual([]);
  });

  it('no row the ledger held as pushed at the kill is sent again (docs/push.md "Crash safety")', () => {
    const pushed = new Set(ledgerAtKill.filter((l) => l.outcome === 'succeeded' && l.pushed_fingerprint).map((l) => String(l.push_key)));
    expect(pushed.size).toBeGreaterThan(KILL_AFTER / 2);
    const again = posts(server.requests).filter((r) => r.arrivedAt > killAt && pushed.has(r.email));
    expect(again.map((r) => r.email)).toEqual([]);
  });

  it('of the rows written before the kill, only those in flight (at most 16) are sent again (docs/push.md "Crash safety")', () => {
    const ps = posts(server.requests);
    const writtenBefore = new Set(ps.filter((r) => r.wrote && r.arrivedAt < killAt).map((r) => r.email));
    const sentAgain = new Set(ps.filter((r) => r.arrivedAt > killAt && writtenBefore.has(r.email)).map((r) => r.email));
    expect(sentAgain.size).toBeLessThanOrEqual(16);
    // POSTs per email: once, or twice for rows in flight at the kill or whose answer was lost.
    const perEmail = new Map<string, number>();
    for (const r of ps.filter((x) => x.status !== 429)) perEmail.set(r.email, (perEmail.get(r.email) ?? 0) + 1);
    const lostOrFailed = new Set(ps.filter((r) => r.reason === 'lost_after_write' || r.status === 503).map((r) => r.email));
    const many = [...perEmail].filter(([e, n]) => n > 1 && !lostOrFailed.has(e) && !sentAgain.has(e));
    expect(many.slice(0, 5), `${many.length} rows sent more than once`).toEqual([]);
  });

  it(`never has more than CRM_MAX_CONCURRENCY=${MAX_CONCURRENCY} requests in flight (README "Configuration")`, () => {
    expect(server.maxInFlight()).toBeLessThanOrEqual(MAX_CONCURRENCY);
  });

  it('after a 429 with Retry-After: R the CRM sees no request until R has passed (windows across the kill excepted)', () => {
    const reqs = server.requests;
    expect(retryAfterViolations(reqs, (l) => l.doneAt! < killAt && l.doneAt! + l.retryAfter! * 1000 > killAt)).toEqual([]);
    expect(reqs.filter((r) => r.reason === 'rate_limit').length / reqs.length).toBeLessThan(0.01);
  });

  it('_push_runs: the interrupted run ends succeeded with the rows the CRM received, and a third push finds every row unchanged and sends nothing', () => {
    const ps = posts(server.requests.slice(0, thirdFrom));
    const sentRows = new Set(ps.map((r) => r.email)).size;
    const okRows = new Set(ps.filter(ok).map((r) => r.email)).size;
    expect(sentRows).toBe(N);
    expect(okRows).toBe(N);
    // No run is left `running`, none failed, and each row counts as succeeded in exactly one run.
    expect(
      runs.filter((r) => r.status === 'running' || r.status === 'failed'),
      JSON.stringify(runs),
    ).toEqual([]);
    expect(
      runs.reduce((n, r) => n + Number(r.succeeded), 0),
      JSON.stringify(runs),
    ).toBe(okRows);
    expect(
      runs.reduce((n, r) => n + Number(r.failed), 0),
      JSON.stringify(runs),
    ).toBe(0);
    expect(third.code, third.stderr.slice(-1500)).toBe(0);
    const s = parseSummary(third.stdout);
    expect(s, third.stdout).toMatchObject({ plan: { new: 0, changed: 0, retry: 0, unchanged: N, invalid: 0 }, sent: 0 });
    expect(posts(server.requests.slice(thirdFrom))).toEqual([]);
  });
});

// =============================================================================================
describe('C: a strict limit (40 requests/s, no burst) and SIGKILL of `crmsync push` whose workers run inside it (CRMSYNC_EMBEDDED_IDLE=0)', () => {
  const { N, LIMIT } = C;
  let server: RateServer;
  let killAt = 0;
  let rate = 0;
  let rateNote = '';
  let second: CliResult;

  beforeAll(async () => {
    ({ server, killAt, rate, rateNote, second } = await scenarioC);
    if (process.env.PUSH_RATE_REPORT) console.log('C', { rateNote, second: `${second.code} ${second.stderr.trim().slice(-400)}`, contacts: server.contacts.size });
  }, 200_000);

  // docs/push.md "Send": "the shared CRM client, whose adaptive limiter paces requests to the CRM's
  // limit"; "Tests and benchmark": "send rate at least 90% of the limit once the client has found
  // it (after the first tenth of the rows; the whole send, discovery included, at least 85%)";
  // README "Benchmarks": 95% / 92% / 84% of 10 / 50 / 200 req/s limits. Against a token bucket
  // without burst the client settles far below the limit and never comes back up (known; see
  // test/crm/rate-limiter-token-bucket.test.ts).
  it.fails('keeps at least 85% of a 40 requests/s limit after the first tenth of the rows', () => {
    expect(rate, rateNote).toBeGreaterThanOrEqual(0.85 * LIMIT);
  });

  it('after a 429 with Retry-After: R the CRM sees no request until R has passed', () => {
    const before = server.requests.filter((r) => r.arrivedAt <= killAt);
    expect(before.filter((r) => r.status === 429).length).toBeGreaterThan(0);
    expect(retryAfterViolations(before)).toEqual([]);
  });

  // README "Temporal": with CRMSYNC_EMBEDDED_IDLE=0 "the workers run inside each command and stop
  // with it", so SIGKILL of the command is a crash of the worker; docs/push.md "Crash safety": "A
  // batch that restarts after a crashed worker first skips every row whose exact content the ledger
  // shows as pushed", and "Cancelling": "the next push of the source sends only the rows the ledger
  // does not show as pushed"; "One push of a source runs at a time ... follows that one to its
  // end". (It once refused with PUSH_ALREADY_RUNNING, sent nothing, and no process was left that
  // could ever run the stuck workflow.)
  it('a second `crmsync push` of the same source finishes the job: exit 0 and the CRM holds every row', () => {
    expect(second.code, second.stderr.slice(-800)).toBe(0);
    expect(server.contacts.size).toBe(N);
  });
});
