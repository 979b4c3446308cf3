// Runs named benchmarks (all by default), then rewrites bench/results/SUMMARY.md from every
// recorded result.  npm run bench -- [name...] [--list] [--summary-only]
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findBenchmarks, BENCHMARKS } from './runner/registry.js';
import { summarizeResults } from './runner/summarize-results.js';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
if (args.includes('--list')) {
  for (const b of BENCHMARKS) console.log(`${b.name.padEnd(16)} ${b.what}`);
  process.exit(0);
}
const names = args.filter((a) => !a.startsWith('--'));
const failed: string[] = [];
if (!args.includes('--summary-only')) {
  for (const b of findBenchmarks(names)) {
    console.log(`\n== ${b.name}: ${b.what}`);
    const started = Date.now();
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(here, b.file), ...b.args], { stdio: 'inherit' });
    console.log(`== ${b.name}: ${r.status === 0 ? 'done' : `failed (exit ${r.status ?? r.signal})`} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    if (r.status !== 0) failed.push(b.name);
  }
}
const summaryPath = join(here, 'results', 'SUMMARY.md');
await writeFile(summaryPath, await summarizeResults(join(here, 'results')));
console.log(`\nsummary: ${summaryPath}`);
if (failed.length > 0) {
  console.error(`failed: ${failed.join(', ')}`);
  process.exitCode = 1;
}
