import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Entries of a list of objects shown one by one; a longer list (a series of rounds or samples) is counted. */
const LISTED_ENTRIES = 6;
/** Labelled runs shown of a file that keeps many (`BENCH_LABEL`): the latest, by their `at`. */
const LATEST_RUNS = 6;

/**
 * Flattens a result document to dotted keys with scalar values; arrays of values are summarized by
 * length, and so are lists of more than LISTED_ENTRIES objects.
 */
export function flattenFigures(value: unknown, prefix = '', out: [string, string][] = []): [string, string][] {
  if (value === null || value === undefined) return out;
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v !== 'object' || v === null)) out.push([prefix, `${value.length} values`]);
    else if (value.length > LISTED_ENTRIES) out.push([prefix, `${value.length} entries (see the file)`]);
    else value.forEach((v, i) => flattenFigures(v, `${prefix}[${i}]`, out));
    return out;
  }
  if (typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) flattenFigures(v, prefix ? `${prefix}.${k}` : k, out);
    return out;
  }
  out.push([prefix, String(value)]);
  return out;
}

/** A markdown page with one table per bench/results/*.json file, in name order. */
export async function summarizeResults(dir: string): Promise<string> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.json')).sort();
  const parts = [
    '# Benchmark results',
    '',
    `Generated from ${files.length} files in \`bench/results/\` by \`npm run bench\`. Each figure was recorded by its script; see the script for how it was measured.`,
    '',
  ];
  for (const file of files) {
    let doc: unknown;
    try {
      doc = JSON.parse(await readFile(join(dir, file), 'utf8'));
    } catch (err) {
      parts.push(`## ${file}`, '', `(unreadable: ${(err as Error).message})`, '');
      continue;
    }
    parts.push(`## ${file.replace(/\.json$/, '')}`, '', '| figure | value |', '|---|---|');
    const { shown, older } = latestRuns(doc);
    for (const [k, v] of flattenFigures(shown)) parts.push(`| ${k.replace(/\|/g, '\\|')} | ${v.replace(/\|/g, '\\|')} |`);
    if (older > 0) parts.push(`| (older runs) | ${older} more in the file |`);
    parts.push('');
  }
  return parts.join('\n');
}

/**
 * A file of runs keyed by label (each an object with its `at` time), with more than LATEST_RUNS of
 * them: the latest LATEST_RUNS, and how many older ones the file keeps. Any other document whole.
 */
function latestRuns(doc: unknown): { shown: unknown; older: number } {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return { shown: doc, older: 0 };
  const entries = Object.entries(doc as Record<string, unknown>);
  const atOf = (v: unknown): number => (v !== null && typeof v === 'object' && typeof (v as { at?: unknown }).at === 'string' ? Date.parse((v as { at: string }).at) : Number.NaN);
  const runs = entries.filter(([, v]) => !Number.isNaN(atOf(v)));
  if (runs.length <= LATEST_RUNS) return { shown: doc, older: 0 };
  const keep = new Set(
    [...runs]
      .sort((a, b) => atOf(b[1]) - atOf(a[1]))
      .slice(0, LATEST_RUNS)
      .map(([k]) => k),
  );
  // Entries that are not runs stay; the runs keep the file's order.
  return { shown: Object.fromEntries(entries.filter(([k, v]) => Number.isNaN(atOf(v)) || keep.has(k))), older: runs.length - LATEST_RUNS };
}
