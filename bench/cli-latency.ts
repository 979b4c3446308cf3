// Wall time of the commands a user runs most on the embedded default (no TEMPORAL_ADDRESS): a
// sync with nothing to do, `status` and `schedule list`, each as a ratio to `crmsync --help` (the
// cost of starting node and loading the CLI) timed in the same run. The simulator runs in this
// process; each command is a child process, as a user runs it: `bin/crmsync.js` (dist/ when it
// matches the sources, else the sources through tsx), or with `--via tsx` the sources through tsx
// as the figures before the build stamp were taken. Each no-change sync is broken down from its
// own output: until the workers poll (its `workers polling` log line), or until it found the
// background worker an earlier command left running (CRMSYNC_EMBEDDED_IDLE, the default 10m), until
// each stream is done (its timestamped progress lines), and the rest (lake publish, drain, exit).
// The data directory's background worker and embedded server are stopped at the end.
// With `--against DIR` (another checkout, built, e.g. a worktree of main) the same commands of
// that checkout run too, in a data directory of their own, round by round alternating with this
// one's: an A/B under the same load, recorded as `<label>` and `<label>:against`, with the ratio.
//   node --import tsx bench/cli-latency.ts [--rounds N] [--label after] [--via bin|tsx] [--against DIR]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSimulator } from '../src/simulator/index.js';
import { stopEmbeddedServer } from '../src/temporal/stop-embedded-server.js';
// @ts-expect-error plain JavaScript beside the command, without types
import { distState } from '../bin/build-stamp.js';
import { median } from './runner/median.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
};
const rounds = Number(arg('rounds', '3'));
const label = arg('label', 'current');
const via = arg('via', 'bin');
if (via !== 'bin' && via !== 'tsx') throw new Error('--via must be bin or tsx');
const dist = (distState as (root: string) => string)(root);
const runs = via === 'tsx' ? 'the sources through tsx' : dist === 'current' ? 'bin/crmsync.js on dist/' : `bin/crmsync.js on the sources (dist/ ${dist}; npm run build first)`;
console.log(`commands run as ${runs}`);
const commandOf = (checkout: string): string[] => (via === 'tsx' ? ['--import', 'tsx', join(checkout, 'src', 'cli', 'entry.ts')] : [join(checkout, 'bin', 'crmsync.js')]);
const against = process.argv.includes('--against') ? arg('against', '') : undefined;
if (against !== undefined && (against === '' || via !== 'bin' || (distState as (root: string) => string)(against) !== 'current')) {
  throw new Error('--against needs a built checkout (npm run build there) and --via bin');
}

interface Run {
  seconds: number;
  startedAtMs: number;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: Record<string, string>, command: string[]): Promise<Run> {
  const started = performance.now();
  const startedAtMs = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...command, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve({ seconds: (performance.now() - started) / 1000, startedAtMs, stdout, stderr }) : reject(new Error(`crmsync ${args.join(' ')} exited ${code}: ${stderr}`)),
    );
  });
}

/** Seconds from the spawn to the workers polling, to each stream's first `done` line, and to exit. */
function breakdown(r: Run): Record<string, number> {
  const at = (ms: number) => Number(((ms - r.startedAtMs) / 1000).toFixed(2));
  const out: Record<string, number> = {};
  for (const line of r.stderr.split('\n')) {
    if (!line.startsWith('{')) continue;
    const l = JSON.parse(line) as { msg?: string; time?: number };
    if (l.time === undefined) continue;
    if (l.msg === 'workers polling') out['workers polling'] ??= at(l.time);
    // The background worker an earlier command left (CRMSYNC_EMBEDDED_IDLE): found, or started.
    if (l.msg === 'a warehouse worker is running; using it') out['worker found'] ??= at(l.time);
    if (l.msg === 'started a background worker') out['background worker started'] ??= at(l.time);
  }
  for (const line of r.stdout.split('\n')) {
    const m = /^(\S+Z) (\S+)\s+done\b/.exec(line);
    if (m) out[`${m[2]} done`] ??= at(Date.parse(m[1]!));
  }
  out.exit = Number(r.seconds.toFixed(2));
  return out;
}

const sim = await startSimulator({ contacts: 2_000, seed: 16 });

interface Variant {
  label: string;
  command: string[];
  dir: string;
  env: Record<string, string>;
  times: Record<string, number[]>;
  breakdowns: Record<string, number>[];
}

function variant(variantLabel: string, checkout: string): Variant {
  const dir = mkdtempSync(join(tmpdir(), 'crmsync-bench-cli-'));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    ...(process.env.XDG_CACHE_HOME ? { XDG_CACHE_HOME: process.env.XDG_CACHE_HOME } : {}),
    ...(process.env.TEMPORAL_CLI_PATH ? { TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH } : {}),
    CRM_BASE_URL: sim.baseUrl,
    CRM_USERNAME: sim.credentials.username,
    CRM_PASSWORD: sim.credentials.password,
    CRMSYNC_DB: join(dir, 'crm.duckdb'),
    CRMSYNC_LAKE: join(dir, 'lake'),
    CRMSYNC_DATA_DIR: dir,
    CRMSYNC_LOG_LEVEL: 'warn',
  };
  return { label: variantLabel, command: commandOf(checkout), dir, env, times: { help: [], 'sync (nothing to do)': [], status: [], 'schedule list': [] }, breakdowns: [] };
}

