/**
 * What a newcomer meets on the way in: configuration and errors, judged from README.md
 * ("Configuration", "Sync", "Warehouse", the command tables), docs/security.md, docs/warehouse.md,
 * docs/sync.md and the commands' own `--help`, never from crmsync's code. The CLI runs as a user
 * runs it (bin/crmsync.js in a child process) in fresh temp folders, against an independent CRM
 * written from ../shared/spec/crm-rest-api.md (spec-server.ts) and a few small servers of this
 * file's own (an HTML page, a JSON document that is not the CRM, a forwarding proxy).
 * Every command uses the embedded Temporal with CRMSYNC_EMBEDDED_IDLE=0 unless a test says so.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { lookup } from 'node:dns/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBuiltCli } from './built-cli.js';
import { listenOnLoopback } from './loopback.js';
import { PASSWORD, SpecServer, TAGS, USER, type Json } from './spec-server.js';

type Result = { code: number | null; stdout: string; stderr: string };

/** This machine's name, when it resolves to loopback: plain http to it stays on the machine. */
const HOST_ON_LOOPBACK = /^127\./.test((await lookup(hostname(), { family: 4 }).catch(() => undefined))?.address ?? '') && hostname() !== 'localhost';

const TOKEN = Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
/** Every form of the password a leak could take: plain, the Basic token, base64 alone, URL-encoded. */
const PASSWORD_FORMS = [PASSWORD, TOKEN, Buffer.from(PASSWORD).toString('base64'), encodeURIComponent(PASSWORD), PASSWORD.replace(/ /g, '+')];

let server: SpecServer;
const closers: (() => Promise<void>)[] = [];
const scratch: string[] = [];

/** The base environment: nothing of crmsync's but what a test adds (CRMSYNC_EMBEDDED_IDLE=0, quiet logs). */
function baseEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    ...Object.fromEntries(['TEMPORAL_CLI_PATH', 'XDG_CACHE_HOME'].flatMap((k) => (process.env[k] ? [[k, process.env[k]]] : []))),
    CRMSYNC_EMBEDDED_IDLE: '0',
    CRMSYNC_LOG_LEVEL: 'warn',
    ...extra,
  };
}

/** The environment for the spec server, with crmsync's paths left at their defaults (./data under the folder). */
function crmEnv(extra: Record<string, string> = {}): Record<string, string> {
  return baseEnv({ CRM_BASE_URL: server.baseUrl, CRM_USERNAME: USER, CRM_PASSWORD: PASSWORD, ...extra });
}

async function fresh(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'crmsync-indep-config-'));
  scratch.push(dir);
  return dir;
}

function run(args: string[], env: Record<string, string>, cwd: string, timeoutMs = 60_000): Promise<Result> {
  return runBuiltCli(args, env, cwd, timeoutMs);
}

/** Every path under `dir`, relative, sorted. */
async function tree(dir: string): Promise<string[]> {
  return ((await readdir(dir, { recursive: true })) as string[]).sort();
}

/** Every file under `dir` that holds a form of the password. */
async function filesWithPassword(dir: string): Promise<string[]> {
  const hits: string[] = [];
  for (const rel of await tree(dir)) {
    const p = join(dir, rel);
    if (!statSync(p).isFile()) continue;
    const text = (await readFile(p)).toString('latin1');
    if (PASSWORD_FORMS.some((f) => text.includes(f))) hits.push(rel);
  }
  return hits;
}

function expectNoPassword(r: Result): void {
  for (const f of PASSWORD_FORMS) {
    expect(r.stdout.includes(f), `stdout holds the password (${f})`).toBe(false);
    expect(r.stderr.includes(f), `stderr holds the password (${f})`).toBe(false);
  }
}

/** A server of this file: `handle` answers every request; it counts what it received. */
async function smallServer(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const srv = createServer((req, res) => {
    hits++;
    handle(req, res);
  });
  const { port, close } = await listenOnLoopback(srv);
  closers.push(close);
  return { url: `http://127.0.0.1:${port}/v2`, hits: () => hits };
}

const decodeAuth = (req: IncomingMessage): string => Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString();

interface Proxy {
  port: number;
  /** The request targets as they arrived (path and query). */
  seen: string[];
  maxInFlight: number;
  /** Arrival times (ms) of every request. */
  times: number[];
}

/**
 * Forwards to the spec server, which serves at /v2: a `prefix` (e.g. /wp-json/fluent-crm) is
 * stripped; with `restRoute`, a request to `/?rest_route=/fluent-crm/v2/x&...` (WordPress without
 * pretty permalinks) goes to `/v2/x?...`. Anything else is answered 404 rest_no_route. Each answer
 * waits `delayMs`, so concurrent requests overlap.
 */
async function startProxy(opts: { prefix?: string; restRoute?: boolean; delayMs?: number }): Promise<Proxy> {
  const target = new URL(server.baseUrl);
  const state: Proxy = { port: 0, seen: [], maxInFlight: 0, times: [] };
  let inFlight = 0;
  const srv = createServer((req, res) => {
    state.seen.push(req.url ?? '');
    state.times.push(Date.now());
    inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, inFlight);
    const done = (): void => {
      inFlight--;
    };
    const u = new URL(req.url ?? '/', 'http://x');
    let path: string | undefined;
    if (opts.restRoute) {
      const route = u.searchParams.get('rest_route');
      if (u.pathname === '/' && route?.startsWith('/fluent-crm/v2')) {
        u.searchParams.delete('rest_route');
        const q = u.searchParams.toString();
        path = `/v2${route.slice('/fluent-crm/v2'.length)}${q ? `?${q}` : ''}`;
      }
    } else if (opts.prefix && u.pathname.startsWith(`${opts.prefix}/v2`)) {
      path = `${u.pathname.slice(opts.prefix.length)}${u.search}`;
    }
    setTimeout(() => {
      if (path === undefined) {
        res.writeHead(404, { 'content-type': 'application/json; charset=UTF-8' });
        res.end(JSON.stringify({ code: 'rest_no_route', message: 'No route was found matching the URL and request method.', data: { status: 404 } }));
        done();
        return;
      }
      const fwd = httpRequest({ host: target.hostname, port: target.port, method: req.method, path, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
        up.on('end', done);
      });
      fwd.on('error', () => {
        res.writeHead(502);
        res.end();
        done();
      });
      req.pipe(fwd);
    }, opts.delayMs ?? 0);
  });
  const { port, close } = await listenOnLoopback(srv);
  closers.push(close);
  state.port = port;
  return state;
}

