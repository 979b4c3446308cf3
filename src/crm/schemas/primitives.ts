import { z } from 'zod';
import type { TimestampNormalizer } from '../timestamps.js';

/**
 * Tolerant field readers: the interface allows ids and counts as numbers or numeric strings, `[]`
 * where an object is expected, and missing optional keys; everything else is reported as an issue.
 *
 * Readers are plain functions composed into one zod schema per record (`record`), not one zod schema
 * per field: a contacts page has thousands of fields, and per-field schemas cost more CPU than the
 * HTTP request itself. zod stays the edge: it carries the issues (with paths) and the output types.
 */
export type Issue = (message: string, path?: ReadonlyArray<string | number>) => void;
export type Reader<T> = (v: unknown, issue: Issue) => T;

const INT = /^-?\d+$/;
const NUM = /^-?\d+(\.\d+)?$/;
const show = (v: unknown) => (JSON.stringify(v) ?? String(v)).slice(0, 40);

export const int: Reader<number> = (v, issue) => {
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string' && INT.test(v)) return Number(v);
  issue(`expected an integer or numeric string, got ${show(v)}`);
  return 0;
};

/** Missing, null or '' give null. */
export const intOrNull: Reader<number | null> = (v, issue) => {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string' && INT.test(v.trim())) return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  issue(`expected an integer, numeric string or null, got ${show(v)}`);
  return null;
};

export const numberOrNull: Reader<number | null> = (v, issue) => {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && NUM.test(v.trim())) return Number(v);
  issue(`expected a number, numeric string or null, got ${show(v)}`);
  return null;
};

/** Missing gives null; numbers and booleans become strings (some deployments send numeric text as numbers). */
export const textOrNull: Reader<string | null> = (v, issue) => {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  issue(`expected a string or null, got ${show(v)}`);
  return null;
};

export const text: Reader<string> = (v, issue) => {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  issue(`expected a string, got ${show(v)}`);
  return '';
};

/** "1"/"0", 1/0, true/false, "yes"/"no" to boolean; missing to null. */
export const flagOrNull: Reader<boolean | null> = (v) => {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') return ['1', 'true', 'yes', 'on'].includes(v.toLowerCase());
  return null;
};

/** An object, where PHP sends `[]` for an empty one; missing or null give `{}`. */
export const objectOrEmpty: Reader<Record<string, unknown>> = (v, issue) => {
  if (v === undefined || v === null) return {};
  if (Array.isArray(v)) {
    // A PHP list where a map was meant: key it by position rather than lose it.
    return v.length === 0 ? {} : Object.fromEntries(v.map((x, i) => [String(i), x]));
  }
  if (typeof v === 'object') return v as Record<string, unknown>;
  issue(`expected an object (or []), got ${typeof v}`);
  return {};
};

/** An object or `[]`, else null when missing. */
export const objectOrNull: Reader<Record<string, unknown> | null> = (v, issue) => (v === undefined || v === null ? null : objectOrEmpty(v, issue));

/** An array; missing or null give []; a PHP map `{0: x, 1: y}` gives its values. */
export const arrayOrEmpty: Reader<unknown[]> = (v, issue) => {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v;
  if (typeof v === 'object') return Object.values(v as object);
  issue(`expected an array, got ${typeof v}`);
  return [];
};

/** Counts issues raised while reading without a path (see `readAt`). */
let unplacedIssues = 0;
const countIssue: Issue = () => {
  unplacedIssues++;
};

/**
 * `read(v)` with issues placed under `key`. The value is read with a shared counting callback, and
 * only one that raised an issue is read again with a callback that adds `key` to the path: no
 * closure per element or field on the hot path (readers are pure, so the second read raises the
 * same issues).
 */
export function readAt<T>(read: Reader<T>, v: unknown, issue: Issue, key: string | number): T {
  const out = readOrFail(read, v);
  return out === UNREADABLE ? read(v, at(issue, key)) : out;
}

export const UNREADABLE: unique symbol = Symbol('unreadable');

/** `read(v)`, or UNREADABLE when it raised an issue (read again with a callback to learn which). */
export function readOrFail<T>(read: Reader<T>, v: unknown): T | typeof UNREADABLE {
  const before = unplacedIssues;
  const out = read(v, countIssue);
  return unplacedIssues === before ? out : UNREADABLE;
}

export function arrayOf<T>(item: Reader<T>): Reader<T[]> {
  return (v, issue) => {
    const arr = arrayOrEmpty(v, issue);
    const out = new Array<T>(arr.length);
    for (let i = 0; i < arr.length; i++) out[i] = readAt(item, arr[i], issue, i);
    return out;
  };
}

/** An issue callback that prefixes `key` to the path (made only when there is an issue to place). */
export function at(issue: Issue, key: string | number): Issue {
  return (m, p = []) => issue(m, [key, ...p]);
}

/** A timestamp in either shape, to ISO 8601 UTC (null when missing or unreadable; `raw` keeps it). */
export const timestamp =
  (ts: TimestampNormalizer): Reader<string | null> =>
  (v) =>
    ts(v);

type Output<F extends Record<string, Reader<unknown>>> = { [K in keyof F]: F[K] extends Reader<infer T> ? T : never };

/** A nested object reader over a field map (unknown keys are ignored here; `raw` keeps them). */
export function obj<F extends Record<string, Reader<unknown>>>(fields: F): Reader<Output<F>> {
  const keys = Object.keys(fields);
  return (v, issue) => {
    const out: Record<string, unknown> = {};
    if (!v || typeof v !== 'object' || Array.isArray(v)) {
      issue(`expected an object, got ${Array.isArray(v) ? 'an array' : v === null ? 'null' : typeof v}`);
      return out as Output<F>;
    }
    const input = v as Record<string, unknown>;
    for (const k of keys) out[k] = readAt(fields[k]!, input[k], issue, k);
    return out as Output<F>;
  };
}

/** A zod schema over a field map, with an optional final shaping step. */
export function record<F extends Record<string, Reader<unknown>>, O = Output<F>>(fields: F, finish?: (o: Output<F>, issue: Issue) => O): RecordSchema<O> {
  const read = obj(fields);
  return readerSchema((v, issue) => {
    const o = read(v, issue);
    return finish ? finish(o, issue) : (o as unknown as O);
  });
}

/** A zod schema that also exposes its reader, so a page of rows can be read without a zod pass per row. */
export type RecordSchema<T> = z.ZodType<T> & { readonly read: Reader<T> };

/** Wraps a reader as a zod schema: issues become zod issues with their paths. */
export function readerSchema<T>(read: Reader<T>): RecordSchema<T> {
  const schema = z.unknown().transform((v, ctx) => {
    let failed = false;
    const out = read(v, (message, path = []) => {
      failed = true;
      ctx.addIssue({ code: 'custom', message, path: [...path] });
    });
    return failed ? z.NEVER : out;
  }) as unknown as z.ZodType<T>;
  return Object.assign(schema, { read });
}

export const IntSchema = readerSchema(int);
export const NumberOrNullSchema = readerSchema(numberOrNull);
