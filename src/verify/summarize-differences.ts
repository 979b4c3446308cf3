import type { Difference, DifferenceKind } from './difference.js';

export interface DifferenceGroup {
  stream: string;
  kind: DifferenceKind;
  count: number;
  /** The first few, in the order found. */
  examples: Difference[];
}

export interface VerifySummary {
  ok: boolean;
  total: number;
  groups: DifferenceGroup[];
}

const EXAMPLES = 5;

/** Differences grouped by stream and kind, each with its count and the first few examples. */
export function summarizeDifferences(diffs: readonly Difference[], examples = EXAMPLES): VerifySummary {
  const groups = new Map<string, DifferenceGroup>();
  for (const d of diffs) {
    const key = `${d.stream}\u0000${d.kind}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { stream: d.stream, kind: d.kind, count: 0, examples: [] }));
    g.count++;
    if (g.examples.length < examples) g.examples.push(d);
  }
  return { ok: diffs.length === 0, total: diffs.length, groups: [...groups.values()] };
}

/** The summary for a terminal: one line per group (kind, count, example ids), then the examples. */
export function formatSummary(s: VerifySummary, streams: readonly string[]): string {
  if (s.ok) return `the warehouse matches the CRM (${streams.join(', ')})\n`;
  const lines = [`${s.total} difference(s) between the warehouse and the CRM:`];
  for (const g of s.groups) {
    const more = g.count > g.examples.length ? ', …' : '';
    lines.push(`  ${g.stream.padEnd(18)} ${g.kind.replaceAll('_', ' ').padEnd(24)} ${String(g.count).padStart(7)}  ids ${g.examples.map((e) => e.id).join(', ')}${more}`);
    for (const e of g.examples) lines.push(`      ${e.detail}`);
  }
  return `${lines.join('\n')}\n`;
}
