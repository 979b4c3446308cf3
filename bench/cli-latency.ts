// Wall time of the commands a user runs most on the embedded default (no TEMPORAL_ADDRESS): a
// sync with nothing to do, `status` and `schedule list`, each as a ratio to `crmsync --help` (the
// cost of starting node and loading the CLI) timed in the same run. The simulator runs in this
// process; each command is a child process, as a user runs it.
//   node --import tsx bench/cli-latency.ts [--rounds N] [--label after]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSimulator } from '../src/simulator/index.js';
import { stopEmbeddedServer } from '../src/temporal/stop-embedded-server.js';

const here = dirname(fileURLToPath(import.meta.url));
const entry = join(here, '..', 'src', 'cli', 'entry.ts');
const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
};
const rounds = Number(arg('rounds', '3'));
const label = arg('label', 'current');

function run(args: string[], env: Record<string, string>): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve((performance.now() - started) / 1000) : reject(new Error(`crmsync ${args.join(' ')} exited ${code}: ${stderr}`))));
  });
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const sim = await startSimulator({ contacts: 2_000, seed: 16 });
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
const times: Record<string, number[]> = { help: [], 'sync (nothing to do)': [], status: [], 'schedule list': [] };
try {
  const first = await run(['sync'], env);
  console.log(`first sync (backfill of 2,000 contacts, not counted): ${first.toFixed(2)} s`);
  for (let r = 0; r < rounds; r++) {
    times.help!.push(await run(['--help'], env));
    times['sync (nothing to do)']!.push(await run(['sync'], env));
    times.status!.push(await run(['status'], env));
    times['schedule list']!.push(await run(['schedule', 'list'], env));
  }
} finally {
  await stopEmbeddedServer(dir).catch(() => undefined);
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
}

const baseline = median(times.help!);
const figures = Object.fromEntries(
  Object.entries(times).map(([what, xs]) => [what, { medianS: Number(median(xs).toFixed(2)), runsS: xs.map((x) => Number(x.toFixed(2))), ratioToHelp: Number((median(xs) / baseline).toFixed(2)) }]),
);
for (const [what, f] of Object.entries(figures)) console.log(`${what.padEnd(22)} median ${f.medianS.toFixed(2)} s  (${f.ratioToHelp}x \`crmsync --help\`)  runs ${f.runsS.join(', ')}`);

const resultFile = join(here, 'results', 'cli-latency.json');
let recorded: Record<string, unknown> = {};
try {
  recorded = JSON.parse(readFileSync(resultFile, 'utf8')) as Record<string, unknown>;
} catch {
  recorded = {};
}
recorded[label] = { at: new Date().toISOString(), rounds, embedded: true, figures };
writeFileSync(resultFile, `${JSON.stringify(recorded, null, 2)}\n`);
console.log(`recorded as "${label}" in ${resultFile}`);