/** The tags as `crmsync query -f json` returns them (the catalog the folder's defaults point at). */
async function queryJson(sql: string, env: Record<string, string>, cwd: string): Promise<Record<string, Json>[]> {
  const r = await run(['query', '-q', '-f', 'json', sql], env, cwd);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, Json>[];
}

beforeAll(async () => {
  server = new SpecServer(Array.from({ length: 12 }, (_, i) => i + 1));
  await server.start();
});

afterAll(async () => {
  await server?.close();
  await Promise.all(closers.map((c) => c()));
  for (const d of scratch) await rm(d, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
describe("--help, unknown commands and options (README command tables, each command's --help)", () => {
  // README "Sync" table and "Two commands": the commands a user is told about.
  const COMMANDS = ['sync', 'worker', 'schedule', 'status', 'verify', 'query', 'report', 'push', 'webhooks', 'demo', 'simulator'];

  it("crmsync --help names every command of the README; each command's --help shows the options the README and docs use", async () => {
    const dir = await fresh();
    const top = await run(['--help'], baseEnv(), dir);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/^Usage: crmsync /);
    for (const c of COMMANDS) expect(top.stdout, c).toMatch(new RegExp(`^\\s+${c}\\b`, 'm'));
    // The options each command is documented with (README tables, docs/sync.md "Command line",
    // docs/warehouse.md "Querying", docs/webhooks.md, docs/simulator.md).
    const documented: [string[], string[]][] = [
      [['sync'], ['--stream', '--full', '--reconcile', '--no-reconcile', '--per-page', '--parallelism', '--sweep-runs']],
      [['worker'], ['--warehouse-concurrency']],
      [['status'], ['--json']],
      [['verify'], ['--stream', '--json']],
      [['query'], ['-f, --format', 'table', 'csv', 'json', 'ndjson']],
      [['report'], ['--out', '--open']],
      [['push'], ['--from', '--dry-run']],
      [['schedule'], ['create', 'list', 'pause', 'resume', 'delete']],
      [
        ['schedule', 'create'],
        ['--every', '--reconcile-every', '--stream', '--id'],
      ],
      [['schedule', 'list'], []],
      [['schedule', 'pause'], ['--id']],
      [['schedule', 'resume'], ['--id']],
      [['schedule', 'delete'], ['--id']],
      [['webhooks'], ['serve', 'register', 'dead-letters']],
      [['webhooks', 'serve'], []],
      [['webhooks', 'register'], ['--url']],
      [['webhooks', 'dead-letters'], ['--retry']],
      [['demo'], ['--contacts', '--seed']],
      [['simulator'], ['--contacts', '--port', '--real']],
    ];
    for (const [cmd, options] of documented) {
      const r = await run([...cmd, '--help'], baseEnv(), dir);
      expect(r.code, cmd.join(' ')).toBe(0);
      expect(r.stdout, cmd.join(' ')).toMatch(new RegExp(`^Usage: crmsync ${cmd.join(' ')} `));
      for (const o of options) expect(r.stdout, `${cmd.join(' ')} --help lists ${o}`).toContain(o);
    }
    // `help <command>` says the same as `<command> --help`.
    const viaHelp = await run(['help', 'sync'], baseEnv(), dir);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout).toContain('Usage: crmsync sync');
    // --version prints the package's version.
    const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8')) as { version: string };
    const v = await run(['--version'], baseEnv(), dir);
    expect(v.code).toBe(0);
    expect(v.stdout.trim()).toBe(pkg.version);
    // Help needs no configuration and leaves nothing behind.
    expect(await tree(dir)).toEqual([]);
  }, 180_000);

  it('an unknown command, subcommand or option is refused by name, with a non-zero exit, creating nothing', async () => {
    const dir = await fresh();
    const before = server.requests.length;
    const cases: [string[], RegExp][] = [
      [['bogus'], /unknown command 'bogus'/],
      [['schedule', 'bogus'], /unknown command 'bogus'/],
      [['webhooks', 'bogus'], /unknown command 'bogus'/],
      [['status', '--bogus'], /unknown option '--bogus'/],
      [['sync', '--fulll'], /unknown option '--fulll'/],
      [['query', '--format'], /--format/],
      [['sync', 'extra-arg'], /too many arguments|extra-arg/],
    ];
    for (const [args, message] of cases) {
      const r = await run(args, crmEnv(), dir);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.code, args.join(' ')).not.toBeNull();
      expect(r.stderr, args.join(' ')).toMatch(message);
    }
    expect(await tree(dir)).toEqual([]);
    expect(server.requests.length).toBe(before);
  }, 120_000);

  it('a missing required argument or option is named: query without SQL, push without --from, schedule create without --every, register without --url', async () => {
    const dir = await fresh();
    const cases: [string[], RegExp][] = [
      [['query'], /sql/],
      [['push'], /--from/],
      [['schedule', 'create'], /--every/],
      [['webhooks', 'register'], /--url/],
      [['query', '-f', 'xml', 'SELECT 1'], /--format|table.*csv.*json/],
      [['sync', '--stream', 'bogus'], /bogus.*contacts|contacts.*bogus/s],
      [['sync', '--per-page', 'abc'], /--per-page/],
    ];
    for (const [args, message] of cases) {
      const r = await run(args, crmEnv(), dir);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.code, args.join(' ')).not.toBeNull();
      expect(r.stderr, args.join(' ')).toMatch(message);
    }
    expect(await tree(dir)).toEqual([]);
  }, 120_000);

  // `crmsync query --help` names the option `-n, --max-rows <n>`; the refusal of a bad value names
  // `--maxRows`, an option no user can type (the fix the message points at does not exist).
  it('query -n abc: the message names the option as --help spells it (--max-rows)', async () => {
    const dir = await fresh();
    const r = await run(['query', '-n', 'abc', 'SELECT 1'], baseEnv(), dir);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('--max-rows');
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------
describe('configuration variables: defaults and refusals (README "Configuration")', () => {
  it('with no CRM configured, every command that talks to the CRM names CRM_BASE_URL, CRM_USERNAME and CRM_PASSWORD, and creates nothing', async () => {
    const dir = await fresh();
    await writeFile(join(dir, 'targets.csv'), 'email,status\na@example.test,subscribed\n');
    for (const args of [
      ['sync'],
      ['verify'],
      ['push', '--from', 'targets.csv'],
      ['worker'],
      ['webhooks', 'register', '--url', 'https://hooks.example.test/crm'],
      ['webhooks', 'dead-letters', '--retry'],
    ]) {
      const r = await run(args, baseEnv(), dir);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.code, args.join(' ')).not.toBeNull();
      for (const v of ['CRM_BASE_URL', 'CRM_USERNAME', 'CRM_PASSWORD']) expect(r.stderr, `${args.join(' ')} names ${v}`).toContain(v);
      expect(await tree(dir), args.join(' ')).toEqual(['targets.csv']);
    }
  }, 180_000);

  // Each README variable with a value it does not allow, and what its refusal must say besides
  // the name: the form the README gives for it (or the bound the value broke).
  const BAD: [string, string, RegExp][] = [
    ['CRM_TIMEZONE', 'Mars/Phobos', /time zone|IANA|UTC/i],
    ['CRM_TIMEZONE', '', /time zone|IANA|UTC/i],
    ['CRM_ALLOW_INSECURE_HTTP', 'maybe', /true|1/],
    ['CRM_METHOD_OVERRIDE', 'maybe', /true|1/],
    ['CRM_MAX_RPS', 'abc', /number/],
    ['CRM_MAX_RPS', '0', /positive/],
    ['CRM_MAX_RPS', '-1', /positive/],
    ['CRM_MAX_CONCURRENCY', '0', /positive/],
    ['CRMSYNC_PUBLISH_EVERY', 'xyz', /duration|5m|\b0\b/],
    ['CRMSYNC_LOG_LEVEL', 'loud', /trace.*silent|silent.*trace/s],
    ['CRMSYNC_EMBEDDED_IDLE', 'abc', /duration|10m|\b0\b/],
    ['CRMSYNC_SYNC_MEMORY_LIMIT', 'abc', /MB|GB/],
    ['CRMSYNC_SYNC_THREADS', '0', /positive|whole/],
    ['CRMSYNC_SYNC_CHECKPOINT_THRESHOLD', 'abc', /MB|GB/],
    ['CRMSYNC_SYNC_CONTACT_PAGES', 'foo', /raw.*parsed|parsed.*raw/s],
    ['CRMSYNC_SYNC_TYPE_ASIDE', 'maybe', /\bon\b.*\boff\b|\boff\b.*\bon\b/s],
    ['CRMSYNC_WORKER_HEAP_GROWTH_PERCENT', '-5', /percent|whole|number/],
    ['TEMPORAL_ADDRESS', 'http://temporal:7233/x', /host:port/],
    ['TEMPORAL_ADDRESS', 'not a host', /host:port/],
    ['CRM_WEBHOOK_SECRET', 'short', /16/],
    ['CRMSYNC_WEBHOOK_PORT', '99999', /65535/],
    ['CRMSYNC_WEBHOOK_PORT', 'abc', /number/],
    ['CRMSYNC_WEBHOOK_MAX_EVENT_AGE_HOURS', '-1', /positive|number/],
    ['CRMSYNC_WEBHOOK_MAX_CLOCK_SKEW_SECONDS', 'abc', /number/],
    ['CRMSYNC_WEBHOOK_MAX_CONNECTIONS_PER_ADDRESS', '0', /positive|number/],
  ];

  it('a value a variable does not allow is refused naming the variable and the form it takes, before anything is created or contacted', async () => {
    const dir = await fresh();
    const before = server.requests.length;
    for (const [name, value, fix] of BAD) {
      const r = await run(['sync', '--stream', 'tags'], crmEnv({ [name]: value }), dir);
      const what = `${name}=${JSON.stringify(value)}`;
      expect(r.code, `${what}: ${r.stderr}`).not.toBe(0);
      expect(r.code, what).not.toBeNull();
      expect(r.stderr, what).toContain(name);
      expect(r.stderr, what).toMatch(fix);
      expect(await tree(dir), what).toEqual([]);
      expect(server.requests.length, `${what}: the CRM was contacted`).toBe(before);
      expectNoPassword(r);
    }
  }, 300_000);

  it('defaults: ./data/crm.duckdb, ./data/lake with its catalog, the embedded Temporal in ./data, CRM_TIMEZONE UTC, info logs as JSON lines on stderr', async () => {
    const dir = await fresh();
    const env = crmEnv();
    delete env.CRMSYNC_LOG_LEVEL;
    const r = await run(['sync', '--stream', 'tags'], env, dir);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(dir, 'data', 'crm.duckdb'))).toBe(true);
    expect(existsSync(join(dir, 'data', 'lake', 'catalog.duckdb'))).toBe(true);
    expect(existsSync(join(dir, 'data', 'temporal.sqlite'))).toBe(true);
    // CRMSYNC_EMBEDDED_IDLE=0: the embedded server stopped with the command and left no record.
    expect(existsSync(join(dir, 'data', 'temporal-dev-server.json'))).toBe(false);
    // CRMSYNC_LOG_LEVEL info; stdout is not a terminal, so stderr carries JSON lines, none below info.
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('{'));
    expect(lines.length).toBeGreaterThan(0);
    const levels = lines.map((l) => (JSON.parse(l) as { level: number }).level);
    expect(levels).toContain(30);
    expect(levels.every((l) => l >= 30)).toBe(true);
    // CRM_TIMEZONE UTC: a zone-less `2024-11-02 09:15:00` is that instant in UTC (query prints UTC instants).
    const rows = await queryJson('SELECT id, created_at, updated_at FROM tags ORDER BY id', env, dir);
    expect(rows.map((t) => Number(t.id))).toEqual(TAGS.map((t) => t.id));
    expect(rows.map((t) => t.created_at)).toEqual(TAGS.map((t) => `${t.created_at.replace(' ', 'T')}.000Z`));
    // CRMSYNC_LOG_LEVEL=silent: no log lines at all, the run's own output still on stdout.
    const silent = await run(['sync', '--stream', 'tags'], { ...env, CRMSYNC_LOG_LEVEL: 'silent' }, dir);
    expect(silent.code, silent.stderr).toBe(0);
    expect(silent.stderr.split('\n').filter((l) => l.startsWith('{'))).toEqual([]);
    expect(silent.stdout).toMatch(/tags/);
  }, 180_000);

  it('CRMSYNC_DB, CRMSYNC_LAKE, CRMSYNC_DATA_DIR and CRM_TIMEZONE move the files and the reading of site times; the catalog follows the lake', async () => {
    const dir = await fresh();
    const env = crmEnv({ CRMSYNC_DB: './w/warehouse.duckdb', CRMSYNC_LAKE: './lk', CRMSYNC_DATA_DIR: './st', CRM_TIMEZONE: 'America/New_York' });
    const r = await run(['sync', '--stream', 'tags'], env, dir);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(dir, 'w', 'warehouse.duckdb'))).toBe(true);
    expect(existsSync(join(dir, 'lk', 'catalog.duckdb'))).toBe(true);
    expect(existsSync(join(dir, 'st', 'temporal.sqlite'))).toBe(true);
    expect(existsSync(join(dir, 'data'))).toBe(false);
    // 2024-11-02 09:15 in New York (EDT, UTC-4) is 13:15 UTC; 2024-11-03 10:00 (EST, after the change) is 15:00 UTC.
    const rows = await queryJson('SELECT id, created_at FROM tags WHERE id IN (1, 2) ORDER BY id', env, dir);
    expect(rows.map((t) => t.created_at)).toEqual(['2024-11-02T13:15:00.000Z', '2024-11-03T15:00:00.000Z']);
    // A reader pointed at another catalog (CRMSYNC_CATALOG) does not find this one.
    const elsewhere = await run(['query', 'SELECT count(*) FROM tags'], { ...env, CRMSYNC_CATALOG: './nowhere/catalog.duckdb' }, dir);
    expect(elsewhere.code).not.toBe(0);
    expect(elsewhere.stderr).toContain('nowhere');
  }, 180_000);

  it('CRMSYNC_EMBEDDED_IDLE defaults to 10m: the embedded Temporal and the background worker outlive the command', async () => {
    const dir = await fresh();
    const env = crmEnv();
    delete env.CRMSYNC_EMBEDDED_IDLE;
    const pids: number[] = [];
    try {
      const r = await run(['sync', '--stream', 'tags'], env, dir, 90_000);
      expect(r.code, r.stderr).toBe(0);
      const serverRecord = JSON.parse(await readFile(join(dir, 'data', 'temporal-dev-server.json'), 'utf8')) as { pid: number };
      const workerRecord = JSON.parse(await readFile(join(dir, 'data', 'worker.json'), 'utf8')) as { pid: number };
      pids.push(workerRecord.pid, serverRecord.pid);
      await new Promise((res) => setTimeout(res, 2_000));
      for (const pid of pids) expect(() => process.kill(pid, 0), `pid ${pid} still runs`).not.toThrow();
      // README: the worker logs to <CRMSYNC_DATA_DIR>/worker.log, owner-only (docs/security.md "files").
      expect(statSync(join(dir, 'data', 'worker.log')).mode & 0o077).toBe(0);
    } finally {
      // README: `kill <worker pid>` (SIGTERM drains it); the server's record names its pid.
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          /* gone */
        }
      }
      await new Promise((res) => setTimeout(res, 3_000));
    }
  }, 150_000);

  it('TEMPORAL_ADDRESS where no Temporal answers, or a TEMPORAL_CLI_PATH that is no CLI: the message names the variable, the exit is non-zero and prompt', async () => {
    // README "Temporal": TEMPORAL_ADDRESS set, crmsync connects there; the CLI is found first at TEMPORAL_CLI_PATH.
    const probe = createServer();
    const { port, close } = await listenOnLoopback(probe);
    await close();
    const dir = await fresh();
    const r = await run(['sync', '--stream', 'tags'], crmEnv({ TEMPORAL_ADDRESS: `127.0.0.1:${port}` }), dir, 90_000);
    expect(r.code).not.toBe(0);
    // It ends by itself (a null code: killed at the run's bound, still waiting).
    expect(r.code).not.toBeNull();
    expect(r.stderr).toContain('TEMPORAL_ADDRESS');
    expect(await tree(dir)).toEqual([]);
    const cli = await run(['sync', '--stream', 'tags'], crmEnv({ TEMPORAL_CLI_PATH: join(dir, 'no-such-temporal') }), dir);
    expect(cli.code).not.toBe(0);
    expect(cli.code).not.toBeNull();
    expect(cli.stderr).toContain('TEMPORAL_CLI_PATH');
  }, 150_000);

  // README, CRMSYNC_SYNC_MEMORY_LIMIT: "Running out of it is the error `SYNC_MEMORY_LIMIT`, which
  // says to raise this". A limit far too small gave DuckDB's own "Out of Memory Error" (advice:
  // `SET memory_limit`) as an "unexpected error", and a stack trace of a shut-down channel; now the
  // README says "at least 32MB" and a smaller one is refused, naming the variable.
  it('running out of CRMSYNC_SYNC_MEMORY_LIMIT is the SYNC_MEMORY_LIMIT error, naming the variable to raise', async () => {
    const dir = await fresh();
    const r = await run(['sync', '--stream', 'tags'], crmEnv({ CRMSYNC_SYNC_MEMORY_LIMIT: '1KB' }), dir, 90_000);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('SYNC_MEMORY_LIMIT');
    expect(r.stderr).toContain('CRMSYNC_SYNC_MEMORY_LIMIT');
    expect(r.stderr).not.toMatch(/unexpected error|^\s+at /m);
  }, 120_000);
});

