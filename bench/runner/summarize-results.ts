import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Flattens a result document to dotted keys with scalar values; arrays are summarized by length. */
export function flattenFigures(value: unknown, prefix = '', out: [string, string][] = []): [string, string][] {
  if (value === null || value === undefined) return out;
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v !== 'object' || v === null)) out.push([prefix, `${value.length} values`]);
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
    for (const [k, v] of flattenFigures(doc)) parts.push(`| ${k.replace(/\|/g, '\\|')} | ${v.replace(/\|/g, '\\|')} |`);
    parts.push('');
  }
  return parts.join('\n');
}
