// `crmsync schedule` (create --every, --reconcile-every, list, pause, resume, delete) as a user runs
// it: the built CLI in child processes, the embedded Temporal (TEMPORAL_ADDRESS unset, stopping with
// each command: CRMSYNC_EMBEDDED_IDLE=0), `crmsync worker` in the background, and an independent
// CRM (spec-server.ts) behind a small proxy that can slow it down or make it echo the credentials.
// Expected behaviour comes from README.md ("Temporal", "Sync"), docs/sync.md ("Schedules") and the
// commands' --help; Temporal's own view of the schedule is read with the Temporal SDK client, and
// what landed with `crmsync query`.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection, type ScheduleDescription } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, SpecServer, USER, seedContact, specServerCliEnv } from './spec-server.js';
import { runBuiltCli } from './built-cli.js';

const BIN = fileURLToPath(new URL('../../bin/crmsync.js', import.meta.url));
const DEFAULT_ID = 'crmsync-sync-schedule';
const BASIC = Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

type Out = { code: number | null; stdout: string; stderr: string };

/** Every output of every command, to check that the CRM password never shows. */
const allOutput: string[] = [];

function noCredentials(text: string): void {
  expect(text).not.toContain(PASSWORD);
  expect(text).not.toContain(BASIC);
  expect(text).not.toContain(encodeURIComponent(PASSWORD));
}

/** Every string in `v`, bytes (payloads) decoded as UTF-8, joined: what a printout of it could show. */
function textOf(v: unknown, seen = new Set<unknown>()): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v !== 'object') return String(v);
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  if (seen.has(v)) return '';
  seen.add(v);
  const parts: string[] = [];
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) parts.push(k, textOf(x, seen));
  return parts.join(' ');
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs: number, everyMs = 500): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/**
 * A loopback proxy in front of the spec server: `delayMs` holds each request back; `echo` answers
 * every request 401 with a body that quotes the Authorization header and the password it carries
 * (a CRM or a proxy that echoes what it was sent).
 */
class CrmProxy {
  delayMs = 0;
  echo = false;
  baseUrl = '';
  private server: Server;
  constructor(private upstreamPort: number) {
    this.server = createServer((req, res) => {
      const go = (): void => {
        if (this.echo) {
          const auth = req.headers.authorization ?? '';
          const decoded = Buffer.from(auth.replace(/^Basic /, ''), 'base64').toString();
          res.writeHead(401, { 'content-type': 'application/json; charset=UTF-8' });
          res.end(JSON.stringify({ code: 'rest_not_logged_in', message: `Invalid credentials: ${auth} (${decoded})`, data: { status: 401, sent: auth } }));
          return;
        }
        const up = httpRequest({ host: '127.0.0.1', port: this.upstreamPort, method: req.method, path: req.url, headers: req.headers }, (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        });
        up.on('error', () => res.destroy());
        req.pipe(up);
      };
      if (this.delayMs > 0) setTimeout(go, this.delayMs);
      else go();
    });
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
}

let server: SpecServer;
let proxy: CrmProxy;

beforeAll(async () => {
  server = new SpecServer(Array.from({ length: 30 }, (_, i) => i + 1));
  const url = await server.start();
  proxy = new CrmProxy(Number(new URL(url).port));
  await proxy.start();
});

afterAll(async () => {
  await proxy?.close();
  await server?.close();
  // Errors must never print the CRM password (docs/security.md 1).
  for (const text of allOutput) noCredentials(text);
});

function cli(env: Record<string, string>, dir: string) {
  return async (args: string[], timeoutMs = 60_000): Promise<Out> => {
    const r = await runBuiltCli(args, env, dir, timeoutMs);
    allOutput.push(r.stdout, r.stderr);
    return r;
  };
}

/** The lines of `schedule list` that name `id` (first column). */
function listed(out: Out, id: string): string[] {
  return out.stdout.split('\n').filter((l) => l.trim().split(/\s+/)[0] === id);
}

describe('crmsync schedule, embedded Temporal stopping with each command (no worker)', () => {
  let dir: string;
  let run: (args: string[]) => Promise<Out>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'crmsync-sched-'));
    run = cli(specServerCliEnv(proxy.baseUrl, dir, 'UTC'), dir);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('list before any embedded server has run says `no schedules` and creates nothing (docs/sync.md, Schedules)', async () => {
    const r = await run(['schedule', 'list']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/no schedules/);
    expect(existsSync(join(dir, 'temporal.sqlite'))).toBe(false);
  }, 60_000);