// ---------------------------------------------------------------------------------------------
describe('.env (README "Configuration": a .env file in the working directory, the environment wins)', () => {
  it('a .env file supplies the CRM settings (comments, blank lines, a quoted and an unquoted password with spaces)', async () => {
    for (const pw of [`"${PASSWORD}"`, PASSWORD]) {
      const dir = await fresh();
      await writeFile(join(dir, '.env'), `# crmsync\nCRM_BASE_URL=${server.baseUrl}\n\nCRM_USERNAME=${USER}\nCRM_PASSWORD=${pw}\nCRMSYNC_DATA_DIR=./state\n`);
      const r = await run(['sync', '--stream', 'tags'], baseEnv(), dir);
      expect(r.code, `${pw}: ${r.stderr}`).toBe(0);
      expect(existsSync(join(dir, 'state', 'temporal.sqlite'))).toBe(true);
      expect(await queryJson('SELECT count(*)::INT AS n FROM tags', baseEnv(), dir)).toEqual([{ n: TAGS.length }]);
      expectNoPassword(r);
    }
  }, 120_000);

  it('the environment wins over .env, variable by variable', async () => {
    const dir = await fresh();
    await writeFile(join(dir, '.env'), `CRM_BASE_URL=${server.baseUrl}\nCRM_USERNAME=${USER}\nCRM_PASSWORD=not-the-password\n`);
    // The environment's right password beats the file's wrong one; the rest comes from the file.
    const ok = await run(['sync', '--stream', 'tags'], baseEnv({ CRM_PASSWORD: PASSWORD }), dir);
    expect(ok.code, ok.stderr).toBe(0);
    // The environment's wrong username beats the file's right one.
    await writeFile(join(dir, '.env'), `CRM_BASE_URL=${server.baseUrl}\nCRM_USERNAME=${USER}\nCRM_PASSWORD=${PASSWORD}\n`);
    const denied = await run(['sync', '--stream', 'tags'], baseEnv({ CRM_USERNAME: 'someone-else' }), dir);
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toMatch(/CRM_USERNAME/);
    expectNoPassword(denied);
  }, 120_000);

  it("a .env in a parent folder is not read: only the working directory's", async () => {
    const dir = await fresh();
    await writeFile(join(dir, '.env'), `CRM_BASE_URL=${server.baseUrl}\nCRM_USERNAME=${USER}\nCRM_PASSWORD=${PASSWORD}\n`);
    await mkdir(join(dir, 'sub'));
    const before = server.requests.length;
    const r = await run(['sync', '--stream', 'tags'], baseEnv(), join(dir, 'sub'));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('CRM_BASE_URL');
    expect(server.requests.length).toBe(before);
    expect(await tree(join(dir, 'sub'))).toEqual([]);
  }, 60_000);

  it('a .env over 1 MiB is refused naming .env and the limit; one of exactly 1 MiB is read', async () => {
    const dir = await fresh();
    const head = `CRM_BASE_URL=${server.baseUrl}\nCRM_USERNAME=${USER}\nCRM_PASSWORD=${PASSWORD}\n`;
    const pad = (total: number): string => `${head}#${'x'.repeat(total - head.length - 2)}\n`;
    await writeFile(join(dir, '.env'), pad(1024 * 1024 + 1));
    const before = server.requests.length;
    const over = await run(['sync', '--stream', 'tags'], baseEnv(), dir);
    expect(over.code).not.toBe(0);
    expect(over.stderr).toContain('.env');
    expect(over.stderr).toMatch(/1 MiB|1,?048,?576/);
    expect(server.requests.length).toBe(before);
    expect(await tree(dir)).toEqual(['.env']);
    expectNoPassword(over);
    await writeFile(join(dir, '.env'), pad(1024 * 1024));
    expect(statSync(join(dir, '.env')).size).toBe(1024 * 1024);
    const at = await run(['sync', '--stream', 'tags'], baseEnv(), dir);
    expect(at.code, at.stderr).toBe(0);
  }, 120_000);
});

