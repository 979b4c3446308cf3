import { z } from 'zod';
import type { TimestampNormalizer } from '../timestamps.js';

/**
 * Tolerant building blocks: the interface allows ids and counts as numbers or numeric strings,
 * `[]` where an object is expected, and missing optional keys. Everything else is validated.
 */
const INT = /^-?\d+$/;
const NUM = /^-?\d+(\.\d+)?$/;

/** An id or count: integer or numeric string, to number. */
export const IntSchema = z.unknown().optional().transform((v, ctx) => {
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string' && INT.test(v.trim())) return Number(v);
  ctx.addIssue({ code: 'custom', message: `expected an integer or numeric string, got ${JSON.stringify(v)}` });
  return z.NEVER;
});

/** Optional integer: missing, null or '' give null. */
export const IntOrNullSchema = z.unknown().optional().transform((v, ctx) => {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string' && INT.test(v.trim())) return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  ctx.addIssue({ code: 'custom', message: `expected an integer, numeric string or null, got ${JSON.stringify(v)}` });
  return z.NEVER;
});

/** Optional decimal: missing, null or '' give null. */
export const NumberOrNullSchema = z.unknown().optional().transform((v, ctx) => {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && NUM.test(v.trim())) return Number(v);
  ctx.addIssue({ code: 'custom', message: `expected a number, numeric string or null, got ${JSON.stringify(v)}` });
  return z.NEVER;
});

/** Optional text: missing gives null; numbers become strings (some deployments send numeric text as numbers). */
export const TextOrNullSchema = z.unknown().optional().transform((v, ctx) => {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  ctx.addIssue({ code: 'custom', message: `expected a string or null, got ${JSON.stringify(v)?.slice(0, 40)}` });
  return z.NEVER;
});

/** Required text (numbers accepted as text). */
export const TextSchema = z.union([z.string(), z.number().transform(String)]);

/** "1"/"0", 1/0, true/false, "yes"/"no" to boolean; missing to null. */
export const FlagOrNullSchema = z.unknown().optional().transform((v) => {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') return ['1', 'true', 'yes', 'on'].includes(v.toLowerCase());
  return null;
});

/** An object, where PHP sends `[]` for an empty one; missing or null give `{}`. */
export const ObjectOrEmptySchema = z.unknown().optional().transform((v, ctx): Record<string, unknown> => {
  if (v === undefined || v === null) return {};
  if (Array.isArray(v)) {
    if (v.length === 0) return {};
    // A PHP list where a map was meant: key it by position rather than lose it.
    return Object.fromEntries(v.map((x, i) => [String(i), x]));
  }
  if (typeof v === 'object') return v as Record<string, unknown>;
  ctx.addIssue({ code: 'custom', message: `expected an object (or []), got ${typeof v}` });
  return z.NEVER;
});

/** An array; missing or null give []; a PHP map `{0: x, 1: y}` gives its values. */
export const ArrayOrEmptySchema = z.unknown().optional().transform((v, ctx): unknown[] => {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v;
  if (typeof v === 'object') return Object.values(v as object);
  ctx.addIssue({ code: 'custom', message: `expected an array, got ${typeof v}` });
  return z.NEVER;
});

export const idArray = z.unknown().optional().transform((v, ctx): number[] => {
  if (v === undefined || v === null) return [];
  const arr = Array.isArray(v) ? v : typeof v === 'object' ? Object.values(v as object) : [v];
  const out: number[] = [];
  for (const x of arr) {
    if (typeof x === 'number' && Number.isInteger(x)) out.push(x);
    else if (typeof x === 'string' && INT.test(x)) out.push(Number(x));
    else {
      ctx.addIssue({ code: 'custom', message: `expected an array of ids, got ${JSON.stringify(x)}` });
      return z.NEVER;
    }
  }
  return out;
});

/** A timestamp in either shape, to ISO 8601 UTC (or null when missing or unreadable; `raw` keeps it). */
export function timestampSchema(ts: TimestampNormalizer) {
  return z.unknown().optional().transform((v) => ts(v));
}