  it('refuses invalid intervals with a message naming the option and a valid form, exit non-zero, before anything is created', async () => {
    for (const bad of ['0', 'abc', '0m', '-5m']) {
      const r = await run(['schedule', 'create', `--every=${bad}`]);
      expect(r.code, `--every ${bad}`).not.toBe(0);
      expect(r.stderr).toContain('--every');
      expect(r.stderr).toContain(bad);
      expect(r.stderr).toMatch(/15m|24h|1h/); // an example of what is accepted
    }
    for (const bad of ['0', 'abc']) {
      const r = await run(['schedule', 'create', '--every', '15m', `--reconcile-every=${bad}`]);
      expect(r.code, `--reconcile-every ${bad}`).not.toBe(0);
      expect(r.stderr).toContain('--reconcile-every');
    }
    const missing = await run(['schedule', 'create']);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('--every');
    const stream = await run(['schedule', 'create', '--every', '15m', '--stream', 'no_such_stream']);
    expect(stream.code).not.toBe(0);
    expect(stream.stderr).toContain('no_such_stream');
    expect(stream.stderr).toContain('contacts'); // names the valid ones
    // Nothing was created: no embedded server ever ran here, and list still has nothing.
    expect(existsSync(join(dir, 'temporal.sqlite'))).toBe(false);
    expect((await run(['schedule', 'list'])).stdout).toMatch(/no schedules/);
  }, 120_000);

  it('create, list, replace, pause, resume and delete, with the state kept in <CRMSYNC_DATA_DIR>/temporal.sqlite across server restarts', async () => {
    const created = await run(['schedule', 'create', '--every', '15m']);
    expect(created.code).toBe(0);
    expect(created.stdout).toContain(DEFAULT_ID);
    expect(existsSync(join(dir, 'temporal.sqlite'))).toBe(true);
    // The server of `create` stopped with it (CRMSYNC_EMBEDDED_IDLE=0); list starts another one on the same file.
    let list = await run(['schedule', 'list']);
    expect(list.code).toBe(0);
    expect(listed(list, DEFAULT_ID)).toHaveLength(1);
    expect(listed(list, DEFAULT_ID)[0]).toContain('every 15m'); // "the interval as given"
    expect(listed(list, DEFAULT_ID)[0]).not.toMatch(/paused/);

    // create again with the same id: "create (or replace) the sync schedule" (--help).
    const replaced = await run(['schedule', 'create', '--every', '1h30m']);
    expect(replaced.code).toBe(0);
    list = await run(['schedule', 'list']);
    expect(listed(list, DEFAULT_ID)).toHaveLength(1);
    expect(listed(list, DEFAULT_ID)[0]).toContain('every 1h30m');
    expect(list.stdout).not.toContain('every 15m');

    // A refused create leaves the existing schedule as it was.
    const refused = await run(['schedule', 'create', '--every', 'abc']);
    expect(refused.code).not.toBe(0);
    list = await run(['schedule', 'list']);
    expect(listed(list, DEFAULT_ID)[0]).toContain('every 1h30m');

    // A second schedule under another id sits beside it.
    expect((await run(['schedule', 'create', '--every', '2h', '--id', 'crmsync-contacts-only', '--stream', 'contacts'])).code).toBe(0);
    list = await run(['schedule', 'list']);
    expect(listed(list, DEFAULT_ID)[0]).toContain('every 1h30m');
    expect(listed(list, 'crmsync-contacts-only')[0]).toContain('every 2h');

    const paused = await run(['schedule', 'pause']);
    expect(paused.code).toBe(0);
    list = await run(['schedule', 'list']);
    expect(listed(list, DEFAULT_ID)[0]).toMatch(/paused/);
    expect(listed(list, 'crmsync-contacts-only')[0]).not.toMatch(/paused/);
    const resumed = await run(['schedule', 'resume']);
    expect(resumed.code).toBe(0);
    list = await run(['schedule', 'list']);
    expect(listed(list, DEFAULT_ID)[0]).not.toMatch(/paused/);

    // Managing a schedule that does not exist fails, and says how to see or make one.
    for (const verb of ['pause', 'resume', 'delete']) {
      const r = await run(['schedule', verb, '--id', 'crmsync-no-such-schedule']);
      expect(r.code, verb).not.toBe(0);
      expect(r.stderr).toContain('crmsync-no-such-schedule');
      expect(r.stderr).toMatch(/schedule (list|create)/);
    }

    expect((await run(['schedule', 'delete'])).code).toBe(0);
    list = await run(['schedule', 'list']);
    expect(listed(list, DEFAULT_ID)).toHaveLength(0);
    expect(listed(list, 'crmsync-contacts-only')).toHaveLength(1);
    expect((await run(['schedule', 'delete', '--id', 'crmsync-contacts-only'])).code).toBe(0);
    list = await run(['schedule', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/no schedules/);
  }, 240_000);

  // docs/sync.md, Schedules: "`list` prints the interval as given (`every 15m`)". `--every 90s` was
  // listed as `every 1m30s`, `--every 24h` as `every 1d` (and `60m` as `every 1h`).
  it('list prints the interval as given: `--every 90s` as `every 90s`, `--every 24h` as `every 24h`', async () => {
    try {
      for (const every of ['90s', '24h']) {
        expect((await run(['schedule', 'create', '--every', every, '--id', 'crmsync-as-given'])).code).toBe(0);
        const list = await run(['schedule', 'list']);
        expect(listed(list, 'crmsync-as-given')).toHaveLength(1);
        expect(listed(list, 'crmsync-as-given')[0]).toMatch(new RegExp(`every ${every}(\\s|$)`));
      }
    } finally {
      await run(['schedule', 'delete', '--id', 'crmsync-as-given']);
    }
  }, 120_000);

  // docs/sync.md, Schedules: "`crmsync schedule create ... [--id ID]` creates a Temporal Schedule ...
  // `list`, `pause`, `resume`, `delete` manage it." `list` showed only ids that begin with `crmsync-`:
  // a schedule made with `--id nightly` could be paused and deleted but never appeared in `list`.
  it("list shows a schedule created with an --id of the user's own (`--id nightly`)", async () => {
    const created = await run(['schedule', 'create', '--every', '6h', '--id', 'nightly']);
    expect(created.code).toBe(0);
    try {
      const list = await run(['schedule', 'list']);
      expect(list.code).toBe(0);
      expect(listed(list, 'nightly')).toHaveLength(1);
      expect(listed(list, 'nightly')[0]).toContain('every 6h');
    } finally {
      await run(['schedule', 'delete', '--id', 'nightly']);
    }
  }, 120_000);
});

