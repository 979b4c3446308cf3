import { parseSuccessBody } from './classify-response.js';
import { readPageEnvelope, schemaError } from './parse.js';
import type { TimestampNormalizer } from './timestamps.js';
import type { RawPage, RowRef } from './types.js';

/** What a scan reads of each row besides its id. */
export interface ScanFields {
  /** Read each row's `updated_at` too, normalized as the parsed path does (the updated-first scan orders by it). */
  updatedAt?: TimestampNormalizer;
}

/** Nesting deeper than this is not a contact listing (and would cost the scan its stack). */
const MAX_DEPTH = 256;
const INT = /^-?[0-9]+$/;

/** Thrown inside the scan; the caller turns it into the client's own error for the body. */
class NotAListing extends Error {}

/**
 * Reads a `GET /subscribers` body without parsing it into objects: a single pass that checks the
 * JSON's structure, skips string contents with `indexOf` and keeps only the paginator's numbers
 * and each row's `id`. The rows themselves are left to DuckDB (`loadContactPages`), which parses
 * them once, so the page is not parsed, checked and serialized again in JavaScript. Where each
 * row starts and ends (`rowSpans`) is kept, so DuckDB gets the rows without parsing the body to
 * find them.
 *
 * Ids are read as the client's schema reads them (an integer or numeric string); a row whose id is
 * anything else has `id: undefined` here and is recorded as a reject by the load. A listing in
 * another of the envelopes the client accepts (a PHP keyed `data` object, a bare array) is parsed
 * with `JSON.parse` instead: rare, and read exactly as `readPageEnvelope` reads it.
 */
export function scanContactPage(body: string, requested: { page: number; perPage: number }, route: string, fields: ScanFields = {}): RawPage {
  let fast: RawPage | undefined;
  try {
    fast = scanListing(body, requested, fields);
  } catch {
    // Not JSON in the common shape (NotAListing, or a string escape JSON.parse refused): the full
    // parse below gives the client's own error for it.
  }
  if (fast) return fast;
  // Not JSON: the same errors as a parsed fetch (an HTML page, or truncated or invalid JSON).
  const parsed = parseSuccessBody(body, { method: 'GET', path: route.replace(/^GET /, ''), statusCode: 200, contentType: undefined });
  const env = readPageEnvelope(parsed, ['subscribers'], requested, route);
  const items = env.items.map((row): RowRef => {
    if (!row || typeof row !== 'object' || Array.isArray(row)) throw schemaError(route, 'expected each listed contact to be an object');
    const r = row as { id?: unknown; updated_at?: unknown };
    return fields.updatedAt ? { id: idOf(r.id), updated_at: fields.updatedAt(r.updated_at) } : { id: idOf(r.id) };
  });
  return { ...env, items, body };
}

/** An id as the client's schema reads it: an integer or a numeric string (no spaces). */
function idOf(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : undefined;
  if (typeof v === 'string' && INT.test(v)) {
    const n = Number(v);
    return Number.isSafeInteger(n) ? n : undefined;
  }
  return undefined;
}

/**
 * The paginator's numbers as the client reads them (`int` in parse.ts): a number, truncated, or
 * a numeric string. Here both arrive as text: a JSON number's literal or a string's contents.
 */
function metaInt(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (/^-?\d+$/.test(v.trim())) return Number(v);
  const x = Number(v);
  return /^-?[0-9]/.test(v) && Number.isFinite(x) ? Math.trunc(x) : undefined;
}

/**
 * The common envelope `{"subscribers": {..., "data": [{...}, ...]}}`; undefined for another
 * envelope, NotAListing for a body that is not JSON.
 */
