// A first-time analyst, from README.md and docs/ alone: the README's first command (`crmsync demo`,
// on embedded defaults) in a fresh folder with no configuration, then every data-reading example of
// README.md, docs/warehouse.md, docs/report.md and docs/sync.md on what it left, the documented way
// of reading the Parquet lake with plain DuckDB (@duckdb/node-api), DESIGN.md's warehouse tables, and
// the analyst views against a small site of our own on the independent CRM of spec-server.ts, over
// four syncs with edits, deletes, a revert, a tag renamed and new contacts.
// The built CLI runs in child processes (runBuiltCli). Expected values come from the documents and
// from the server's own state, never from crmsync's code.
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAMPAIGN_STATS, SpecServer, TAGS, LISTS, seedContact, specServerCliEnv, wall, type Json, type SpecContact } from './spec-server.js';
import { runBuiltCli } from './built-cli.js';
import { duck, type Row } from './duck.js';

type Cli = { code: number | null; stdout: string; stderr: string };
const num = (v: unknown): number => Number(v);
const sortNums = (v: unknown): number[] => [...((v as unknown[] | null) ?? [])].map(Number).sort((a, b) => a - b);
const lit = (s: string): string => `'${s.replaceAll("'", "''")}'`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const near = (actual: unknown, expected: number | null, within = 5e-5): void => {
  if (expected === null) expect(actual).toBeNull();
  else expect(Math.abs(num(actual) - expected), `${String(actual)} vs ${expected}`).toBeLessThanOrEqual(within);
};

/** The environment of a user with no configuration at all (plus where the Temporal CLI is, when the machine says so). */
function bareEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    ...Object.fromEntries(['TEMPORAL_CLI_PATH', 'XDG_CACHE_HOME'].flatMap((k) => (process.env[k] ? [[k, process.env[k]]] : []))),
  };
}

/** Parses crmsync's `table` output: a header, a rule of dashes, then rows, cells separated by `|`. */
function parseTable(text: string): Row[] {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const cells = (l: string): string[] => l.split('|').map((c) => c.trim());
  const head = cells(lines[0]!);
  expect(lines[1]).toMatch(/^-+(\+-+)*$/);
  return lines.slice(2).map((l) => Object.fromEntries(cells(l).map((c, i) => [head[i]!, c])));
}

/** Parses CSV with quoted fields. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  const endCell = (): void => {
    row.push(cell);
    cell = '';
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') endCell();
    else if (ch === '\n') {
      endCell();
      rows.push(row);
      row = [];
    } else if (ch !== '\r') cell += ch;
  }
  if (cell !== '' || row.length) {
    endCell();
    rows.push(row);
  }
  return rows;
}

/** Values in descending order with NULLs (empty or null) last, as `ORDER BY x DESC [NULLS LAST]` promises. */
function expectDescNullsLast(values: unknown[], what: string): void {
  const isNull = (v: unknown): boolean => v === null || v === '' || v === 'NULL';
  const firstNull = values.findIndex(isNull);
  const head = firstNull === -1 ? values : values.slice(0, firstNull);
  expect(values.slice(head.length).every(isNull), `${what}: NULLs last`).toBe(true);
  for (let i = 1; i < head.length; i++) expect(num(head[i]), `${what} row ${i}`).toBeLessThanOrEqual(num(head[i - 1]));
}

/** The pid of a process whose working directory is `dir`, if it still runs (so we never signal a recycled pid). */
function aliveIn(pid: number, dir: string): boolean {
  try {
    process.kill(pid, 0);
    return readlinkSync(`/proc/${pid}/cwd`) === dir;
  } catch {
    return false;
  }
}

// =====================================================================================================
// 1-3. The README's first command in a fresh folder, the docs' examples on what it leaves, plain DuckDB
// =====================================================================================================

