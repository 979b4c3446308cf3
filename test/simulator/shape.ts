import type { Json } from './helpers.js';

function kind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/**
 * Differences between the shape of `expected` (a captured fixture) and `actual`: every key of an
 * expected object must exist in the actual one with the same JSON type (null on either side is
 * taken as a nullable column); arrays compare their first elements. Returns readable paths.
 */
export function shapeDiff(expected: Json, actual: Json, path = '$', ignore: ReadonlySet<string> = new Set()): string[] {
  const ek = kind(expected);
  const ak = kind(actual);
  if (ek === 'null' || ak === 'null') return [];
  if (ek !== ak) return [`${path}: expected ${ek}, got ${ak}`];
  if (ek === 'array') {
    if (expected.length === 0 || actual.length === 0) return [];
    return shapeDiff(expected[0], actual[0], `${path}[0]`, ignore);
  }
  if (ek !== 'object') return [];
  const out: string[] = [];
  for (const key of Object.keys(expected)) {
    if (ignore.has(key)) continue;
    if (!(key in actual)) {
      out.push(`${path}.${key}: missing`);
      continue;
    }
    out.push(...shapeDiff(expected[key], actual[key], `${path}.${key}`, ignore));
  }
  return out;
}