const variants = [variant(label, root), ...(against ? [variant(`${label}:against`, against)] : [])];
const loadAtStart = loadavg().map((x) => Number(x.toFixed(2)));
try {
  for (const v of variants) {
    const first = await run(['sync'], v.env, v.command);
    console.log(`${v.label}: first sync (backfill of 2,000 contacts, not counted): ${first.seconds.toFixed(2)} s`);
  }
  for (let r = 0; r < rounds; r++) {
    // Alternating, so both see the same load.
    for (const v of r % 2 === 0 ? variants : [...variants].reverse()) {
      v.times.help!.push((await run(['--help'], v.env, v.command)).seconds);
      // The sync's own log lines (JSON, as stdout is not a terminal) give the time its workers poll.
      const sync = await run(['sync'], { ...v.env, CRMSYNC_LOG_LEVEL: 'info' }, v.command);
      v.times['sync (nothing to do)']!.push(sync.seconds);
      v.breakdowns.push(breakdown(sync));
      v.times.status!.push((await run(['status'], v.env, v.command)).seconds);
      v.times['schedule list']!.push((await run(['schedule', 'list'], v.env, v.command)).seconds);
    }
  }
} finally {
  for (const v of variants) {
    await stopEmbeddedServer(v.dir).catch(() => undefined);
    rmSync(v.dir, { recursive: true, force: true });
  }
  await sim.close();
}
const loadAtEnd = loadavg().map((x) => Number(x.toFixed(2)));

function summarize(v: Variant) {
  const baseline = median(v.times.help!);
  const figures = Object.fromEntries(
    Object.entries(v.times).map(([what, xs]) => [
      what,
      { medianS: Number(median(xs).toFixed(2)), runsS: xs.map((x) => Number(x.toFixed(2))), ratioToHelp: Number((median(xs) / baseline).toFixed(2)) },
    ]),
  );
  console.log(`${v.label}:`);
  for (const [what, f] of Object.entries(figures)) console.log(`  ${what.padEnd(22)} median ${f.medianS.toFixed(2)} s  (${f.ratioToHelp}x \`crmsync --help\`)  runs ${f.runsS.join(', ')}`);
  // Per mark, the median over the rounds of the seconds since the sync was spawned.
  const marks = [...new Set(v.breakdowns.flatMap((b) => Object.keys(b)))];
  const syncBreakdown: Record<string, number> = Object.fromEntries(
    marks.map((k): [string, number] => [k, median(v.breakdowns.map((b) => b[k]).filter((x): x is number => x !== undefined))]).sort((a, b) => a[1] - b[1]),
  );
  console.log('  no-change sync, seconds after spawn (median):');
  for (const [k, t] of Object.entries(syncBreakdown)) console.log(`    ${k.padEnd(24)} ${t.toFixed(2)}`);
  return { figures, syncBreakdownS: syncBreakdown };
}
const summaries = variants.map((v) => ({ v, ...summarize(v) }));
console.log(`load average (1, 5, 15 min): ${loadAtStart.join(', ')} at start, ${loadAtEnd.join(', ')} at end (2 cores)`);
const [mine, other] = summaries;
const ratios = other ? Object.fromEntries(Object.keys(mine!.figures).map((k) => [k, Number((mine!.figures[k]!.medianS / other.figures[k]!.medianS).toFixed(2))])) : undefined;
if (ratios) console.log(`median ${label} / median ${label}:against (${against}): ${JSON.stringify(ratios)}`);

const resultFile = join(here, 'results', 'cli-latency.json');
let recorded: Record<string, unknown> = {};
try {
  recorded = JSON.parse(readFileSync(resultFile, 'utf8')) as Record<string, unknown>;
} catch {
  recorded = {};
}
for (const { v, figures, syncBreakdownS } of summaries) {
  recorded[v.label] = {
    at: new Date().toISOString(),
    rounds,
    embedded: true,
    runs: v === variants[0] ? runs : `bin/crmsync.js on dist/ of ${against}`,
    loadAverage: { start: loadAtStart, end: loadAtEnd },
    figures,
    syncBreakdownS,
    ...(v === variants[0] && ratios ? { medianRatioToAgainst: ratios } : {}),
  };
}
writeFileSync(resultFile, `${JSON.stringify(recorded, null, 2)}\n`);
console.log(`recorded as ${summaries.map((x) => `"${x.v.label}"`).join(' and ')} in ${resultFile}`);
