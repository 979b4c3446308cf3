import type { z } from 'zod';
import { BadResponseError } from './errors.js';
import { readOrFail, type RecordSchema, UNREADABLE } from './schemas/primitives.js';
import type { JsonObject, Page } from './types.js';

/** Validates one record and attaches the record as sent (`raw`). Failures name the route and field. */
export function parseRecord<S extends z.ZodType>(schema: S, input: unknown, route: string): z.output<S> & { raw: JsonObject } {
  const r = schema.safeParse(input);
  if (!r.success) throw schemaError(route, r.error);
  return Object.assign(r.data as object, { raw: input as JsonObject }) as z.output<S> & { raw: JsonObject };
}

/** Validates a value that carries no `raw` (envelopes, report bodies). */
export function parseValue<S extends z.ZodType>(schema: S, input: unknown, route: string): z.output<S> {
  const r = schema.safeParse(input);
  if (!r.success) throw schemaError(route, r.error);
  return r.data;
}

export function schemaError(route: string, error: z.ZodError | string): BadResponseError {
  const detail =
    typeof error === 'string'
      ? error
      : error.issues
          .slice(0, 3)
          .map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`)
          .join('; ');
  return new BadResponseError(`The response to ${route} does not match the expected shape (${detail}); the CRM version may differ from the interface, report this with the raw response`, 'schema', {
    route,
  });
}

export function asObject(body: unknown, route: string): JsonObject {
  if (body && typeof body === 'object' && !Array.isArray(body)) return body as JsonObject;
  throw schemaError(route, `expected a JSON object, got ${Array.isArray(body) ? 'an array' : typeof body}`);
}

function int(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return Math.trunc(v);
  if (typeof v === 'string' && /^-?\d+$/.test(v.trim())) return Number(v);
  return undefined;
}

/**
 * Finds the rows and page metadata in any of the interface's listing envelopes:
 * - a paginator `{total, per_page, current_page, last_page, data}` (or a subset), under `key` or at the top;
 * - an array under `key` with metadata at the top level (funnels) or in `pagination` (deliveries, real lists);
 * - a plain array (option and picker endpoints, capped by a limit).
 */
export function readPageEnvelope(body: unknown, keys: readonly string[], requested: { page: number; perPage: number }, route: string): Page<unknown> {
  let container: unknown = body;
  let outer: JsonObject | undefined;
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    outer = body as JsonObject;
    const key = keys.find((k) => outer![k] !== undefined && outer![k] !== null);
    if (key) container = outer[key];
    else if (!Array.isArray(outer.data)) {
      // No rows key and no paginator: a listing with nothing in it is sometimes `{key: null}` or `[]`.
      if (keys.some((k) => k in outer!)) container = [];
      else throw schemaError(route, `expected ${keys.map((k) => `"${k}"`).join(' or ')} or a paginator`);
    }
  }
  let items: unknown[];
  let meta: JsonObject = {};
  if (Array.isArray(container)) {
    items = container;
    const pagination = outer?.pagination;
    meta = pagination && typeof pagination === 'object' && !Array.isArray(pagination) ? (pagination as JsonObject) : (outer ?? {});
  } else if (container && typeof container === 'object') {
    const c = container as JsonObject;
    const data = c.data;
    if (Array.isArray(data)) items = data;
    else if (data && typeof data === 'object')
      items = Object.values(data); // PHP keyed collection
    else if (data === undefined || data === null) items = [];
    else throw schemaError(route, 'paginator "data" is not an array');
    meta = c;
  } else {
    throw schemaError(route, `expected a listing, got ${typeof container}`);
  }
  const total = int(meta.total);
  const perPage = int(meta.per_page) ?? requested.perPage;
  const currentPage = int(meta.current_page) ?? requested.page;
  let lastPage = int(meta.last_page);
  if (lastPage === undefined && total !== undefined && perPage > 0) lastPage = Math.ceil(total / perPage);
  return { items, total, perPage, currentPage, lastPage };
}

/** Parses each row of a page envelope with `schema` (keeping `raw`). */
export function parsePage<S extends z.ZodType>(
  body: unknown,
  keys: readonly string[],
  schema: S,
  requested: { page: number; perPage: number },
  route: string,
): Page<z.output<S> & { raw: JsonObject }> {
  const env = readPageEnvelope(body, keys, requested, route);
  const read = (schema as unknown as Partial<RecordSchema<z.output<S>>>).read;
  const items = env.items.map((row, i) => {
    if (read) {
      // The schema's own reader, without a zod pass per row (a page can hold thousands of rows), and
      // without a callback per row: only a row that fails is read again to name its issues.
      const out = readOrFail(read, row);
      if (out === UNREADABLE) {
        const problems: string[] = [];
        read(row, (m, p = []) => problems.push(`data.${i}.${p.join('.')}: ${m}`));
        throw schemaError(route, problems.slice(0, 3).join('; '));
      }
      (out as { raw?: unknown }).raw = row;
      return out as z.output<S> & { raw: JsonObject };
    }
    const r = schema.safeParse(row);
    if (!r.success) {
      const e = r.error;
      for (const issue of e.issues) issue.path.unshift('data', i);
      throw schemaError(route, e);
    }
    return Object.assign(r.data as object, { raw: row as JsonObject }) as z.output<S> & { raw: JsonObject };
  });
  return { ...env, items };
}