function scanListing(s: string, requested: { page: number; perPage: number }, fields: ScanFields): RawPage | undefined {
  let i = 0;
  const n = s.length;

  const ws = (): void => {
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c !== 32 && c !== 10 && c !== 13 && c !== 9) return;
    }
  };
  const expect = (code: number): void => {
    if (s.charCodeAt(i) !== code) throw new NotAListing();
    i++;
  };
  /** At an opening quote: moves past the closing one and returns where the contents start. */
  const str = (): number => {
    let end = s.indexOf('"', i + 1);
    for (;;) {
      if (end < 0) throw new NotAListing();
      let slashes = 0;
      while (s.charCodeAt(end - 1 - slashes) === 92) slashes++;
      if (slashes % 2 === 0) break;
      end = s.indexOf('"', end + 1);
    }
    const start = i + 1;
    i = end + 1;
    return start;
  };
  /** The contents of the string just passed (`start` from `str`). */
  const text = (start: number): string => {
    const t = s.slice(start, i - 1);
    return t.includes('\\') ? (JSON.parse(`"${t}"`) as string) : t;
  };
  const digits = (): number => {
    const from = i;
    for (let c = s.charCodeAt(i); c >= 48 && c <= 57; c = s.charCodeAt(++i));
    return i - from;
  };
  /** Moves past a number, true, false or null (checked as JSON writes them), without copying it. */
  const literal = (): void => {
    const c = s.charCodeAt(i);
    if (c === 116 || c === 102 || c === 110) {
      const word = c === 116 ? 'true' : c === 102 ? 'false' : 'null';
      if (!s.startsWith(word, i)) throw new NotAListing();
      i += word.length;
      return;
    }
    if (c === 45) i++;
    if (s.charCodeAt(i) === 48) i++;
    else if (digits() === 0) throw new NotAListing();
    if (s.charCodeAt(i) === 46) {
      i++;
      if (digits() === 0) throw new NotAListing();
    }
    const e = s.charCodeAt(i);
    if (e === 101 || e === 69) {
      i++;
      const sign = s.charCodeAt(i);
      if (sign === 43 || sign === 45) i++;
      if (digits() === 0) throw new NotAListing();
    }
  };
  /** A scalar as text (a string's contents or a literal's), or undefined for an object or array (skipped). */
  const scalar = (depth: number): string | undefined => {
    const c = s.charCodeAt(i);
    if (c === 34) return text(str());
    if (c === 123 || c === 91) {
      skip(depth);
      return undefined;
    }
    const from = i;
    literal();
    return s.slice(from, i);
  };
  /** Skips one value, checking its structure, without copying any of it. */
  const skip = (depth: number): void => {
    const c = s.charCodeAt(i);
    if (c === 34) {
      str();
      return;
    }
    if (c !== 123 && c !== 91) {
      literal();
      return;
    }
    if (depth >= MAX_DEPTH) throw new NotAListing();
    const close = c === 123 ? 125 : 93;
    i++;
    ws();
    if (s.charCodeAt(i) === close) {
      i++;
      return;
    }
    for (;;) {
      if (c === 123) {
        if (s.charCodeAt(i) !== 34) throw new NotAListing();
        str();
        ws();
        expect(58);
        ws();
      }
      skip(depth + 1);
      ws();
      if (s.charCodeAt(i) !== 44) break;
      i++;
      ws();
    }
    expect(close);
  };
  /**
   * Walks an object, handing each key (its contents from `start` to `end`) to `onKey`, which must
   * consume the value.
   */
  const object = (onKey: (start: number, end: number) => void): void => {
    expect(123);
    ws();
    if (s.charCodeAt(i) === 125) {
      i++;
      return;
    }
    for (;;) {
      if (s.charCodeAt(i) !== 34) throw new NotAListing();
      const start = str();
      const end = i - 1;
      ws();
      expect(58);
      ws();
      onKey(start, end);
      ws();
      if (s.charCodeAt(i) !== 44) break;
      i++;
      ws();
    }
    expect(125);
  };
  const key = (start: number, end: number): string => s.slice(start, end);

  const readUpdated = fields.updatedAt;
  const meta: Record<string, string | undefined> = {};
  let items: RowRef[] | undefined;
  const spans: number[] = [];
  let other = false;

  const rows = (): RowRef[] => {
    const out: RowRef[] = [];
    expect(91);
    ws();
    if (s.charCodeAt(i) === 93) {
      i++;
      return out;
    }
    for (;;) {
      if (s.charCodeAt(i) !== 123) {
        // A row that is not an object: not the common shape (the parse names the problem).
        other = true;
        skip(3);
      } else {
        let id: number | undefined;
        let updated: string | undefined;
        spans.push(i);
        object((start, end) => {
          // Only a row's own `id` (and `updated_at` when asked) is read; keys are compared in place, not copied.
          if (end - start === 2 && s.charCodeAt(start) === 105 && s.charCodeAt(start + 1) === 100) {
            const v = scalar(4);
            id = v === undefined ? undefined : idOf(v);
          } else if (readUpdated && end - start === 10 && s.startsWith('updated_at', start)) {
            // A JSON string's contents; anything else (null, a number) is no timestamp, as in the parsed path.
            if (s.charCodeAt(i) === 34) updated = scalar(4);
            else skip(4);
          } else skip(4);
        });
        spans.push(i);
        out.push(readUpdated ? { id, updated_at: readUpdated(updated) } : { id });
      }
      ws();
      if (s.charCodeAt(i) !== 44) break;
      i++;
      ws();
    }
    expect(93);
    return out;
  };

  ws();
  if (s.charCodeAt(i) !== 123) return undefined;
  object((ks, ke) => {
    const k = key(ks, ke);
    if (k !== 'subscribers' || s.charCodeAt(i) !== 123) {
      if (k === 'subscribers' || k === 'data') other = true;
      skip(1);
      return;
    }
    object((ps, pe) => {
      const p = key(ps, pe);
      if (p === 'data' && s.charCodeAt(i) === 91) items = rows();
      else if (p === 'data') {
        other = true;
        skip(2);
      } else if (p === 'total' || p === 'per_page' || p === 'current_page' || p === 'last_page') meta[p] = scalar(2);
      else skip(2);
    });
  });
  ws();
  if (i !== n) throw new NotAListing();
  if (other || !items) return undefined;

  const total = metaInt(meta.total);
  const perPage = metaInt(meta.per_page) ?? requested.perPage;
  const currentPage = metaInt(meta.current_page) ?? requested.page;
  let lastPage = metaInt(meta.last_page);
  if (lastPage === undefined && total !== undefined && perPage > 0) lastPage = Math.ceil(total / perPage);
  return { items, total, perPage, currentPage, lastPage, body: s, rowSpans: spans };
}
