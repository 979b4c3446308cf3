// `npm run test:fast` against the fast set's settings at a baseline commit, in one script, one
// after the other, so both see the same machine: wall time, CPU time (user + system of every
// process the run starts) and the load average around each run.
//   node --import tsx bench/test-fast.ts [--baseline f4c2e39] [--rounds 1]
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { median } from './runner/median.js';

const { values } = parseArgs({ options: { baseline: { type: 'string', default: 'f4c2e39' }, rounds: { type: 'string', default: '1' } } });
const root = join(import.meta.dirname, '..');
// The config finds test/ beside itself: the baseline's copy goes in the checkout's root for the run.
const baselineConfig = join(root, 'vitest.fast-baseline.tmp.config.ts');
writeFileSync(baselineConfig, execFileSync('git', ['show', `${values.baseline}:vitest.fast.config.ts`], { cwd: root }));

interface Run {
  config: string;
  wallS: number;
  cpuS: number;
  files: number;
  tests: number;
  passed: boolean;
  loadBefore: number;
  loadAfter: number;
}

function run(config: string): Run {
  const loadBefore = loadavg()[0]!;
  const r = spawnSync('/usr/bin/time', ['-f', 'TIME %e %U %S', 'npx', 'vitest', 'run', '-c', config], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const out = `${r.stdout}${r.stderr}`.replace(/\x1b\[[0-9;]*m/g, ''); // eslint-disable-line no-control-regex
  const [, wall, user, sys] = /TIME (\S+) (\S+) (\S+)/.exec(out) ?? [];
  return {
    config,
    wallS: Number(wall),
    cpuS: Number((Number(user) + Number(sys)).toFixed(1)),
    files: Number(/Test Files\s+(?:\d+ failed \| )?(\d+) passed/.exec(out)?.[1] ?? 0),
    tests: Number(/Tests\s+(?:\d+ failed \| )?(\d+) passed/.exec(out)?.[1] ?? 0),
    passed: r.status === 0,
    loadBefore: Number(loadBefore.toFixed(2)),
    loadAfter: Number(loadavg()[0]!.toFixed(2)),
  };
}

try {
  const runs: Run[] = [];
  for (let i = 0; i < Number(values.rounds); i++) {
    for (const config of ['vitest.fast-baseline.tmp.config.ts', 'vitest.fast.config.ts']) {
      const r = run(config);
      runs.push(r);
      process.stdout.write(`${JSON.stringify(r)}\n`);
    }
  }
  const ratio = (k: 'wallS' | 'cpuS') =>
    Number(median(runs.filter((r) => r.config === 'vitest.fast.config.ts').map((r, i) => r[k] / runs.filter((b) => b.config !== 'vitest.fast.config.ts')[i]![k])).toFixed(2));
  const result = { benchmark: 'test-fast', at: new Date().toISOString(), node: process.version, baseline: values.baseline, runs, wallRatio: ratio('wallS'), cpuRatio: ratio('cpuS') };
  process.stdout.write(`test:fast against ${values.baseline}'s settings: wall x${result.wallRatio}, CPU x${result.cpuRatio}\n`);
  mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
  writeFileSync(join(import.meta.dirname, 'results', 'test-fast.json'), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  rmSync(baselineConfig, { force: true });
}