// ---------------------------------------------------------------------------------------------
describe('size limits on values (README "Configuration", docs/security.md "Size limits")', () => {
  // Each value may have at most 4,096 characters (CRM_BASE_URL 2,048, CRM_USERNAME 256,
  // CRM_PASSWORD and CRM_WEBHOOK_SECRET 1,024).
  const LIMITS: [string, number, (n: number) => string][] = [
    ['CRM_BASE_URL', 2048, (n) => `${server.baseUrl.slice(0, -3)}/${'a'.repeat(n - server.baseUrl.length - 1)}/v2`],
    ['CRM_USERNAME', 256, (n) => 'u'.repeat(n)],
    ['CRM_PASSWORD', 1024, (n) => 'p'.repeat(n)],
    ['CRM_WEBHOOK_SECRET', 1024, (n) => 's'.repeat(n)],
    ['CRMSYNC_TASK_QUEUE', 4096, (n) => 'q'.repeat(n)],
    ['CRM_TIMEZONE', 4096, (n) => 'z'.repeat(n)],
    ['CRMSYNC_DB', 4096, (n) => `/tmp/${'d'.repeat(n - 5)}`],
  ];

  it('one character over is refused naming the variable and its limit, without quoting the value, in the environment or .env', async () => {
    for (const [name, limit, make] of LIMITS) {
      const value = make(limit + 1);
      expect(value.length).toBe(limit + 1);
      for (const where of ['environment', '.env'] as const) {
        const dir = await fresh();
        const before = server.requests.length;
        let env = crmEnv({ [name]: value });
        if (where === '.env') {
          env = crmEnv();
          delete env[name];
          await writeFile(join(dir, '.env'), `${name}=${value}\n`);
        }
        const r = await run(['sync', '--stream', 'tags'], env, dir);
        const what = `${name} of ${limit + 1} in ${where}`;
        expect(r.code, what).not.toBe(0);
        expect(r.stderr, what).toContain(name);
        expect(r.stderr, what).toMatch(new RegExp(`${limit}|${limit.toLocaleString('en-US')}`));
        expect(r.stderr.includes(value.slice(0, 200)), `${what}: the value was quoted`).toBe(false);
        expect(server.requests.length, `${what}: the CRM was contacted`).toBe(before);
        expect(await tree(dir), what).toEqual(where === '.env' ? ['.env'] : []);
      }
    }
  }, 300_000);

  it('a value of exactly the limit is not refused for its size', async () => {
    // A site answering an HTML page: reaching it shows the value passed the size check.
    const page = await smallServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>maintenance</body></html>');
    });
    const dir = await fresh();
    for (const [name, limit, make] of LIMITS) {
      const value = name === 'CRM_BASE_URL' ? `${page.url.slice(0, -3)}/${'a'.repeat(limit - page.url.length - 1)}/v2` : make(limit);
      expect(value.length).toBe(limit);
      const hits = page.hits();
      const r = await run(['sync', '--stream', 'tags'], crmEnv({ CRM_BASE_URL: page.url, [name]: value }), dir);
      expect(r.code, name).not.toBe(0);
      expect(r.stderr, `${name} of ${limit}`).not.toMatch(new RegExp(`more than the ${limit}|${limit} characters|too long`, 'i'));
      // CRM_TIMEZONE of 4,096 z's is no time zone: refused for that before any request.
      if (name === 'CRM_TIMEZONE') expect(r.stderr).toMatch(/CRM_TIMEZONE.*time zone/i);
      else expect(page.hits(), `${name} of ${limit}: the CRM was not contacted`).toBeGreaterThan(hits);
    }
  }, 300_000);
});

