import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Records one run under `label` in `bench/results/<benchmark>.json` (`{ benchmark, runs }`),
 * beside the runs recorded before it, so before/after pairs stay side by side.
 */
export function recordLabelledRun(benchmark: string, label: string, run: unknown): string {
  const out = join(import.meta.dirname, '..', 'results');
  mkdirSync(out, { recursive: true });
  const file = join(out, `${benchmark}.json`);
  const previous = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { runs?: Record<string, unknown> }) : {};
  writeFileSync(file, JSON.stringify({ benchmark, runs: { ...previous.runs, [label]: run } }, null, 2) + '\n');
  return file;
}
