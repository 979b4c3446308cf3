export type RowFormat = 'table' | 'csv' | 'json' | 'ndjson';

/** Renders query rows for a terminal (aligned table), spreadsheets (RFC 4180 CSV) or programs (JSON). */
export function formatRows(columns: readonly string[], rows: readonly Record<string, unknown>[], format: RowFormat): string {
  switch (format) {
    case 'json':
      return `${JSON.stringify(rows.map(jsonSafe), null, 2)}\n`;
    case 'ndjson':
      return rows.map((r) => `${JSON.stringify(jsonSafe(r))}\n`).join('');
    case 'csv':
      return [columns, ...rows.map((r) => columns.map((c) => cell(r[c], '')))].map((line) => `${line.map(csvField).join(',')}\n`).join('');
    case 'table':
      return table(columns, rows);
  }
}

function table(columns: readonly string[], rows: readonly Record<string, unknown>[]): string {
  const MAX_WIDTH = 60;
  const body = rows.map((r) => columns.map((c) => clip(cell(r[c], 'NULL'), MAX_WIDTH)));
  const widths = columns.map((c, i) => Math.max(c.length, ...body.map((line) => line[i]!.length)));
  const line = (cells: readonly string[]) => `${cells.map((v, i) => v.padEnd(widths[i]!)).join(' | ')}\n`;
  return line(columns) + `${widths.map((w) => '-'.repeat(w)).join('-+-')}\n` + body.map(line).join('');
}

function cell(v: unknown, nullText: string): string {
  if (v === null || v === undefined) return nullText;
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object') return JSON.stringify(jsonSafe(v));
  return String(v);
}

function clip(s: string, max: number): string {
  const flat = s.replace(/[\r\n\t]+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function csvField(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

function jsonSafe(v: unknown): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (Array.isArray(v)) return v.map(jsonSafe);
  if (v !== null && typeof v === 'object' && !(v instanceof Date)) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, jsonSafe(x)]));
  }
  return v;
}