// ---------------------------------------------------------------------------------------------
describe('CRM_BASE_URL forms (README "Configuration", docs/security.md 1 and 4)', () => {
  it('a trailing slash reaches the same routes as without it', async () => {
    const dir = await fresh();
    const from = server.requests.length;
    const r = await run(['sync', '--stream', 'tags'], crmEnv({ CRM_BASE_URL: `${server.baseUrl}/` }), dir);
    expect(r.code, r.stderr).toBe(0);
    const paths = server.requests.slice(from).map((q) => q.path);
    expect(paths).toContain('/v2/tags');
    expect(paths.filter((p) => p.includes('//'))).toEqual([]);
    expect(await queryJson('SELECT count(*)::INT AS n FROM tags', crmEnv(), dir)).toEqual([{ n: TAGS.length }]);
  }, 90_000);

  it('a base URL with a path (/wp-json/fluent-crm/v2) keeps its path on every request', async () => {
    const proxy = await startProxy({ prefix: '/wp-json/fluent-crm' });
    const dir = await fresh();
    const r = await run(['sync', '--stream', 'tags', '--stream', 'lists'], crmEnv({ CRM_BASE_URL: `http://127.0.0.1:${proxy.port}/wp-json/fluent-crm/v2` }), dir);
    expect(r.code, r.stderr).toBe(0);
    expect(proxy.seen.length).toBeGreaterThan(0);
    expect(proxy.seen.filter((s) => !s.startsWith('/wp-json/fluent-crm/v2/'))).toEqual([]);
    expect(await queryJson('SELECT count(*)::INT AS n FROM lists', crmEnv(), dir)).toEqual([{ n: 3 }]);
  }, 90_000);

  it('https://site/?rest_route=/fluent-crm/v2 (a site without pretty permalinks) puts every route in rest_route', async () => {
    const proxy = await startProxy({ restRoute: true });
    const dir = await fresh();
    const r = await run(['sync', '--stream', 'tags', '--stream', 'campaigns'], crmEnv({ CRM_BASE_URL: `http://127.0.0.1:${proxy.port}/?rest_route=/fluent-crm/v2` }), dir);
    expect(r.code, r.stderr).toBe(0);
    expect(proxy.seen.length).toBeGreaterThan(0);
    for (const s of proxy.seen) expect(new URL(s, 'http://x').searchParams.get('rest_route'), s).toMatch(/^\/fluent-crm\/v2\/\S+/);
    expect(await queryJson('SELECT count(*)::INT AS n FROM campaigns', crmEnv(), dir)).toEqual([{ n: 3 }]);
  }, 90_000);

  it('a base URL not ending in the version segment fails naming CRM_BASE_URL and /v2', async () => {
    const dir = await fresh();
    const r = await run(['sync', '--stream', 'tags'], crmEnv({ CRM_BASE_URL: server.baseUrl.replace(/\/v2$/, '/') }), dir);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('CRM_BASE_URL');
    expect(r.stderr).toContain('/v2');
    expectNoPassword(r);
  }, 60_000);

  it('credentials in the URL, another query, a fragment, another scheme or no URL at all are refused before any request, the URL never echoed', async () => {
    const dir = await fresh();
    const base = new URL(server.baseUrl);
    const cases: [string, RegExp][] = [
      [`http://${USER}:${encodeURIComponent(PASSWORD)}@${base.host}/v2`, /CRM_USERNAME|CRM_PASSWORD/],
      [`http://${USER}@${base.host}/v2`, /CRM_USERNAME|credentials/],
      [`${server.baseUrl}?secret-query=1`, /query|rest_route/],
      [`${server.baseUrl}#secret-fragment`, /fragment/],
      [`ftp://${base.host}/v2`, /https/],
      ['not a url secret-token-77', /https?:\/\//],
    ];
    const before = server.requests.length;
    for (const [url, fix] of cases) {
      const r = await run(['sync', '--stream', 'tags'], crmEnv({ CRM_BASE_URL: url }), dir);
      expect(r.code, url).not.toBe(0);
      expect(r.stderr, url).toContain('CRM_BASE_URL');
      expect(r.stderr, url).toMatch(fix);
      for (const secret of ['secret-query', 'secret-fragment', 'secret-token-77', encodeURIComponent(PASSWORD)]) expect(r.stderr.includes(secret), `${url} echoed`).toBe(false);
      expectNoPassword(r);
      expect(await tree(dir), url).toEqual([]);
    }
    expect(server.requests.length).toBe(before);
  }, 120_000);

  it('plain http to a host other than loopback is refused by every command that talks to the CRM unless CRM_ALLOW_INSECURE_HTTP, before anything starts', async () => {
    const dir = await fresh();
    await writeFile(join(dir, 'targets.csv'), 'email,status\na@example.test,subscribed\n');
    const port = new URL(server.baseUrl).port;
    // A name, not a loopback address, whatever it resolves to; and a look-alike of loopback.
    for (const host of [`${hostname()}:${port}`, '127.0.0.1.example.test']) {
      const env = crmEnv({ CRM_BASE_URL: `http://${host}/v2`, CRM_WEBHOOK_SECRET: 'a-webhook-secret-of-32-characters' });
      for (const args of [
        ['sync'],
        ['verify'],
        ['push', '--from', 'targets.csv', '--dry-run'],
        ['push', '--from', 'targets.csv'],
        ['worker'],
        ['webhooks', 'serve', '--port', '0'],
        ['webhooks', 'dead-letters', '--retry'],
      ]) {
        const what = `${args.join(' ')} to ${host}`;
        const r = await run(args, env, dir);
        expect(r.code, what).not.toBe(0);
        expect(r.code, what).not.toBeNull();
        expect(r.stderr, what).toContain('CRM_ALLOW_INSECURE_HTTP');
        expect(r.stderr, what).toContain('https');
        expect(await tree(dir), what).toEqual(['targets.csv']);
      }
    }
    // Loopback by name or address needs no permission (localhost, 127.x).
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`]) {
      const r = await run(['sync', '--stream', 'tags'], crmEnv({ CRM_BASE_URL: `http://${host}/v2` }), dir);
      expect(r.code, `${host}: ${r.stderr}`).toBe(0);
    }
  }, 300_000);

  // Only where this machine's name resolves to loopback: no traffic may leave the machine.
  it.skipIf(!HOST_ON_LOOPBACK)(
    'CRM_ALLOW_INSECURE_HTTP=1 (or true) lets plain http reach a named host',
    async () => {
      const port = new URL(server.baseUrl).port;
      for (const allow of ['1', 'true']) {
        const dir = await fresh();
        const r = await run(['sync', '--stream', 'tags'], crmEnv({ CRM_BASE_URL: `http://${hostname()}:${port}/v2`, CRM_ALLOW_INSECURE_HTTP: allow }), dir);
        expect(r.code, `${allow}: ${r.stderr}`).toBe(0);
      }
    },
    120_000,
  );

  it('CRM_MAX_CONCURRENCY=1 keeps one request in flight at the CRM, CRM_MAX_RPS=4 about four a second', async () => {
    const proxy = await startProxy({ prefix: '/p', delayMs: 60 });
    const dir = await fresh();
    const url = `http://127.0.0.1:${proxy.port}/p/v2`;
    const one = await run(['sync'], crmEnv({ CRM_BASE_URL: url, CRM_MAX_CONCURRENCY: '1' }), dir, 120_000);
    expect(one.code, one.stderr).toBe(0);
    expect(proxy.seen.length).toBeGreaterThan(10);
    expect(proxy.maxInFlight).toBe(1);
    const paced = await startProxy({ prefix: '/p' });
    const dir2 = await fresh();
    const r = await run(['sync'], crmEnv({ CRM_BASE_URL: `http://127.0.0.1:${paced.port}/p/v2`, CRM_MAX_RPS: '4' }), dir2, 120_000);
    expect(r.code, r.stderr).toBe(0);
    const t = paced.times;
    expect(t.length).toBeGreaterThan(10);
    // At 4 a second, n requests span at least (n - 1) / 4 s, less a burst of a few.
    let worst = 0;
    for (let i = 0; i < t.length; i++) worst = Math.max(worst, t.filter((x) => x >= t[i]! && x < t[i]! + 1_000).length);
    expect(worst, `requests in the busiest second: ${worst}`).toBeLessThanOrEqual(6);
  }, 300_000);
});

