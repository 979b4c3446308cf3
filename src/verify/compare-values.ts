/**
 * Values from the CRM client and from the warehouse, brought to one comparable text form per
 * column type (null for "no value": null, undefined, '' and empty JSON alike). Timestamps
 * become ISO 8601 UTC: the client reads zone-less CRM times in the site time zone
 * (CRM_TIMEZONE) and the warehouse reads TIMESTAMPTZ as epoch milliseconds, so equal instants
 * compare equal and a difference prints as a readable time.
 */
export type ValueType = 'BIGINT' | 'VARCHAR' | 'BOOLEAN' | 'DOUBLE' | 'DATE' | 'TIMESTAMPTZ' | 'JSON' | 'VARCHAR[]' | 'BIGINT[]';

export function comparable(type: ValueType, v: unknown): string | null {
  if (v === null || v === undefined || v === '') return null;
  switch (type) {
    case 'BIGINT':
    case 'DOUBLE': {
      const n = typeof v === 'number' ? v : Number(v);
      return Number.isFinite(n) ? String(n) : String(v);
    }
    case 'BOOLEAN':
      return v === true || v === 1 || v === '1' || v === 'true' ? 'true' : 'false';
    case 'DATE':
      return String(v).slice(0, 10);
    case 'TIMESTAMPTZ':
      return isoTime(v);
    case 'JSON':
      return jsonText(typeof v === 'string' ? parseJson(v) : v);
    case 'VARCHAR[]':
      return Array.isArray(v) || typeof v !== 'string' ? canonicalJson(v) : canonicalJson(parseJson(v));
    case 'BIGINT[]':
      return idList(v);
    default:
      return String(v);
  }
}

/** ISO 8601 UTC of an epoch-ms number, a Date or a time string; the input as text if unreadable. */
export function isoTime(v: unknown): string {
  const ms = typeof v === 'number' ? v : v instanceof Date ? v.getTime() : Date.parse(String(v));
  return Number.isFinite(ms) ? new Date(ms).toISOString() : String(v);
}

/** Sorted distinct ids, comma-joined: from an array of ids, of `{id}` objects, or joined text. */
export function idList(v: unknown): string | null {
  const raw = Array.isArray(v) ? v.map((x) => (x !== null && typeof x === 'object' ? (x as { id?: unknown }).id : x)) : String(v).split(',');
  const ids = [...new Set(raw.map(Number).filter((n) => Number.isSafeInteger(n)))].sort((a, b) => a - b);
  return ids.length === 0 ? null : ids.join(',');
}

/** JSON with sorted keys, so that key order never shows as a difference; empty `[]`/`{}` are no value. */
export function jsonText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (Array.isArray(v) && v.length === 0) return null;
  if (typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0) return null;
  return canonicalJson(v);
}

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

function parseJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}