describe('scheduled runs while `crmsync worker` runs (embedded Temporal)', () => {
  let dir: string;
  let env: Record<string, string>;
  let run: (args: string[], timeoutMs?: number) => Promise<Out>;
  let worker: { child: ChildProcess; out: string[]; startedAt: number } | undefined;
  let connection: Connection | undefined;
  let client: Client | undefined;

  async function serverRecord(): Promise<{ address: string; pid: number; namespace?: string } | undefined> {
    try {
      const rec = JSON.parse(await readFile(join(dir, 'temporal-dev-server.json'), 'utf8')) as { address: string; pid: number; namespace?: string };
      process.kill(rec.pid, 0);
      return rec;
    } catch {
      return undefined;
    }
  }

  async function startWorker(): Promise<void> {
    const child = spawn(process.execPath, [BIN, 'worker'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: string[] = [];
    child.stdout!.on('data', (d: Buffer) => out.push(d.toString()));
    child.stderr!.on('data', (d: Buffer) => out.push(d.toString()));
    worker = { child, out, startedAt: Date.now() };
    const rec = await waitFor("the worker's embedded Temporal", serverRecord, 60_000);
    connection = await Connection.connect({ address: rec.address });
    client = new Client({ connection, namespace: rec.namespace ?? 'default' });
  }

  async function stopWorker(): Promise<void> {
    if (!worker) return;
    const { child, out } = worker;
    worker = undefined;
    await connection?.close().catch(() => undefined);
    connection = undefined;
    client = undefined;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(killer);
    }
    allOutput.push(out.join(''));
  }

  const describeSchedule = (id = DEFAULT_ID): Promise<ScheduleDescription> => client!.schedule.getHandle(id).describe();

  async function query<T = Record<string, unknown>>(sql: string): Promise<T[]> {
    const r = await run(['query', '-f', 'json', sql]);
    if (r.code !== 0) return [];
    return JSON.parse(r.stdout) as T[];
  }

  /** syncWorkflow executions on this test's task queue, as Temporal lists them. */
  async function syncExecutions(): Promise<{ id: string; start: number; close: number | undefined; status: string }[]> {
    const rows: { id: string; start: number; close: number | undefined; status: string }[] = [];
    for await (const w of client!.workflow.list({ query: `WorkflowType = 'syncWorkflow' AND TaskQueue = '${env.CRMSYNC_TASK_QUEUE}'` })) {
      rows.push({ id: w.workflowId, start: w.startTime.getTime(), close: w.closeTime?.getTime(), status: w.status.name });
    }
    return rows.sort((a, b) => a.start - b.start);
  }

  /** Waits until no action of the schedule is running (Temporal's own view). */
  async function settle(id = DEFAULT_ID): Promise<void> {
    await waitFor('the running scheduled sync to end', async () => (await describeSchedule(id)).info.runningActions.length === 0, 90_000);
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'crmsync-sched-run-'));
    env = specServerCliEnv(proxy.baseUrl, dir, 'UTC');
    run = cli(env, dir);
    await startWorker();
  }, 120_000);

  afterAll(async () => {
    try {
      if (client)
        await client.schedule
          .getHandle(DEFAULT_ID)
          .delete()
          .catch(() => undefined);
    } finally {
      await stopWorker();
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);

  it("a schedule at the shortest interval the CLI takes runs syncs on its own that land the CRM's rows, again and again", async () => {
    const created = await run(['schedule', 'create', '--every', '1s']);
    expect(created.code).toBe(0);
    const d = await describeSchedule();
    // A Temporal Schedule on the interval given, skipping overlaps (README, Sync; docs/sync.md, Schedules).
    expect(d.spec.intervals?.map((i) => Number(i.every))).toEqual([1000]);
    expect(d.policies.overlap).toBe('SKIP');
    expect(d.state.paused).toBe(false);
    // The schedule's stored action carries no credential (DESIGN.md: credentials never enter workflow arguments).
    noCredentials(textOf(d));

    // No `crmsync sync` is ever run here: only the schedule.
    const count = async (): Promise<number> => Number((await query<{ n: number }>('SELECT count(*) AS n FROM contacts WHERE _deleted_at IS NULL'))[0]?.n ?? -1);
    await waitFor('the scheduled run to land the 30 contacts', async () => (await count()) === 30, 90_000, 1000);

    // A contact added to the CRM lands with a later scheduled run.
    server.contacts.set(31, seedContact(31));
    await waitFor('contact 31 to land by a later scheduled run', async () => (await count()) === 31, 60_000, 1000);
    const emails = await query<{ email: string }>('SELECT email FROM contacts WHERE id = 31');
    expect(emails[0]?.email).toBe(server.contacts.get(31)!.email);

    const runs = await query<{ run_id: string; mode: string; status: string }>("SELECT run_id, mode, status FROM _sync_runs WHERE stream = 'contacts' ORDER BY started_at");
    expect(new Set(runs.map((r) => r.run_id)).size).toBeGreaterThanOrEqual(2);
    expect(runs[0]!.mode).toBe('backfill');
    // With --reconcile-every at its default (24h) and nothing deleted, the later runs are incremental.
    expect(
      runs.slice(1).every((r) => r.mode === 'incremental'),
      JSON.stringify(runs),
    ).toBe(true);
    expect(
      runs.every((r) => r.status === 'succeeded'),
      JSON.stringify(runs),
    ).toBe(true);
    expect((await describeSchedule()).info.numActionsTaken).toBeGreaterThanOrEqual(2);

    // "The catch-up window is just under one interval" (docs/sync.md, Schedules), at a usual interval.
    expect((await run(['schedule', 'create', '--every', '15m', '--id', 'crmsync-window'])).code).toBe(0);
    const w = await describeSchedule('crmsync-window');
    expect(w.policies.overlap).toBe('SKIP');
    expect(Number(w.policies.catchupWindow)).toBeLessThan(15 * 60_000);
    expect(Number(w.policies.catchupWindow)).toBeGreaterThanOrEqual(14 * 60_000);
    expect((await run(['schedule', 'delete', '--id', 'crmsync-window'])).code).toBe(0);
  }, 240_000);

  it('skips a slot while a run is still going: runs never overlap (overlap policy SKIP)', async () => {
    proxy.delayMs = 300; // each CRM request 0.3 s: a run takes longer than the 1 s interval
    try {
      const before = (await describeSchedule()).info.numActionsSkippedOverlap;
      const startCount = (await syncExecutions()).length;
      await waitFor('two more scheduled runs with the slow CRM', async () => (await syncExecutions()).filter((w) => w.close !== undefined).length >= startCount + 2, 120_000, 1000);
      const d = await describeSchedule();
      expect(d.info.numActionsSkippedOverlap).toBeGreaterThan(before);
      expect(d.info.runningActions.length).toBeLessThanOrEqual(1);
      // A manual sync meanwhile joins the run in progress (README, Temporal) and succeeds.
      const manual = await run(['sync'], 180_000);
      expect(manual.code, manual.stdout + manual.stderr).toBe(0);
      await settle();
      // The default schedule's runs (its action's workflow id, `<id>-run`, with the time appended).
      const execs = (await syncExecutions()).filter((w) => w.close !== undefined && w.id.startsWith(`${d.action.workflowId}-`));
      expect(execs.length).toBeGreaterThanOrEqual(3);
      for (let i = 1; i < execs.length; i++) expect(execs[i]!.start, `run ${i} started before run ${i - 1} ended`).toBeGreaterThanOrEqual(execs[i - 1]!.close!);
      expect(
        execs.every((w) => w.status === 'COMPLETED'),
        JSON.stringify(execs),
      ).toBe(true);
    } finally {
      proxy.delayMs = 0;
    }
  }, 180_000);

  it('--reconcile-every sets the contacts sweep cadence of the scheduled runs (docs/sync.md, Schedules)', async () => {
    await settle();
    const created = await run(['schedule', 'create', '--every', '1s', '--reconcile-every', '1s']);
    expect(created.code).toBe(0);
    // Runs started from here on are the new schedule's: `create` checks the CRM before it replaces
    // the schedule, and the old one's runs went on meanwhile.
    const since = new Date().toISOString();
    // The contacts stream sweeps when its last sweep is older than --reconcile-every.
    const runs = await waitFor(
      'a scheduled contacts run that sweeps',
      async () => {
        const r = await query<{ mode: string }>(`SELECT mode FROM _sync_runs WHERE stream = 'contacts' AND started_at > TIMESTAMPTZ '${since}' ORDER BY started_at`);
        return r.length >= 2 ? r : undefined;
      },
      90_000,
      1000,
    );
    expect(
      runs.some((r) => r.mode === 'reconcile'),
      JSON.stringify(runs),
    ).toBe(true);
    // Back to the default cadence for the next tests.
    expect((await run(['schedule', 'create', '--every', '1s'])).code).toBe(0);
  }, 180_000);

  it('pause stops the runs, resume starts them again', async () => {
    const paused = await run(['schedule', 'pause']);
    expect(paused.code).toBe(0);
    expect((await describeSchedule()).state.paused).toBe(true);
    await settle();
    const taken = (await describeSchedule()).info.numActionsTaken;
    const requests = server.requests.length;
    await sleep(5_000); // five 1 s slots
    expect((await describeSchedule()).info.numActionsTaken).toBe(taken);
    expect(server.requests.length, 'the CRM was asked while the schedule was paused').toBe(requests);

    const resumed = await run(['schedule', 'resume']);
    expect(resumed.code).toBe(0);
    expect((await describeSchedule()).state.paused).toBe(false);
    await waitFor('a run after resume', async () => (await describeSchedule()).info.numActionsTaken > taken, 30_000);
    await waitFor('the CRM to be asked again', async () => server.requests.length > requests, 30_000);
  }, 120_000);

  it("a failed scheduled run never shows the CRM password: not in the worker's output, status, _sync_runs or the run's Temporal history", async () => {
    await settle();
    const since = Date.now();
    proxy.echo = true; // every answer 401, quoting the Authorization header and the password
    let failedIds: string[] = [];
    try {
      failedIds = await waitFor(
        'a failed scheduled run',
        async () => {
          const ids: string[] = [];
          for await (const w of client!.workflow.list({ query: `WorkflowType = 'syncWorkflow' AND TaskQueue = '${env.CRMSYNC_TASK_QUEUE}'` })) {
            if (w.startTime.getTime() >= since && w.closeTime !== undefined) ids.push(w.workflowId);
          }
          return ids.length > 0 ? ids : undefined;
        },
        90_000,
        1000,
      );
    } finally {
      proxy.echo = false;
    }
    // The run's history, as the Temporal UI or `temporal workflow show` would print it.
    for (const id of failedIds) {
      const history = await client!.workflow.getHandle(id).fetchHistory();
      const text = textOf(history);
      expect(text).toContain('warehouseTaskQueue'); // payloads are read (the workflow's input)
      expect(text).toMatch(/401|rest_not_logged_in|credential|CRM_PASSWORD/i); // the failure is in there
      noCredentials(text);
    }
    const errors = await query<{ error: string | null }>(`SELECT error FROM _sync_runs WHERE started_at >= epoch_ms(${since}) AND error IS NOT NULL`);
    expect(errors.length).toBeGreaterThan(0);
    for (const e of errors) noCredentials(String(e.error));
    const status = await run(['status']);
    noCredentials(status.stdout + status.stderr);
    noCredentials(worker!.out.join(''));
    const list = await run(['schedule', 'list']);
    noCredentials(list.stdout + list.stderr);
  }, 180_000);

  it('delete removes the schedule: no run starts after it, and list no longer shows it', async () => {
    const deleted = await run(['schedule', 'delete']);
    expect(deleted.code).toBe(0);
    await expect(describeSchedule()).rejects.toThrow();
    await waitFor('the last run to end', async () => (await syncExecutions()).every((w) => w.close !== undefined), 90_000, 1000);
    const runs = (await syncExecutions()).length;
    const requests = server.requests.length;
    await sleep(5_000);
    expect((await syncExecutions()).length).toBe(runs);
    expect(server.requests.length).toBe(requests);
    const list = await run(['schedule', 'list']);
    expect(list.code).toBe(0);
    expect(listed(list, DEFAULT_ID)).toHaveLength(0);
  }, 150_000);

  it('--stream limits the scheduled runs to those streams', async () => {
    const since = new Date().toISOString();
    const created = await run(['schedule', 'create', '--every', '1s', '--id', 'crmsync-two-streams', '--stream', 'tags', '--stream', 'lists']);
    expect(created.code).toBe(0);
    try {
      const rows = await waitFor(
        'a run of the two-stream schedule',
        async () => {
          const r = await query<{ run_id: string; stream: string }>(`SELECT run_id, stream FROM _sync_runs WHERE started_at > TIMESTAMPTZ '${since}' ORDER BY started_at`);
          return r.length > 0 ? r : undefined;
        },
        60_000,
        1000,
      );
      expect([...new Set(rows.map((r) => r.stream))].sort()).toEqual(['lists', 'tags']);
    } finally {
      expect((await run(['schedule', 'delete', '--id', 'crmsync-two-streams'])).code).toBe(0);
    }
    await settle('crmsync-two-streams').catch(() => undefined);
    await waitFor('the last run to end', async () => (await syncExecutions()).every((w) => w.close !== undefined), 90_000, 1000);
  }, 150_000);

  it('slots missed while the embedded server was down fire at most once when it is back, and the schedule survived the restart (README, Temporal)', async () => {
    await stopWorker();
    // CRMSYNC_EMBEDDED_IDLE=0: the server stopped with the worker.
    await waitFor('the embedded server to stop', async () => (await serverRecord()) === undefined, 30_000);
    const created = await run(['schedule', 'create', '--every', '3s']);
    expect(created.code).toBe(0);
    const downFrom = Date.now();
    await sleep(13_000); // four 3 s slots or more while nothing runs
    const files = await readdir(dir);
    expect(files).toContain('temporal.sqlite');
    await startWorker();
    const backAt = worker!.startedAt;
    expect(Math.floor(backAt / 3000) - Math.ceil(downFrom / 3000)).toBeGreaterThanOrEqual(3); // slots missed
    // Let the server catch up, then some regular slots pass.
    await waitFor('a run after the restart', async () => (await describeSchedule()).info.numActionsTaken >= 1, 60_000);
    await sleep(4_000);
    const d = await describeSchedule();
    expect(d.spec.intervals?.map((i) => Number(i.every))).toEqual([3000]);
    const late = d.info.recentActions.filter((a) => a.scheduledAt.getTime() > downFrom && a.scheduledAt.getTime() < backAt);
    expect(late.length, JSON.stringify(d.info.recentActions)).toBeLessThanOrEqual(1);
  }, 180_000);
});