describe("the README's first command (`crmsync demo`) in a fresh folder, and the docs' examples on what it leaves", () => {
  let root: string;
  let env: Record<string, string>;
  let demo: Cli;
  /** Keeper pids of the embedded Temporal servers the demos left running (README: they outlive the command). */
  const keepers: number[] = [];
  const demoDir = (): string => join(root, 'data', 'demo');
  const lake = (): string => join(demoDir(), 'lake');
  const crmsync = (args: string[], extra: Record<string, string> = {}, timeoutMs = 40_000): Promise<Cli> => runBuiltCli(args, { ...env, ...extra }, root, timeoutMs);
  /** The environment the demo itself prints for querying what it left. */
  const demoQueryEnv = { CRMSYNC_DB: 'data/demo/crm.duckdb', CRMSYNC_LAKE: 'data/demo/lake' };
  const query = async (sql: string, format = 'json'): Promise<Cli> => crmsync(['query', '-f', format, sql], demoQueryEnv);
  const rows = async (sql: string): Promise<Row[]> => {
    const r = await query(sql);
    if (r.code !== 0) throw new Error(`crmsync query failed (${String(r.code)}): ${sql}\n${r.stderr}`);
    return JSON.parse(r.stdout) as Row[];
  };
  const recordedKeeper = (): number => (JSON.parse(readFileSync(join(demoDir(), 'temporal-dev-server.json'), 'utf8')) as { pid: number }).pid;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'crmsync-analyst-demo-'));
    env = bareEnv();
    // README "Two commands": `npm install && npm run demo`; `npm run demo` runs `crmsync demo` (package.json).
    demo = await crmsync(['demo'], {}, 150_000);
    if (existsSync(join(demoDir(), 'temporal-dev-server.json'))) keepers.push(recordedKeeper());
    if (demo.code !== 0) throw new Error(`crmsync demo failed (${String(demo.code)}):\n${demo.stdout}\n${demo.stderr}`);
  }, 180_000);

  afterAll(async () => {
    for (const pid of keepers) if (aliveIn(pid, root)) process.kill(pid, 'SIGTERM');
    for (let i = 0; i < 50 && keepers.some((pid) => aliveIn(pid, root)); i++) await sleep(100);
    if (root) await rm(root, { recursive: true, force: true });
  });

  // ---- 1. What the demo prints and leaves -------------------------------------------------------------

  it('exits 0 and prints the simulator, a finished full sync of every stream, what landed and a sample query with its answer', () => {
    expect(demo.code).toBe(0);
    // README: "the built-in CRM simulator with seeded data, an embedded Temporal dev server, a full sync into ./data/demo/, and a sample query".
    expect(demo.stdout).toMatch(/simulat/i);
    expect(demo.stdout).toMatch(/\bsync \S+ finished\b/);
    for (const stream of ['contacts', 'tags', 'lists', 'custom_fields', 'companies', 'campaigns', 'funnels', 'funnel_subscribers', 'reports'])
      expect(demo.stdout, stream).toMatch(new RegExp(`\\n\\s*${stream}\\s+backfill\\s+rows \\d+`));
    expect(demo.stdout).toContain('what landed:');
    expect(demo.stdout).toContain('sample query:');
  });

  it('leaves the warehouse, the lake and its catalog under ./data/demo, and nothing at the default ./data/crm.duckdb', async () => {
    expect((await stat(join(demoDir(), 'crm.duckdb'))).isFile()).toBe(true);
    expect((await stat(join(lake(), '_manifest.json'))).isFile()).toBe(true);
    expect((await stat(join(lake(), 'catalog.duckdb'))).isFile()).toBe(true);
    // docs/sync.md: `crmsync demo`: "everything under <CRMSYNC_DATA_DIR>/demo".
    expect(existsSync(join(root, 'data', 'crm.duckdb'))).toBe(false);
    expect(existsSync(join(root, 'data', 'lake'))).toBe(false);
  });

  it('"what landed": each table it names holds that many rows, in the lake and in lake_freshness; the contacts are the 5000 the simulator seeds by default', async () => {
    const block = demo.stdout.split('what landed:\n')[1]!.split('\n\n')[0]!;
    const landed = [...block.matchAll(/^\s+(\w+)\s+(\d+) rows$/gm)].map((m) => ({ table: m[1]!, rows: Number(m[2]) }));
    expect(landed.length).toBeGreaterThan(5);
    // `crmsync demo --help`: --contacts "seeded contacts (default: 5000)".
    expect(landed.find((l) => l.table === 'contacts')?.rows).toBe(5000);
    const counted = await rows(
      landed.map((l) => `SELECT '${l.table}' AS t, (SELECT count(*) FROM "${l.table}")::INT AS n, (SELECT rows::INT FROM lake_freshness WHERE table_name = '${l.table}') AS f`).join(' UNION ALL '),
    );
    for (const l of landed)
      expect(
        counted.find((c) => c.t === l.table),
        l.table,
      ).toEqual({ t: l.table, n: l.rows, f: l.rows });
  });

  it('the sample query it prints gives, through `crmsync query`, the answer it printed', async () => {
    const after = demo.stdout.split('sample query:\n')[1]!;
    const [sql, table] = after.split('\n\n');
    const printed = parseTable(table!);
    expect(printed.length).toBeGreaterThan(0);
    const got = await rows(sql!);
    expect(got.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, String(v)])))).toEqual(printed);
  });

  it('the command it prints to query the warehouse works as printed (exit 0, the rows asked for)', async () => {
    const line = demo.stdout.split('\n').find((l) => /crmsync query /.test(l) && /CRMSYNC_DB=/.test(l))!;
    expect(line, demo.stdout).toBeDefined();
    const m = line.trim().match(/^((?:\w+=\S+\s+)+)crmsync query "(.*)"$/)!;
    expect(m, line).not.toBeNull();
    const extra = Object.fromEntries(
      m[1]!
        .trim()
        .split(/\s+/)
        .map((kv) => kv.split('=') as [string, string]),
    );
    const res = await crmsync(['query', '-f', 'json', m[2]!], extra);
    expect(res.code, res.stderr).toBe(0);
    const got = JSON.parse(res.stdout) as Row[];
    const limit = m[2]!.match(/LIMIT (\d+)/i);
    if (limit) expect(got.length).toBe(Number(limit[1]));
    else expect(got.length).toBeGreaterThan(0);
  });

  it('crmsync status and crmsync report read the demo warehouse: exit 0, the streams and tables, ./report.html by default with its path on stdout', async () => {
    const [st, stJson, rep] = await Promise.all([crmsync(['status'], demoQueryEnv), crmsync(['status', '--json'], demoQueryEnv), crmsync(['report'], demoQueryEnv)]);
    expect(st.code, st.stderr).toBe(0);
    expect(st.stdout).toMatch(/\ncontacts\s+5000\b/);
    expect(stJson.code, stJson.stderr).toBe(0);
    const streams = (JSON.parse(stJson.stdout) as { streams: Row[] }).streams;
    expect(streams.find((s) => s.stream === 'contacts')?.rows).toBe(5000);
    // docs/report.md: `crmsync report  # writes ./report.html`; "The path goes to stdout".
    expect(rep.code, rep.stderr).toBe(0);
    expect(rep.stdout.trim()).toMatch(/report\.html$/);
    const html = await readFile(join(root, 'report.html'), 'utf8');
    expect(html).toMatch(/^<!doctype html>/i);
    // docs/report.md: `crmsync report --out /tmp/crm.html`.
    const out = join(root, 'elsewhere', 'crm.html');
    const moved = await crmsync(['report', '--out', out], demoQueryEnv);
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stdout.trim()).toBe(out);
    expect((await stat(out)).size).toBeGreaterThan(1000);
  });

  // ---- 2. Every data-reading example of the docs, on the demo's warehouse -------------------------------

  describe('README.md, docs/warehouse.md, docs/report.md and docs/sync.md examples, run as written', () => {
    let live: Row[];
    beforeAll(async () => {
      live = await rows('SELECT status, count(*)::INT AS n FROM contacts WHERE _deleted_at IS NULL GROUP BY ALL');
    });
    const liveTotal = (): number => live.reduce((a, r) => a + num(r.n), 0);

    it('README: status counts of contacts_current (table format) are the live rows of contacts', async () => {
      const res = await query('SELECT status, count(*) FROM contacts_current GROUP BY ALL', 'table');
      expect(res.code, res.stderr).toBe(0);
      const got = parseTable(res.stdout).map((r) => ({ status: r.status, n: Number(r['count_star()']) }));
      expect(got.sort((a, b) => String(a.status).localeCompare(String(b.status)))).toEqual(
        live.map((r) => ({ status: r.status, n: num(r.n) })).sort((a, b) => String(a.status).localeCompare(String(b.status))),
      );
      expect(liveTotal()).toBe(5000);
    });

    it('docs/warehouse.md: the same with ORDER BY 2 DESC holds its order', async () => {
      const res = await query('SELECT status, count(*) FROM contacts_current GROUP BY ALL ORDER BY 2 DESC', 'table');
      expect(res.code, res.stderr).toBe(0);
      const got = parseTable(res.stdout);
      expect(got.length).toBe(live.length);
      expectDescNullsLast(
        got.map((r) => r['count_star()']),
        'count',
      );
    });

    it('README: -f csv campaign_performance by open_rate DESC: the four columns, one row per live campaign, rates that are opens and clicks over sent and over opens', async () => {
      const res = await query('SELECT title, sent, open_rate, click_to_open_rate FROM campaign_performance ORDER BY open_rate DESC', 'csv');
      expect(res.code, res.stderr).toBe(0);
      const [head, ...body] = parseCsv(res.stdout);
      expect(head).toEqual(['title', 'sent', 'open_rate', 'click_to_open_rate']);
      const campaigns = await rows('SELECT count(*)::INT AS n FROM campaigns WHERE _deleted_at IS NULL');
      expect(body.length).toBe(campaigns[0]!.n);
      expectDescNullsLast(
        body.map((r) => r[2]),
        'open_rate',
      );
      // The rates against the view's own counters (docs/warehouse.md: "sent, opens, clicks, ... open/click/click-to-open rates").
      const perf = await rows('SELECT title, sent, opens, clicks, open_rate, click_rate, click_to_open_rate FROM campaign_performance');
      expect(perf.length).toBe(body.length);
      for (const p of perf) {
        near(p.open_rate, num(p.sent) ? num(p.opens) / num(p.sent) : null);
        near(p.click_rate, num(p.sent) ? num(p.clicks) / num(p.sent) : null);
        near(p.click_to_open_rate, num(p.opens) ? num(p.clicks) / num(p.opens) : null);
      }
    });

    it('docs/warehouse.md: --format csv of all of campaign_performance into campaigns.csv has the documented columns', async () => {
      const res = await query('SELECT * FROM campaign_performance', 'csv');
      expect(res.code, res.stderr).toBe(0);
      const [head] = parseCsv(res.stdout);
      for (const c of ['title', 'sent', 'opens', 'clicks', 'unsubscribes', 'open_rate', 'click_rate', 'click_to_open_rate']) expect(head, c).toContain(c);
    });

    it('README and docs/warehouse.md: contacts_as_of(1 March 2026) WHERE id = 42 is the version of contact 42 valid then in contacts_history', async () => {
      const res = await query("SELECT * FROM contacts_as_of(TIMESTAMPTZ '2026-03-01 00:00:00+00') WHERE id = 42", 'table');
      expect(res.code, res.stderr).toBe(0);
      const asOf = await rows("SELECT id, email, status, tag_ids FROM contacts_as_of(TIMESTAMPTZ '2026-03-01 00:00:00+00') WHERE id = 42");
      const valid = await rows(
        "SELECT id, email, status, tag_ids FROM contacts_history WHERE id = 42 AND valid_from <= TIMESTAMPTZ '2026-03-01 00:00:00+00' AND (valid_to IS NULL OR valid_to > TIMESTAMPTZ '2026-03-01 00:00:00+00')",
      );
      expect(asOf).toEqual(valid);
      expect(parseTable(res.stdout).length).toBe(valid.length);
    });

    it('docs/warehouse.md: every version of contact 42 is its one open version, equal to its contacts row (one sync)', async () => {
      const versions = await rows('SELECT valid_from, valid_to, email, status, tag_ids FROM contacts_history WHERE id = 42 ORDER BY valid_from');
      const row = await rows('SELECT email, status, tag_ids FROM contacts WHERE id = 42');
      expect(versions.length).toBe(1);
      expect(versions[0]!.valid_to).toBeNull();
      expect({ email: versions[0]!.email, status: versions[0]!.status, tag_ids: versions[0]!.tag_ids }).toEqual(row[0]);
    });

    it('README and docs/warehouse.md: funnel_step_dropoff WHERE funnel_id = 3 (table and --format json): reached, dropped and % of entrants against the entrance', async () => {
      const [tbl, js] = await Promise.all([
        query('SELECT label, reached, dropped, percent_of_entrants FROM funnel_step_dropoff WHERE funnel_id = 3', 'table'),
        query('SELECT * FROM funnel_step_dropoff WHERE funnel_id = 3', 'json'),
      ]);
      expect(tbl.code, tbl.stderr).toBe(0);
      expect(js.code, js.stderr).toBe(0);
      const steps = JSON.parse(js.stdout) as Row[];
      expect(parseTable(tbl.stdout).length).toBe(steps.length);
      expect(steps.length).toBeGreaterThan(1);
      const root = steps.find((s) => s.type === 'root')!;
      expect(root, 'an entrance step').toBeDefined();
      for (const s of steps) {
        for (const c of ['funnel_id', 'label', 'reached', 'dropped', 'percent_of_entrants']) expect(s, c).toHaveProperty(c);
        near(s.percent_of_entrants, (100 * num(s.reached)) / num(root.reached), 0.005);
      }
    });

    it('README and docs/warehouse.md: growth per month adds up to the live contacts, months in order', async () => {
      const res = await query("SELECT date_trunc('month', day) AS month, sum(new_contacts) FROM subscriber_growth GROUP BY ALL ORDER BY 1", 'table');
      expect(res.code, res.stderr).toBe(0);
      const got = await rows("SELECT date_trunc('month', day) AS month, sum(new_contacts) AS n FROM subscriber_growth GROUP BY ALL ORDER BY 1");
      expect(parseTable(res.stdout).length).toBe(got.length);
      expect(got.reduce((a, r) => a + num(r.n), 0)).toBe(liveTotal());
      for (let i = 1; i < got.length; i++) expect(Date.parse(String(got[i]!.month))).toBeGreaterThan(Date.parse(String(got[i - 1]!.month)));
    });

    it('README: push_dead_letters reads (nothing was pushed in the demo), with the field at fault as a column', async () => {
      const res = await query('SELECT * FROM push_dead_letters', 'table');
      expect(res.code, res.stderr).toBe(0);
      expect(parseTable(res.stdout)).toEqual([]);
      expect(await rows("SELECT column_name FROM information_schema.columns WHERE table_name = 'push_dead_letters' AND column_name = 'error_field'")).toHaveLength(1);
    });

    it('docs/warehouse.md: contacts per tag (contact_tags_named joined to contacts_current) is the live members per tag, most first', async () => {
      const got = await rows('SELECT tag_title, count(*) AS contacts FROM contact_tags_named t\nJOIN contacts_current c ON c.id = t.contact_id GROUP BY ALL ORDER BY contacts DESC');
      const want = await rows(
        'SELECT t.title AS tag_title, count(*) AS contacts FROM contact_tags ct JOIN tags t ON t.id = ct.tag_id JOIN contacts c ON c.id = ct.contact_id WHERE c._deleted_at IS NULL GROUP BY ALL',
      );
      expect([...got].sort((a, b) => String(a.tag_title).localeCompare(String(b.tag_title)))).toEqual([...want].sort((a, b) => String(a.tag_title).localeCompare(String(b.tag_title))));
      expectDescNullsLast(
        got.map((r) => r.contacts),
        'contacts',
      );
      // tag_list_member_counts (docs/report.md) counts the same members.
      const counts = await rows("SELECT title, members FROM tag_list_member_counts WHERE kind = 'tag' AND members > 0");
      expect(Object.fromEntries(counts.map((r) => [r.title, num(r.members)]))).toEqual(Object.fromEntries(got.map((r) => [r.tag_title, num(r.contacts)])));
    });

    it('docs/warehouse.md: contacts deleted in the CRM last week (none in the demo) and a custom field by value, adding up to the live contacts', async () => {
      expect(await rows('SELECT id, email, _deleted_at FROM contacts WHERE _deleted_at > now() - INTERVAL 7 DAY')).toEqual([]);
      const plan = await rows("SELECT custom_values->>'$.plan' AS plan, count(*) FROM contacts_current GROUP BY ALL");
      expect(plan.reduce((a, r) => a + num(r['count_star()']), 0)).toBe(liveTotal());
    });

    it('docs/warehouse.md: best campaigns by click-to-open rate, NULLS LAST, at most 10', async () => {
      const got = await rows('SELECT title, sent, open_rate, click_to_open_rate FROM campaign_performance ORDER BY click_to_open_rate DESC NULLS LAST LIMIT 10');
      expect(got.length).toBeGreaterThan(0);
      expect(got.length).toBeLessThanOrEqual(10);
      expectDescNullsLast(
        got.map((r) => r.click_to_open_rate),
        'click_to_open_rate',
      );
    });

    it('docs/warehouse.md: last run of each stream: one row per stream, succeeded, the latest of _sync_runs and what sync_stream_freshness says', async () => {
      const got = await rows(
        'SELECT stream, status, finished_at, inserted, updated, unchanged, deleted, error\nFROM _sync_runs QUALIFY row_number() OVER (PARTITION BY stream ORDER BY started_at DESC) = 1',
      );
      expect(got.map((r) => r.stream).sort()).toEqual(['campaigns', 'companies', 'contacts', 'custom_fields', 'funnel_subscribers', 'funnels', 'lists', 'reports', 'tags']);
      for (const r of got) expect({ stream: r.stream, status: r.status, error: r.error }).toEqual({ stream: r.stream, status: 'succeeded', error: null });
      expect(got.find((r) => r.stream === 'contacts')).toMatchObject({ inserted: 5000, deleted: 0 });
      const fresh = await rows('SELECT stream, last_status, runs FROM sync_stream_freshness ORDER BY stream');
      expect(fresh.map((r) => ({ stream: r.stream, last_status: r.last_status, runs: num(r.runs) }))).toEqual(
        got.map((r) => ({ stream: r.stream, last_status: 'succeeded', runs: 1 })).sort((a, b) => String(a.stream).localeCompare(String(b.stream))),
      );
    });

    it("docs/report.md: sync_run_health's rows_read is inserted + updated + unchanged and duration_s the run's time", async () => {
      const got = await rows('SELECT h.*, epoch_ms(finished_at) - epoch_ms(started_at) AS ms FROM sync_run_health h');
      expect(got.length).toBe(9);
      for (const r of got) {
        expect(num(r.rows_read), String(r.stream)).toBe(num(r.inserted) + num(r.updated) + num(r.unchanged));
        near(r.duration_s, num(r.ms) / 1000, 0.0015);
      }
    });

    it('README: the lake read directly with read_parquet (adapted to data/demo/lake) holds the contacts', async () => {
      const got = await rows("SELECT count(*)::INT AS n, count(DISTINCT id)::INT AS ids FROM read_parquet('data/demo/lake/contacts/**/*.parquet', hive_partitioning = true)");
      expect(got).toEqual([{ n: 5000, ids: 5000 }]);
    });

    it('README: timestamps print as UTC instants; dates, times and intervals as DuckDB writes them, in table, csv, json and ndjson', async () => {
      const sql = "SELECT TIMESTAMPTZ '2026-03-01 00:00:00-05' AS t, DATE '2026-03-01' AS d, TIME '10:30:00' AS tm, INTERVAL 3 DAY AS i";
      const want = { t: '2026-03-01T05:00:00.000Z', d: '2026-03-01', tm: '10:30:00', i: '3 days' };
      const [tbl, csv, js, nd] = await Promise.all(['table', 'csv', 'json', 'ndjson'].map((f) => query(sql, f)));
      for (const r of [tbl, csv, js, nd]) expect(r!.code, r!.stderr).toBe(0);
      expect(parseTable(tbl!.stdout)).toEqual([want]);
      expect(parseCsv(csv!.stdout)).toEqual([Object.keys(want), Object.values(want)]);
      expect(JSON.parse(js!.stdout)).toEqual([want]);
      expect(
        nd!.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as unknown),
      ).toEqual([want]);
    });

    it('docs/warehouse.md "Export with -f csv > file.csv": an answer longer than --max-rows (10000 by default, query --help) stops there and says so on stderr', async () => {
      const res = await query('SELECT range AS i FROM range(10005)', 'csv');
      expect(res.code, res.stderr).toBe(0);
      expect(parseCsv(res.stdout).length).toBe(10_001);
      expect(res.stderr).toContain('--max-rows');
    });

    // `crmsync query --help`: "-q, --quiet  do not say on stderr what was read"; what is read is the
    // catalog line (docs/warehouse.md "The catalog": "stderr says what was read and when it was
    // published"). With -q crmsync once also dropped the notice that the answer was cut at --max-rows, so
    // `crmsync query -q -f csv "SELECT * FROM contacts" > contacts.csv` (docs/warehouse.md: "Export
    // with -f csv > file.csv") keeps the first 10,000 rows, exits 0 and says nothing.
    it('with -q, an answer cut at --max-rows still says so on stderr (-q hides only what was read)', async () => {
      const res = await crmsync(['query', '-q', '-f', 'csv', 'SELECT range AS i FROM range(10005)'], demoQueryEnv);
      expect(res.code).toBe(0);
      expect(parseCsv(res.stdout).length).toBe(10_001);
      expect(res.stderr).toContain('--max-rows');
    });

    it("DESIGN.md's and docs/warehouse.md's tables and views exist with the columns and types they name", async () => {
      const cols = await rows('SELECT table_name, column_name, data_type FROM information_schema.columns');
      const type = (t: string, c: string): string | undefined => cols.find((r) => r.table_name === t && r.column_name === c)?.data_type as string | undefined;
      const TZ = 'TIMESTAMP WITH TIME ZONE';
      const problems: string[] = [];
      const need = (t: string, spec: Record<string, string | null>): void => {
        if (!cols.some((r) => r.table_name === t)) return void problems.push(`${t}: missing`);
        for (const [c, want] of Object.entries(spec)) {
          const got = type(t, c);
          if (got === undefined) problems.push(`${t}.${c}: missing`);
          else if (want !== null && got !== want) problems.push(`${t}.${c}: ${got}, documented ${want}`);
        }
      };
      const contactFields = {
        id: 'BIGINT',
        user_id: 'BIGINT',
        hash: null,
        email: null,
        first_name: null,
        last_name: null,
        full_name: null,
        status: null,
        contact_type: null,
        phone: null,
        address_line_1: null,
        address_line_2: null,
        city: null,
        state: null,
        postal_code: null,
        country: null,
        date_of_birth: 'DATE',
        photo: null,
        tag_ids: 'BIGINT[]',
        list_ids: 'BIGINT[]',
        custom_values: 'JSON',
        created_at: TZ,
        updated_at: TZ,
      };
      const loaded = { _load_id: null, _synced_at: TZ };
      need('contacts', { ...contactFields, ...loaded, raw: 'JSON', _fingerprint: null, _deleted_at: TZ });
      if (type('contacts', '_valid_from') !== undefined) problems.push('contacts._valid_from: in the lake (docs: "not in the lake\'s contacts")');
      need('contacts_history', { ...contactFields, ...loaded, valid_from: TZ, valid_to: TZ });
      need('contact_tags', { contact_id: 'BIGINT', tag_id: 'BIGINT', ...loaded });
      need('contact_lists', { contact_id: 'BIGINT', list_id: 'BIGINT', ...loaded });
      for (const t of ['tags', 'lists', 'companies', 'campaigns', 'funnels']) need(t, { id: 'BIGINT', _deleted_at: TZ, ...loaded });
      need('custom_fields', { _deleted_at: TZ, ...loaded });
      need('campaigns', { stats: 'JSON' });
      need('funnel_subscribers', { id: 'BIGINT', funnel_id: 'BIGINT', subscriber_id: 'BIGINT', metrics: 'JSON', ...loaded });
      for (const t of [
        'report_overview',
        'report_subscriber_growth',
        'report_campaign_email_stats',
        'report_funnel_conversion_stats',
        'report_automation_steps',
        'report_other',
        'report_dashboard_stats',
        'report_email_activity',
      ])
        need(t, { snapshot_id: null, snapshot_at: TZ, report: null, params: 'JSON', data: 'JSON', ...loaded });
      need('report_automation_step_rows', { funnel_id: 'BIGINT', sequence_id: 'BIGINT', label: null, count: null, drop_count: null, ...loaded });
      need('report_daily_counts', { report: null, period_key: null, day: 'DATE', period: null, count: null, ...loaded });
      for (const t of ['webhook_events', 'email_events', 'commerce_events']) need(t, { delivery_id: null, ...loaded });
      need('_sync_state', { stream: null });
      need('_sync_runs', { stream: null, started_at: TZ, finished_at: TZ, status: null, error: null, pages: null, requests: null, inserted: null, updated: null, unchanged: null, deleted: null });
      // Views (README "Warehouse", docs/warehouse.md "Views", docs/report.md), with the columns their examples use.
      need('contacts_current', { ...contactFields, tag_titles: null, list_titles: null });
      need('contact_tags_named', { contact_id: 'BIGINT', tag_title: null });
      need('contact_lists_named', { contact_id: 'BIGINT' });
      need('campaign_performance', { title: null, sent: null, opens: null, clicks: null, unsubscribes: null, open_rate: null, click_rate: null, click_to_open_rate: null });
      need('funnel_step_dropoff', { funnel_id: 'BIGINT', label: null, reached: null, dropped: null, percent_of_entrants: null });
      need('subscriber_growth', { day: 'DATE', new_contacts: null });
      need('subscriber_growth_by_period', {});
      need('tag_list_member_counts', { previous_members: null, change: null, crm_subscribers: null });
      need('sync_run_health', { duration_s: null, rows_read: null });
      for (const v of ['sync_stream_freshness', 'sync_failures', 'webhook_lag_daily', 'webhook_dead_letters_open', 'push_dead_letters']) need(v, {});
      need('lake_freshness', { published_at: TZ, rows: null, generation: null });
      expect(problems).toEqual([]);
    });
  });

  // ---- 3. The lake with plain DuckDB ---------------------------------------------------------------------

  describe('the documented plain-DuckDB ways of reading the lake read what the warehouse holds', () => {
    it('the catalog opened read-only (`duckdb -readonly data/lake/catalog.duckdb`) answers the three documented queries as the DuckDB file', async () => {
      const fromFile = await duck(join(demoDir(), 'crm.duckdb'), { access_mode: 'READ_ONLY' }, (q) =>
        q('SELECT status, count(*)::INT AS n FROM contacts WHERE _deleted_at IS NULL GROUP BY ALL ORDER BY status'),
      );
      await duck(join(lake(), 'catalog.duckdb'), { access_mode: 'READ_ONLY' }, async (q) => {
        expect(await q('SELECT status, count(*)::INT AS n FROM contacts_current GROUP BY ALL ORDER BY status')).toEqual(fromFile);
        const asOf = await q("SELECT id, email FROM contacts_as_of(TIMESTAMPTZ '2026-03-01 00:00:00+00') WHERE id = 42");
        expect(asOf.length).toBeLessThanOrEqual(1);
        const fresh = await q('SELECT table_name, rows::INT AS rows FROM lake_freshness ORDER BY published_at');
        expect(fresh.find((r) => r.table_name === 'contacts')?.rows).toBe(5000);
      });
    });

    it("read_parquet of the lake's contacts (EXCLUDE id_bucket, live) and campaigns: the same rows as the DuckDB file's tables", async () => {
      await duck(':memory:', {}, async (q) => {
        await q(`ATTACH ${lit(join(demoDir(), 'crm.duckdb'))} AS w (READ_ONLY)`);
        const compare = async (fileSql: string, lakeSql: string, table: string, skip: string[]): Promise<void> => {
          const names = (await q(`SELECT column_name FROM duckdb_columns() WHERE database_name = 'w' AND table_name = '${table}' ORDER BY column_index`))
            .map((r) => String(r.column_name))
            .filter((c) => !skip.includes(c));
          const list = names.map((c) => `CAST("${c}" AS VARCHAR) AS "${c}"`).join(', ');
          const [d] = await q(`SELECT
            (SELECT count(*) FROM (SELECT ${list} FROM (${fileSql}) EXCEPT ALL SELECT ${list} FROM (${lakeSql})))::INT AS only_file,
            (SELECT count(*) FROM (SELECT ${list} FROM (${lakeSql}) EXCEPT ALL SELECT ${list} FROM (${fileSql})))::INT AS only_lake,
            (SELECT count(*) FROM (${lakeSql}))::INT AS n`);
          expect(d, table).toEqual({ only_file: 0, only_lake: 0, n: (await q(`SELECT count(*)::INT AS n FROM (${fileSql})`))[0]!.n });
        };
        await compare(
          'SELECT * FROM w.contacts WHERE _deleted_at IS NULL',
          `SELECT * EXCLUDE (id_bucket) FROM read_parquet(${lit(`${lake()}/contacts/**/*.parquet`)}, hive_partitioning = true) WHERE _deleted_at IS NULL`,
          'contacts',
          ['_valid_from'],
        );
        await compare('SELECT * FROM w.campaigns', `SELECT * FROM read_parquet(${lit(`${lake()}/campaigns/*.parquet`)})`, 'campaigns', []);
      });
    });
  });

  // ---- Running the demo again -----------------------------------------------------------------------------

  describe('running `crmsync demo` again in the same folder (docs/sync.md: "recreated each time")', () => {
    let again: Cli;
    let firstKeeper: number;
    beforeAll(async () => {
      firstKeeper = keepers[0]!;
      again = await crmsync(['demo', '--contacts', '200', '--seed', '7'], {}, 150_000);
      if (existsSync(join(demoDir(), 'temporal-dev-server.json'))) keepers.push(recordedKeeper());
    }, 180_000);

    it('exits 0 and holds only the second run: its 200 contacts and one run per stream', async () => {
      expect(again.code, again.stderr).toBe(0);
      expect(
        await rows('SELECT (SELECT count(*) FROM contacts)::INT AS contacts, (SELECT count(*) FROM _sync_runs)::INT AS runs, (SELECT count(DISTINCT run_id) FROM _sync_runs)::INT AS run_ids'),
      ).toEqual([{ contacts: 200, runs: 9, run_ids: 1 }]);
    });

    // README "Temporal": with TEMPORAL_ADDRESS unset, crmsync's embedded server "outlives the command
    // for CRMSYNC_EMBEDDED_IDLE (default 10m) ... A second crmsync command on the same data directory
    // joins the running server (recorded in <CRMSYNC_DATA_DIR>/temporal-dev-server.json)". The second
    // demo once recreated data/demo under the first demo's lingering server and started a second
    // one: the first kept running, no longer recorded anywhere, on a deleted temporal.sqlite (and
    // the second demo's lease keeps it alive).
    it("a second demo joins or stops the first demo's lingering Temporal: one embedded server for data/demo, not an orphan beside a new one", () => {
      expect(again.code).toBe(0);
      const recorded = recordedKeeper();
      expect({ firstStillRunning: aliveIn(firstKeeper, root) && recorded !== firstKeeper }).toEqual({ firstStillRunning: false });
    });
  });
});

// =====================================================================================================
// 4. The analyst views against a small site of our own (spec-server.ts), over four syncs
// =====================================================================================================

type State = { email: string; status: string; tags: number[]; lists: number[]; plan: string | null; created: string };
type Snapshot = Map<number, State>;

describe('the analyst views against a site of our own, over syncs with edits, deletes, a revert and a renamed tag', () => {
  let server: SpecServer;
  let dir: string;
  let env: Record<string, string>;
  const snaps: Snapshot[] = [];
  const times: number[] = [];
  const views: Record<string, Row[]> = {};
  let syncs: Cli[] = [];
  let html = '';

  const crmsync = (args: string[], timeoutMs = 60_000): Promise<Cli> => runBuiltCli(args, env, dir, timeoutMs);
  const rows = async (sql: string): Promise<Row[]> => {
    const r = await crmsync(['query', '-q', '-f', 'json', sql]);
    if (r.code !== 0) throw new Error(`crmsync query failed (${String(r.code)}): ${sql}\n${r.stderr}`);
    return JSON.parse(r.stdout) as Row[];
  };
  const at = (id: number): SpecContact => server.contacts.get(id)!;
  const nowWall = (offsetMs = 0): string => wall(new Date(Date.now() + offsetMs));
  const snapshot = (): Snapshot =>
    new Map(
      [...server.contacts.values()].map((c) => [
        c.id,
        { email: c.email, status: c.status, tags: [...c.tagIds].sort(), lists: [...c.listIds].sort(), plan: (c.custom.plan as string | undefined) ?? null, created: c.created_at },
      ]),
    );
  const contact = (id: number, o: Partial<SpecContact>): SpecContact => ({ ...seedContact(id), custom: {}, ...o });
  const tagTitle = (id: number): string => TAGS.find((t) => t.id === id)!.title;
  const listTitle = (id: number): string => LISTS.find((l) => l.id === id)!.title;
  const members = (s: Snapshot, kind: 'tag' | 'list', id: number): State[] => [...s.values()].filter((c) => (kind === 'tag' ? c.tags : c.lists).includes(id));
  /** tag_list_member_counts as docs/report.md words it: members now, at the end of the previous contacts sync, the change, the CRM's subscribed count. */
  const expectedMemberCounts = (now: Snapshot, before: Snapshot): Row[] =>
    [...TAGS.map((t) => ({ kind: 'tag', id: t.id, title: t.title })), ...LISTS.map((l) => ({ kind: 'list', id: l.id, title: l.title }))]
      .map((r) => {
        const m = members(now, r.kind as 'tag' | 'list', r.id).length;
        const p = members(before, r.kind as 'tag' | 'list', r.id).length;
        return { ...r, members: m, previous_members: p, change: m - p, crm_subscribers: members(now, r.kind as 'tag' | 'list', r.id).filter((c) => c.status === 'subscribed').length };
      })
      .sort((a, b) => `${a.kind}${a.id}`.localeCompare(`${b.kind}${b.id}`));
  const memberCountsSql = 'SELECT kind, id, title, members, previous_members, change, crm_subscribers FROM tag_list_member_counts';
  const pickCounts = (r: Row): Row => ({
    kind: r.kind,
    id: num(r.id),
    title: r.title,
    members: num(r.members),
    previous_members: num(r.previous_members),
    change: num(r.change),
    crm_subscribers: num(r.crm_subscribers),
  });
  const pickContact = (r: Row): Row => ({ id: num(r.id), email: r.email, status: r.status, tags: sortNums(r.tag_ids), lists: sortNums(r.list_ids) });
  const fromSnap = (s: Snapshot): Row[] => [...s].sort((a, b) => a[0] - b[0]).map(([id, c]) => ({ id, email: c.email, status: c.status, tags: c.tags, lists: c.lists }));

  beforeAll(async () => {
    server = new SpecServer([]);
    // Our site (CRM_TIMEZONE=UTC, so a wall time is its UTC instant): statuses, no tags, no lists, a plan or none.
    const S1: SpecContact[] = [
      contact(1, { status: 'subscribed', tagIds: [1, 2], listIds: [1], custom: { plan: 'pro' }, created_at: '2025-03-03 09:00:00', updated_at: '2025-03-03 09:00:00' }),
      contact(2, { status: 'subscribed', tagIds: [], listIds: [], user_id: null, created_at: '2025-03-03 15:00:00', updated_at: '2025-03-04 10:00:00' }),
      contact(3, { status: 'unsubscribed', tagIds: [1, 3], listIds: [1, 2], custom: { plan: 'free' }, created_at: '2025-03-10 08:00:00', updated_at: '2025-03-10 08:00:00' }),
      contact(4, { status: 'pending', tagIds: [2], listIds: [], created_at: '2025-03-17 08:00:00', updated_at: '2025-03-17 08:00:00' }),
      contact(5, { status: 'subscribed', tagIds: [3], listIds: [3], created_at: '2025-04-01 12:00:00', updated_at: '2025-04-01 12:00:00' }),
      contact(6, { status: 'bounced', tagIds: [1], listIds: [1], created_at: '2025-04-02 12:00:00', updated_at: '2025-04-02 12:00:00' }),
      contact(7, { status: 'subscribed', tagIds: [2, 3], listIds: [1], created_at: '2025-04-01 18:00:00', updated_at: '2025-04-01 18:00:00' }),
    ];
    for (const c of S1) server.contacts.set(c.id, c);
    const baseUrl = await server.start();
    dir = await mkdtemp(join(tmpdir(), 'crmsync-analyst-site-'));
    env = specServerCliEnv(baseUrl, dir, 'UTC');

    const sync = async (args: string[]): Promise<void> => {
      const res = await crmsync(args, 90_000);
      syncs.push(res);
      if (res.code !== 0) throw new Error(`crmsync ${args.join(' ')} failed (${String(res.code)}):\n${res.stdout}\n${res.stderr}`);
      snaps.push(snapshot());
      times.push(Date.now());
      await sleep(1_100); // the next edits are stamped (to the second) after this instant
    };
    syncs = [];
    await sync(['sync']);

    // Between syncs 1 and 2: a delete, a status change, a tag removed (updated_at unchanged, as tag
    // detaches leave it), an email edit, a new contact, a tag renamed, new campaign figures.
    server.contacts.delete(4);
    Object.assign(at(5), { status: 'unsubscribed', updated_at: nowWall() });
    at(6).tagIds = [];
    Object.assign(at(7), { email: 'seven@renamed.test', updated_at: nowWall() });
    server.contacts.set(8, contact(8, { status: 'subscribed', tagIds: [1], listIds: [2], created_at: nowWall(), updated_at: nowWall() }));
    TAGS.find((t) => t.id === 3)!.title = 'Beta, renamed';
    CAMPAIGN_STATS[1] = { sent: 40, opens: 10, clicks: 5 };
    CAMPAIGN_STATS[2] = { sent: 12, opens: 0, clicks: 0 };
    await sync(['sync', '--reconcile']);
    views.counts2 = await rows(memberCountsSql);

    // Between syncs 2 and 3: another delete, the status change reverted, a custom value edited, a new step report.
    server.contacts.delete(6);
    Object.assign(at(5), { status: 'subscribed', updated_at: nowWall() });
    Object.assign(at(7), { custom: { plan: 'enterprise' }, updated_at: nowWall() });
    server.overrides.set('/reports/automations/1/steps', {
      funnel: { id: 1, title: 'Welcome', trigger_name: 'user_registration', status: 'published' },
      stats: [
        { label: 'Entrance', count: 20, sequence_id: 0, type: 'root', percent: 100, percent_text: 100, previous_step_count: 20, drop_count: 0, drop_percent: 0 },
        { label: 'Welcome mail', count: 12, sequence_id: 10, type: 'action', percent: 60, percent_text: 60, previous_step_count: 20, drop_count: 8, drop_percent: 40 },
        { label: 'Goal', count: 9, sequence_id: 12, type: 'benchmark', percent: 45, percent_text: 45, previous_step_count: 12, drop_count: 3, drop_percent: 25 },
      ],
    } as unknown as Json);
    await sync(['sync', '--reconcile']);

    const sqls: Record<string, string> = {
      counts3: memberCountsSql,
      current: 'SELECT id, email, status, tag_ids, list_ids, tag_titles, list_titles, _synced_at FROM contacts_current ORDER BY id',
      contacts: 'SELECT id, email, status, tag_ids, list_ids, _deleted_at, _synced_at FROM contacts ORDER BY id',
      history: "SELECT id, email, status, tag_ids, list_ids, custom_values->>'$.plan' AS plan, valid_from, valid_to FROM contacts_history ORDER BY id, valid_from",
      asOf1: `SELECT id, email, status, tag_ids, list_ids FROM contacts_as_of(TIMESTAMPTZ '${new Date(times[0]!).toISOString()}') ORDER BY id`,
      asOf2: `SELECT id, email, status, tag_ids, list_ids FROM contacts_as_of(TIMESTAMPTZ '${new Date(times[1]!).toISOString()}') ORDER BY id`,
      memberships: "SELECT 'tag' AS kind, contact_id, tag_id AS id FROM contact_tags UNION ALL SELECT 'list', contact_id, list_id FROM contact_lists ORDER BY ALL",
      tagsNamed: 'SELECT contact_id, tag_id, tag_title FROM contact_tags_named ORDER BY ALL',
      // docs/warehouse.md examples, as written.
      perTag: 'SELECT tag_title, count(*) AS contacts FROM contact_tags_named t\nJOIN contacts_current c ON c.id = t.contact_id GROUP BY ALL ORDER BY contacts DESC',
      deletedLastWeek: 'SELECT id, email, _deleted_at FROM contacts WHERE _deleted_at > now() - INTERVAL 7 DAY',
      plan: "SELECT custom_values->>'$.plan' AS plan, count(*) FROM contacts_current GROUP BY ALL",
      bestCto: 'SELECT title, sent, open_rate, click_to_open_rate FROM campaign_performance ORDER BY click_to_open_rate DESC NULLS LAST LIMIT 10',
      versions5: 'SELECT valid_from, valid_to, email, status, tag_ids FROM contacts_history WHERE id = 5 ORDER BY valid_from',
      lastRuns: 'SELECT stream, status, finished_at, inserted, updated, unchanged, deleted, error\nFROM _sync_runs QUALIFY row_number() OVER (PARTITION BY stream ORDER BY started_at DESC) = 1',
      campaigns: 'SELECT id, title, sent, opens, clicks, open_rate, click_rate, click_to_open_rate FROM campaign_performance ORDER BY id',
      dropoff: 'SELECT funnel_id, sequence_id, label, reached, previous_step_count, dropped, drop_percent, percent_of_entrants FROM funnel_step_dropoff ORDER BY funnel_id, sequence_id',
      growth: 'SELECT CAST(day AS VARCHAR) AS day, new_contacts, new_subscribed, total_contacts FROM subscriber_growth ORDER BY day',
      byPeriod: 'SELECT period, CAST(period_start AS VARCHAR) AS period_start, status, new_contacts, total_contacts FROM subscriber_growth_by_period ORDER BY ALL',
      runs: 'SELECT run_id, stream, status, inserted, updated, unchanged, deleted, rows_read, started_at FROM sync_run_health ORDER BY started_at',
      freshness: 'SELECT stream, last_status, runs, failed_runs FROM sync_stream_freshness ORDER BY stream',
    };
    const names = Object.keys(sqls);
    for (let i = 0; i < names.length; i += 3) {
      const batch = names.slice(i, i + 3);
      const got = await Promise.all(batch.map((n) => rows(sqls[n]!)));
      batch.forEach((n, k) => (views[n] = got[k]!));
    }
    const rep = await crmsync(['report', '--out', join(dir, 'report.html')]);
    if (rep.code !== 0) throw new Error(`crmsync report failed:\n${rep.stderr}`);
    html = await readFile(join(dir, 'report.html'), 'utf8');
  }, 240_000);

  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const S = (i: number): Snapshot => snaps[i]!;
  const live = (): Snapshot => S(2);

  it('three syncs exit 0', () => {
    expect(syncs.map((s) => s.code)).toEqual([0, 0, 0]);
  });

  it('contacts_current: the live contacts only, each with the current titles of its tags and lists (a renamed tag by its new title), a contact with none of either included', () => {
    expect(views.current!.map(pickContact)).toEqual(fromSnap(live()));
    const titles = (v: unknown): string[] => [...((v as string[] | null) ?? [])].sort();
    for (const r of views.current!) {
      const c = live().get(num(r.id))!;
      expect(titles(r.tag_titles), `contact ${String(r.id)} tags`).toEqual(c.tags.map(tagTitle).sort());
      expect(titles(r.list_titles), `contact ${String(r.id)} lists`).toEqual(c.lists.map(listTitle).sort());
    }
    // Contact 2 has no tag and no list: still a live contact.
    expect(views.current!.some((r) => num(r.id) === 2)).toBe(true);
  });

  it('tombstones: deleted contacts keep their row with _deleted_at and their last tag_ids and list_ids, and have no memberships (docs/warehouse.md Tables)', () => {
    const deleted = views.contacts!.filter((r) => r._deleted_at !== null);
    expect(deleted.map((r) => ({ id: num(r.id), tags: sortNums(r.tag_ids), lists: sortNums(r.list_ids) }))).toEqual([
      { id: 4, tags: S(0).get(4)!.tags, lists: S(0).get(4)!.lists },
      { id: 6, tags: S(1).get(6)!.tags, lists: S(1).get(6)!.lists },
    ]);
    // "Contacts deleted in the CRM last week" (docs/warehouse.md), as written.
    expect(views.deletedLastWeek!.map((r) => num(r.id)).sort()).toEqual([4, 6]);
    expect(views.memberships!.map((r) => ({ kind: r.kind, c: num(r.contact_id), id: num(r.id) }))).toEqual(
      [...live()]
        .flatMap(([id, c]) => [...c.lists.map((l) => ({ kind: 'list', c: id, id: l })), ...c.tags.map((t) => ({ kind: 'tag', c: id, id: t }))])
        .sort((a, b) => a.kind.localeCompare(b.kind) || a.c - b.c || a.id - b.id),
    );
    expect(views.tagsNamed!.map((r) => ({ c: num(r.contact_id), t: num(r.tag_id), title: r.tag_title }))).toEqual(
      [...live()].flatMap(([id, c]) => c.tags.map((t) => ({ c: id, t, title: tagTitle(t) }))).sort((a, b) => a.c - b.c || a.t - b.t),
    );
  });

  it('unchanged contacts keep their _synced_at across the re-reads (docs/warehouse.md: "Unchanged rows keep their _load_id and _synced_at")', () => {
    const firstRead = (id: number): number => Date.parse(String(views.contacts!.find((r) => num(r.id) === id)!._synced_at));
    // Contacts 1 and 2 never changed (3 only saw its tag renamed, which is not a change of the contact).
    for (const id of [1, 2, 3]) expect(firstRead(id), `contact ${id}`).toBeLessThan(times[0]!);
  });

  it('contacts_history: one version per change (a revert is a change, a re-read or a renamed tag is not), the last one open unless deleted, intervals that do not overlap', () => {
    const key = (c: State): string => JSON.stringify([c.email, c.status, c.tags, c.lists, c.plan]);
    for (const id of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const states = snaps.map((s) => s.get(id));
      const want: State[] = [];
      for (const st of states) if (st && (want.length === 0 || key(want.at(-1)!) !== key(st))) want.push(st);
      const got = views.history!.filter((r) => num(r.id) === id);
      expect(
        got.map((r) => key({ email: r.email as string, status: r.status as string, tags: sortNums(r.tag_ids), lists: sortNums(r.list_ids), plan: (r.plan as string | null) ?? null, created: '' })),
        `contact ${id} versions`,
      ).toEqual(want.map(key));
      const open = got.filter((r) => r.valid_to === null);
      expect(open.length, `contact ${id} open versions`).toBe(live().has(id) ? 1 : 0);
      if (open.length) expect(got.at(-1)!.valid_to).toBeNull();
      for (let i = 0; i < got.length; i++) {
        const from = Date.parse(String(got[i]!.valid_from));
        if (got[i]!.valid_to !== null) expect(Date.parse(String(got[i]!.valid_to)), `contact ${id} version ${i} ends after it begins`).toBeGreaterThan(from);
        if (i > 0) expect(from, `contact ${id} version ${i} begins after the one before ends`).toBeGreaterThanOrEqual(Date.parse(String(got[i - 1]!.valid_to)));
      }
    }
    // "Every version of contact 42" (docs/warehouse.md), for our contact 5: subscribed, unsubscribed, subscribed again.
    expect(views.versions5!.map((r) => r.status)).toEqual(['subscribed', 'unsubscribed', 'subscribed']);
  });

  it('contacts_as_of: after each sync, every contact as the CRM held it then (the deleted ones while they lived)', () => {
    expect(views.asOf1!.map(pickContact)).toEqual(fromSnap(S(0)));
    expect(views.asOf2!.map(pickContact)).toEqual(fromSnap(S(1)));
  });

  it('tag_list_member_counts after the second and third syncs: members now and at the previous contacts sync, the change, and the CRM count (deleted contacts are not members)', () => {
    const sort = (r: Row[]): Row[] => r.map(pickCounts).sort((a, b) => `${String(a.kind)}${String(a.id)}`.localeCompare(`${String(b.kind)}${String(b.id)}`));
    expect(sort(views.counts2!)).toEqual(expectedMemberCounts(S(1), S(0)));
    expect(sort(views.counts3!)).toEqual(expectedMemberCounts(S(2), S(1)));
  });

  it('contacts per tag (docs/warehouse.md example): the live members per tag, renamed tag by its new title, most first', () => {
    const want = TAGS.map((t) => ({ tag_title: t.title, contacts: members(live(), 'tag', t.id).length })).filter((r) => r.contacts > 0);
    const byTitle = (a: Row, b: Row): number => String(a.tag_title).localeCompare(String(b.tag_title));
    expect(views.perTag!.map((r) => ({ tag_title: r.tag_title, contacts: num(r.contacts) })).sort(byTitle)).toEqual(want.sort(byTitle));
    expectDescNullsLast(
      views.perTag!.map((r) => r.contacts),
      'contacts',
    );
  });

  it('a custom field by value (docs/warehouse.md example): each plan and NULL for contacts without one, adding up to the live contacts', () => {
    const want = new Map<string | null, number>();
    for (const c of live().values()) want.set(c.plan, (want.get(c.plan) ?? 0) + 1);
    expect(new Map(views.plan!.map((r) => [r.plan as string | null, num(r['count_star()'])]))).toEqual(want);
  });

  it('campaign_performance: one row per campaign with the latest figures; rates over sent, click-to-open over opens, NULL without a denominator', () => {
    const want = [1, 2, 3].map((id) => {
      const s = CAMPAIGN_STATS[id] as { sent: number; opens: number; clicks: number };
      return {
        id,
        sent: s.sent,
        opens: s.opens,
        clicks: s.clicks,
        open_rate: s.sent ? s.opens / s.sent : null,
        click_rate: s.sent ? s.clicks / s.sent : null,
        cto: s.opens ? s.clicks / s.opens : null,
      };
    });
    expect(views.campaigns!.map((r) => ({ id: num(r.id), sent: num(r.sent), opens: num(r.opens), clicks: num(r.clicks) }))).toEqual(
      want.map(({ id, sent, opens, clicks }) => ({ id, sent, opens, clicks })),
    );
    for (const w of want) {
      const got = views.campaigns!.find((r) => num(r.id) === w.id)!;
      near(got.open_rate, w.open_rate);
      near(got.click_rate, w.click_rate);
      near(got.click_to_open_rate, w.cto);
    }
    // "Best campaigns by click-to-open rate" (docs/warehouse.md): campaign 1 first, the two without opens after it.
    expect(views.bestCto!.map((r) => r.title)[0]).toBe('Spring launch');
    expect(views.bestCto!.slice(1).map((r) => r.click_to_open_rate)).toEqual([null, null]);
  });

  it('funnel_step_dropoff: only the latest step report per funnel (docs/warehouse.md), with its reached, dropped, drop % and % of entrants', () => {
    const steps = [
      { sequence_id: 0, label: 'Entrance', reached: 20, previous: 20, dropped: 0 },
      { sequence_id: 10, label: 'Welcome mail', reached: 12, previous: 20, dropped: 8 },
      { sequence_id: 12, label: 'Goal', reached: 9, previous: 12, dropped: 3 },
    ];
    expect(views.dropoff!.map((r) => ({ sequence_id: num(r.sequence_id), label: r.label, reached: num(r.reached), previous: num(r.previous_step_count), dropped: num(r.dropped) }))).toEqual(steps);
    for (const s of steps) {
      const got = views.dropoff!.find((r) => num(r.sequence_id) === s.sequence_id)!;
      near(got.drop_percent, (100 * s.dropped) / s.previous, 0.005);
      near(got.percent_of_entrants, (100 * s.reached) / 20, 0.005);
    }
  });

  it('subscriber_growth: per day of creation, the contacts created and how many are subscribed now (after a revert), with a running total', () => {
    const rows = views.growth!;
    // Days on which only deleted contacts were created are left to the ambiguity (see the report); every other day is exact.
    const deletedDays = new Set([S(0).get(4)!.created.slice(0, 10), S(1).get(6)!.created.slice(0, 10)]);
    const days = [...new Set([...live().values()].map((c) => c.created.slice(0, 10)))].sort();
    for (const day of days) {
      const on = [...live().values()].filter((c) => c.created.slice(0, 10) === day);
      expect(
        rows.find((r) => r.day === day),
        day,
      ).toMatchObject({ day, new_contacts: on.length, new_subscribed: on.filter((c) => c.status === 'subscribed').length });
    }
    expect(rows.filter((r) => !deletedDays.has(r.day as string)).map((r) => r.day)).toEqual(days);
    let running = 0;
    for (const r of rows) expect(num(r.total_contacts), String(r.day)).toBe((running += num(r.new_contacts)));
  });

  it('subscriber_growth_by_period: live contacts only (no period for a day whose only contact was deleted), totals ending at the live count per status', () => {
    const rows = views.byPeriod!;
    const c4day = S(0).get(4)!.created.slice(0, 10);
    expect(rows.filter((r) => r.period === 'day' && r.period_start === c4day)).toEqual([]);
    for (const period of ['day', 'week', 'month']) {
      const mine = rows.filter((r) => r.period === period);
      for (const status of ['subscribed', 'unsubscribed', 'pending', 'bounced', 'complained']) {
        const series = mine.filter((r) => r.status === status);
        const want = [...live().values()].filter((c) => c.status === status).length;
        expect(
          series.reduce((a, r) => a + num(r.new_contacts), 0),
          `${period} ${status}`,
        ).toBe(want);
        if (series.length) expect(num(series.at(-1)!.total_contacts), `${period} ${status} total`).toBe(want);
      }
    }
  });

  const contactsRuns = (): Row[] =>
    views.runs!.filter((r) => r.stream === 'contacts').map((r) => ({ inserted: num(r.inserted), updated: num(r.updated), unchanged: num(r.unchanged), deleted: num(r.deleted) }));

  it('_sync_runs, sync_run_health and the "last run of each stream" example: inserted, updated, unchanged and deleted of the backfill and of a run with no new contact; rows_read their sum', () => {
    const runs = contactsRuns();
    expect(runs.length).toBe(3);
    expect(runs[0]).toEqual({ inserted: 7, updated: 0, unchanged: 0, deleted: 0 });
    // sync 3: 5 (status back) and 7 (custom value) changed; 1, 2, 3, 8 unchanged; 6 deleted.
    expect(runs[2]).toEqual({ inserted: 0, updated: 2, unchanged: 4, deleted: 1 });
    for (const r of views.runs!) expect(num(r.rows_read), `${String(r.stream)} ${String(r.run_id)}`).toBe(num(r.inserted) + num(r.updated) + num(r.unchanged));
    expect(views.lastRuns!.find((r) => r.stream === 'contacts')).toMatchObject({ status: 'succeeded', inserted: 0, updated: 2, unchanged: 4, deleted: 1, error: null });
    expect(views.lastRuns!.length).toBe(9);
    expect(views.freshness!.map((r) => ({ stream: r.stream, last_status: r.last_status, runs: num(r.runs), failed_runs: num(r.failed_runs) }))).toEqual(
      views.lastRuns!.map((r) => ({ stream: r.stream, last_status: 'succeeded', runs: 3, failed_runs: 0 })).sort((a, b) => String(a.stream).localeCompare(String(b.stream))),
    );
  });

  // README "Warehouse" and docs/warehouse.md "Tables": "each run reports inserted, updated, unchanged
  // and deleted rows in _sync_runs"; docs/report.md: sync_run_health's `rows_read` is "inserted +
  // updated + unchanged"; docs/sync.md: "Each contact counts once in the rows read". In a run that
  // brings a new contact, crmsync once counted it inserted (newest-ids read) and again unchanged (the
  // reconcile scan, or the rolling sweep of a plain incremental run reading it back): sync 2 reports
  // unchanged 4 and rows_read 8 for a CRM of 7 contacts, of which 3 stayed unchanged.
  it('a contact the run inserted is not counted unchanged as well: sync 2 is 1 inserted, 3 updated, 3 unchanged, 1 deleted, rows read = the 7 contacts', () => {
    expect(contactsRuns()[1]).toEqual({ inserted: 1, updated: 3, unchanged: 3, deleted: 1 });
  });

  it('crmsync report after the third sync: the live contacts, and per tag and list the members now, at the previous sync, the change and the CRM count (docs/report.md)', () => {
    expect(html.replace(/<[^>]+>/g, ' ')).toMatch(new RegExp(`\\b${live().size} live contacts\\b`));
    const table = (id: string): Record<string, string>[] => {
      const start = html.indexOf(`<table id="${id}"`);
      expect(start, id).toBeGreaterThan(-1);
      const body = html.slice(start, html.indexOf('</table>', start));
      const text = (x: string): string =>
        x
          .replace(/<[^>]+>/g, '')
          .replace(/&quot;/g, '"')
          .replace(/&#39;/g, "'")
          .replace(/&lt;/g, '<')
          .replace(/&gt;/g, '>')
          .replace(/&amp;/g, '&')
          .trim();
      return [...body.matchAll(/<tr>(.*?)<\/tr>/gs)]
        .map((m) => Object.fromEntries([...m[1]!.matchAll(/<td[^>]*data-col="([^"]+)"[^>]*>(.*?)<\/td>/gs)].map((c) => [c[1]!, text(c[2]!)])))
        .filter((r) => Object.keys(r).length > 0);
    };
    const n = (v: string | undefined): number => Number(String(v).replace('\u2212', '-').replace('+', ''));
    const want = expectedMemberCounts(S(2), S(1));
    for (const [id, kind] of [
      ['tags-table', 'tag'],
      ['lists-table', 'list'],
    ] as const) {
      const got = table(id).map((r) => ({ title: r.title, members: n(r.members), previous_members: n(r.previous_members), change: n(r.change), crm_subscribers: n(r.crm_subscribers) }));
      const mine = want.filter((w) => w.kind === kind).map(({ title, members, previous_members, change, crm_subscribers }) => ({ title, members, previous_members, change, crm_subscribers }));
      const byTitle = (a: { title?: unknown }, b: { title?: unknown }): number => String(a.title).localeCompare(String(b.title));
      expect(got.sort(byTitle), id).toEqual(mine.sort(byTitle));
    }
  });

  it('crmsync verify after the three syncs finds no difference (exit 0)', { timeout: 90_000 }, async () => {
    const res = await crmsync(['verify'], 80_000);
    expect(res.code, `${res.stdout}\n${res.stderr}`).toBe(0);
  });

  // README "Reverse sync": `crmsync query "SELECT * FROM push_dead_letters"  # rows that failed, with
  // the field at fault`; docs/warehouse.md "Tables": "Timestamps are TIMESTAMPTZ (UTC; ...)". The
  // ledger's times are plain TIMESTAMPs, so an analyst's DuckDB client in another zone (DuckDB's
  // TimeZone is the machine's) read them, when they were plain TIMESTAMPs, as local wall times: "failed in the last hour" misses them.
  describe('a push whose row is refused locally, then push_dead_letters', () => {
    let push: Cli;
    beforeAll(async () => {
      push = await crmsync(['push', '--from', "SELECT 'not-an-email' AS email, 'subscribed' AS status"], 90_000);
    }, 120_000);

    it('exits 1 (a row was rejected) and push_dead_letters names it with the field at fault', async () => {
      expect(push.code, `${push.stdout}\n${push.stderr}`).toBe(1);
      const got = await rows('SELECT * FROM push_dead_letters');
      expect(got.map((r) => ({ email: r.email, error_field: r.error_field }))).toEqual([{ email: 'not-an-email', error_field: 'email' }]);
    });

    it('push_dead_letters times are TIMESTAMPTZ instants like every warehouse timestamp: a DuckDB client in Tokyo finds the row "updated in the last hour"', async () => {
      await duck(join(dir, 'lake', 'catalog.duckdb'), { access_mode: 'READ_ONLY' }, async (q) => {
        await q("SET TimeZone = 'Asia/Tokyo'");
        const types = await q("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'push_dead_letters' AND column_name IN ('last_attempt_at', 'updated_at') ORDER BY 1");
        const recent = await q('SELECT count(*)::INT AS n FROM push_dead_letters WHERE updated_at > now() - INTERVAL 1 HOUR AND updated_at <= now()');
        expect({ types, recent }).toEqual({
          types: [
            { column_name: 'last_attempt_at', data_type: 'TIMESTAMP WITH TIME ZONE' },
            { column_name: 'updated_at', data_type: 'TIMESTAMP WITH TIME ZONE' },
          ],
          recent: [{ n: 1 }],
        });
      });
    });
  });

  // docs/warehouse.md: `contacts_as_of(ts)`: "every contact as it was at ts"; `_valid_from`: "when
  // its current version began". A CRM whose clock runs a few minutes ahead of the warehouse's (the
  // docs allow for one behind, docs/sync.md "a server whose clock is behind") stamps a new contact and
  // an edit in the near future: crmsync once started those versions at the CRM's updated_at, after the
  // moment it read them, so right after the sync contacts_as_of(now()) leaves out a live contact and
  // shows the old value of an edited one, while contacts_current shows both as they are.
  describe('a CRM whose clock is five minutes ahead', () => {
    let asOfNow: Row[];
    let current: Row[];
    beforeAll(async () => {
      const ahead = nowWall(5 * 60_000);
      server.contacts.set(9, contact(9, { status: 'subscribed', tagIds: [], listIds: [], created_at: ahead, updated_at: ahead }));
      Object.assign(at(2), { email: 'two@renamed.test', updated_at: ahead });
      const res = await crmsync(['sync', '--reconcile'], 90_000);
      if (res.code !== 0) throw new Error(`crmsync sync failed:\n${res.stdout}\n${res.stderr}`);
      [asOfNow, current] = await Promise.all([rows('SELECT id, email FROM contacts_as_of(now()) ORDER BY id'), rows('SELECT id, email FROM contacts_current ORDER BY id')]);
    }, 120_000);

    it('contacts_current holds the new contact and the edit at once', () => {
      expect(current.map((r) => ({ id: num(r.id), email: r.email }))).toEqual([...server.contacts.values()].sort((a, b) => a.id - b.id).map((c) => ({ id: c.id, email: c.email })));
    });

    it('right after the sync, contacts_as_of(now()) is every live contact as contacts_current shows it', () => {
      expect(asOfNow).toEqual(current);
    });
  });
});