// ---------------------------------------------------------------------------------------------
describe('a CRM that refuses, is not there, or is not a CRM: the cause, the fix, no password anywhere', () => {
  it('wrong credentials: names CRM_USERNAME / CRM_PASSWORD, exits non-zero, creates nothing (sync checks the credentials first)', async () => {
    const dir = await fresh();
    const r = await run(['sync'], crmEnv({ CRM_PASSWORD: 'a wrong one 9999' }), dir);
    expect(r.code).not.toBe(0);
    expect(r.code).not.toBeNull();
    expect(r.stderr).toMatch(/CRM_USERNAME/);
    expect(r.stderr).toMatch(/CRM_PASSWORD/);
    expect(r.stderr).toMatch(/401|credentials/i);
    expect(r.stderr.includes('a wrong one 9999')).toBe(false);
    expect(await tree(dir)).toEqual([]);
    // The same from verify.
    const v = await run(['verify'], crmEnv({ CRM_PASSWORD: 'a wrong one 9999' }), dir);
    expect(v.code).not.toBe(0);
    expect(v.stderr.includes('a wrong one 9999')).toBe(false);
  }, 120_000);

  it('a CRM whose 401 and HTML pages echo the credentials: the messages name the cause and the fix, the password redacted', async () => {
    const echo401 = await smallServer((req, res) => {
      res.writeHead(401, { 'content-type': 'application/json; charset=UTF-8' });
      res.end(JSON.stringify({ code: 'rest_forbidden', message: `Sorry ${decodeAuth(req)} (${req.headers.authorization ?? ''}) is not allowed`, data: { status: 401 } }));
    });
    const html = await smallServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=UTF-8' });
      res.end(`<!doctype html><html><body>Welcome back ${decodeAuth(req)} ${req.headers.authorization ?? ''} ${encodeURIComponent(decodeAuth(req))}</body></html>`);
    });
    for (const [url, cause, fix] of [
      [echo401.url, /401|rejected|credentials/i, /CRM_PASSWORD/],
      [html.url, /HTML/i, /CRM_BASE_URL/],
    ] as const) {
      const dir = await fresh();
      const r = await run(['sync'], crmEnv({ CRM_BASE_URL: url }), dir);
      expect(r.code, r.stderr).not.toBe(0);
      expect(r.stderr).toMatch(cause);
      expect(r.stderr).toMatch(fix);
      expectNoPassword(r);
      expect(await filesWithPassword(dir)).toEqual([]);
    }
    expect(echo401.hits()).toBeGreaterThan(0);
    expect(html.hits()).toBeGreaterThan(0);
  }, 120_000);

  it('an unreachable CRM: names the network and CRM_BASE_URL, exits non-zero promptly, creates nothing', async () => {
    // A port that was just free: nothing listens there.
    const probe = createServer();
    const { port, close } = await listenOnLoopback(probe);
    await close();
    const dir = await fresh();
    const r = await run(['sync'], crmEnv({ CRM_BASE_URL: `http://127.0.0.1:${port}/v2` }), dir);
    expect(r.code).not.toBe(0);
    // It ends by itself (a null code: killed at the run's bound, still waiting).
    expect(r.code).not.toBeNull();
    expect(r.stderr).toContain('CRM_BASE_URL');
    expect(r.stderr).toMatch(/refused|ECONNREFUSED|reach|network/i);
    expectNoPassword(r);
    expect(await tree(dir)).toEqual([]);
  }, 90_000);

  it('a JSON service that is not the CRM (echoing the credentials): the sync fails non-zero naming what did not match, and no output, log (worker.log) or file holds the password', async () => {
    const notCrm = await smallServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
      res.end(JSON.stringify({ service: 'inventory', items: [1, 2], caller: decodeAuth(req), header: req.headers.authorization ?? '' }));
    });
    const dir = await fresh();
    // A short idle period: the background worker (which writes worker.log) and the embedded server stop by themselves.
    const env = crmEnv({ CRM_BASE_URL: notCrm.url, CRMSYNC_EMBEDDED_IDLE: '2s', CRMSYNC_LOG_LEVEL: 'trace' });
    const r = await run(['sync'], env, dir, 120_000);
    const workerPid = existsSync(join(dir, 'data', 'worker.json')) ? (JSON.parse(await readFile(join(dir, 'data', 'worker.json'), 'utf8')) as { pid: number }).pid : undefined;
    const serverPid = existsSync(join(dir, 'data', 'temporal-dev-server.json'))
      ? (JSON.parse(await readFile(join(dir, 'data', 'temporal-dev-server.json'), 'utf8')) as { pid: number }).pid
      : undefined;
    try {
      expect(r.code, r.stderr).not.toBe(0);
      expect(r.code).not.toBeNull();
      expect(notCrm.hits()).toBeGreaterThan(0);
      // The cause: which route answered what was not expected.
      expect(r.stderr).toMatch(/\/subscribers|\/tags/);
      expect(r.stderr).toMatch(/expected|shape|not the CRM|CRM_BASE_URL/i);
      expectNoPassword(r);
      // Wait for the lingering processes to end by themselves (idle 2s), then read every file.
      const deadline = Date.now() + 40_000;
      const alive = (pid: number | undefined): boolean => {
        if (pid === undefined) return false;
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      while ((alive(workerPid) || alive(serverPid)) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 500));
      expect(existsSync(join(dir, 'data', 'worker.log'))).toBe(true);
      expect((await readFile(join(dir, 'data', 'worker.log'), 'utf8')).length).toBeGreaterThan(0);
      expect(await filesWithPassword(dir)).toEqual([]);
    } finally {
      for (const pid of [workerPid, serverPid]) {
        if (pid === undefined) continue;
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          /* ended by itself */
        }
      }
    }
  }, 180_000);

  // ../shared/spec/crm-rest-api.md, Custom fields: `GET /custom-fields/contacts` "Returns object
  // `fields`, an array of custom field definitions". A JSON answer without `fields` (what the
  // non-CRM service above answers there too) is taken as a CRM with no custom fields: the stream
  // reports "done, 0 rows" and the command exits 0, saying nothing of the answer it could not read.
  it('a custom-fields answer without `fields` fails the stream, naming the route, instead of passing as no fields', async () => {
    const dir = await fresh();
    const first = await run(['sync', '--stream', 'custom_fields'], crmEnv(), dir);
    expect(first.code, first.stderr).toBe(0);
    const count = async (): Promise<number> => Number((await queryJson('SELECT count(*)::INT AS n FROM custom_fields', crmEnv(), dir))[0]!.n);
    const held = await count();
    expect(held).toBeGreaterThan(0);
    server.overrides.set('/custom-fields/contacts', { service: 'inventory', items: [] });
    try {
      const r = await run(['sync', '--stream', 'custom_fields'], crmEnv(), dir);
      expect(await count()).toBe(held);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('/custom-fields/contacts');
    } finally {
      server.overrides.delete('/custom-fields/contacts');
    }
  }, 120_000);
});

// ---------------------------------------------------------------------------------------------
describe('status, query and schedule list before any sync (README "Warehouse", docs/sync.md, docs/warehouse.md)', () => {
  it('status says nothing was published and to run crmsync sync, starts no Temporal and creates nothing; --json is JSON', async () => {
    const dir = await fresh();
    const r = await run(['status'], crmEnv(), dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).toContain('crmsync sync');
    expect(r.stdout).toMatch(/contacts/);
    const j = await run(['status', '--json'], crmEnv(), dir);
    expect(j.code, j.stderr).toBe(0);
    const report = JSON.parse(j.stdout) as { streams?: { stream: string }[] };
    expect(report.streams?.map((s) => s.stream)).toContain('contacts');
    expect(await tree(dir)).toEqual([]);
  }, 60_000);

  it('query before any sync: a query on files or constants runs and says there is no catalog yet; a query on the warehouse names `crmsync sync`; nothing is created', async () => {
    const dir = await fresh();
    await writeFile(join(dir, 'people.csv'), 'email,score\na@example.test,3\nb@example.test,4\n');
    const constant = await run(['query', '-f', 'csv', 'SELECT 42 AS answer'], crmEnv(), dir);
    expect(constant.code, constant.stderr).toBe(0);
    expect(constant.stdout.trim().split('\n')).toEqual(['answer', '42']);
    expect(constant.stderr).toContain('crmsync sync');
    const file = await run(['query', '-q', '-f', 'json', "SELECT sum(score)::INT AS s FROM read_csv('people.csv')"], crmEnv(), dir);
    expect(file.code, file.stderr).toBe(0);
    expect(JSON.parse(file.stdout)).toEqual([{ s: 7 }]);
    const warehouse = await run(['query', 'SELECT count(*) FROM contacts_current'], crmEnv(), dir);
    expect(warehouse.code).not.toBe(0);
    expect(warehouse.stderr).toContain('crmsync sync');
    expect(await tree(dir)).toEqual(['people.csv']);
  }, 60_000);

  it('schedule list before any embedded server ran says `no schedules` without creating anything', async () => {
    const dir = await fresh();
    const r = await run(['schedule', 'list'], crmEnv(), dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/no schedules/);
    expect(await tree(dir)).toEqual([]);
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------
describe('crmsync query is read-only (docs/warehouse.md "Querying")', () => {
  it('COPY, EXPORT DATABASE, ATTACH, INSTALL, SET, PRAGMA and other writes are refused (QUERY_NOT_READ_ONLY, exit 1) and write nothing; SELECTs and file reads work', async () => {
    const dir = await fresh();
    const synced = await run(['sync', '--stream', 'tags'], crmEnv(), dir);
    expect(synced.code, synced.stderr).toBe(0);
    const catalog = join(dir, 'data', 'lake', 'catalog.duckdb');
    const digest = (): string => createHash('sha256').update(readFileSync(catalog)).digest('hex');
    const before = digest();
    const treeBefore = await tree(dir);
    const writes = [
      "COPY (SELECT * FROM tags) TO 'out.csv'",
      "COPY tags TO 'out2.parquet' (FORMAT parquet)",
      "EXPORT DATABASE 'exported'",
      "ATTACH 'other.duckdb' AS other",
      'INSTALL httpfs',
      'LOAD httpfs',
      'SET threads = 1',
      "PRAGMA memory_limit = '1GB'",
      'CREATE TABLE t AS SELECT 1 AS x',
      'CREATE VIEW v AS SELECT 1 AS x',
      'INSERT INTO tags (id) VALUES (999)',
      'UPDATE tags SET title = NULL',
      'DELETE FROM tags',
      'DROP VIEW tags',
      'CHECKPOINT',
      "SELECT 1; COPY (SELECT 1) TO 'out3.csv'",
      "EXPLAIN ANALYZE COPY (SELECT 1) TO 'out4.csv'",
    ];
    for (const sql of writes) {
      const r = await run(['query', sql], crmEnv(), dir);
      expect(r.code, sql).toBe(1);
      expect(r.stderr, sql).toContain('QUERY_NOT_READ_ONLY');
    }
    // Nor through DuckDB's query() table function.
    const nested = await run(['query', "SELECT * FROM query('COPY (SELECT 1) TO ''out5.csv''')"], crmEnv(), dir);
    expect(nested.code).not.toBe(0);
    expect(await tree(dir)).toEqual(treeBefore);
    expect(digest()).toBe(before);
    // Reads still work: the views and a file named in the query.
    expect(await queryJson('SELECT count(*)::INT AS n FROM tags', crmEnv(), dir)).toEqual([{ n: TAGS.length }]);
    await writeFile(join(dir, 'x.csv'), 'a\n1\n2\n');
    expect(await queryJson("SELECT count(*)::INT AS n FROM read_csv('x.csv')", crmEnv(), dir)).toEqual([{ n: 2 }]);
  }, 240_000);
});

// ---------------------------------------------------------------------------------------------
describe('exit codes the README documents', () => {
  it('push --dry-run exits 1 when rows are invalid and 0 when all are valid, sending nothing', async () => {
    const dir = await fresh();
    await writeFile(join(dir, 'bad.csv'), 'email,status\nnot-an-email,subscribed\nok@example.test,subscribed\n');
    await writeFile(join(dir, 'good.csv'), 'email,status\nok@example.test,subscribed\n');
    const from = server.requests.length;
    const bad = await run(['push', '--from', 'bad.csv', '--dry-run'], crmEnv(), dir);
    expect(bad.code, bad.stderr).toBe(1);
    const good = await run(['push', '--from', 'good.csv', '--dry-run'], crmEnv(), dir);
    expect(good.code, good.stderr).toBe(0);
    expect(server.requests.slice(from).filter((q) => q.method !== 'GET')).toEqual([]);
  }, 120_000);
});
