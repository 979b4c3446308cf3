/**
 * The one reading of a delivery body, shared by the receiver (before it acknowledges) and the
 * applier (when it reads the spool back), so that whatever the receiver accepts the applier can
 * apply:
 * - one leading UTF-8 byte-order mark is ignored (RFC 8259 lets a parser ignore it); the spool
 *   keeps the raw bytes, since the signature covers them;
 * - the rest must be valid UTF-8, and no `\uXXXX` escape may leave a lone surrogate (DuckDB's JSON
 *   type and most consumers refuse one);
 * - arrays and objects nest at most `maxDepth` deep (serializing a deeper value overflows the stack).
 * JSON syntax itself is left to JSON.parse.
 */
export const MAX_JSON_DEPTH = 64;

export type BodyProblem = 'invalid_utf8' | 'json_too_deep';

export type DecodedBody = { ok: true; text: string } | { ok: false; reason: BodyProblem; message: string };

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

const hex = (b: number): number => (b >= 0x30 && b <= 0x39 ? b - 0x30 : b >= 0x61 && b <= 0x66 ? b - 0x57 : b >= 0x41 && b <= 0x46 ? b - 0x37 : -1);

/** The code unit of the `\uXXXX` escape whose backslash is at `i`, or -1 when it is not one. */
function escapedUnit(b: Uint8Array, i: number): number {
  if (i + 5 >= b.length || b[i] !== 0x5c || b[i + 1] !== 0x75) return -1;
  const a = hex(b[i + 2]!);
  const c = hex(b[i + 3]!);
  const d = hex(b[i + 4]!);
  const e = hex(b[i + 5]!);
  return a < 0 || c < 0 || d < 0 || e < 0 ? -1 : (a << 12) | (c << 8) | (d << 4) | e;
}

export function hasByteOrderMark(body: Uint8Array): boolean {
  return body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf;
}

/** At most `limit + 1` occurrences of `c` in `text` (string searches: a few per body). */
function countUpTo(text: string, c: string, limit: number): number {
  let n = 0;
  for (let i = text.indexOf(c); i !== -1 && n <= limit; i = text.indexOf(c, i + 1)) n++;
  return n;
}

export function decodeDeliveryBody(body: Uint8Array, maxDepth = MAX_JSON_DEPTH): DecodedBody {
  const start = hasByteOrderMark(body) ? 3 : 0;
  let text: string;
  try {
    text = utf8.decode(start ? body.subarray(start) : body);
  } catch {
    return { ok: false, reason: 'invalid_utf8', message: 'The body is not valid UTF-8.' };
  }
  // The usual delivery has a handful of brackets and no \u escape: no character-by-character scan
  // (every bracket, even one inside a string, bounds the depth from above).
  const braces = countUpTo(text, '{', maxDepth);
  if (braces + countUpTo(text, '[', maxDepth - braces) > maxDepth || text.includes('\\u')) {
    const problem = scan(body, start, maxDepth);
    if (problem) return problem;
  }
  return { ok: true, text };
}

/** The byte-by-byte check: nesting depth outside strings, and surrogate escapes inside them. */
function scan(body: Uint8Array, start: number, maxDepth: number): DecodedBody | null {
  let depth = 0;
  let inString = false;
  for (let i = start; i < body.length; i++) {
    const b = body[i]!;
    if (inString) {
      if (b === 0x22) inString = false;
      else if (b === 0x5c) {
        const unit = escapedUnit(body, i);
        if (unit < 0) {
          i++; // a two-character escape (or a malformed one, which JSON.parse reports)
        } else if (unit >= 0xd800 && unit <= 0xdbff) {
          const low = escapedUnit(body, i + 6);
          if (low < 0xdc00 || low > 0xdfff)
            return { ok: false, reason: 'invalid_utf8', message: `The body has a lone surrogate escape (\\u${unit.toString(16)}) with no low surrogate after it; send well-formed Unicode.` };
          i += 11;
        } else if (unit >= 0xdc00 && unit <= 0xdfff) {
          return { ok: false, reason: 'invalid_utf8', message: `The body has a lone low surrogate escape (\\u${unit.toString(16)}); send well-formed Unicode.` };
        } else i += 5;
      }
    } else if (b === 0x22) inString = true;
    else if (b === 0x7b || b === 0x5b) {
      if (++depth > maxDepth) return { ok: false, reason: 'json_too_deep', message: `The body nests arrays and objects more than ${maxDepth} levels deep.` };
    } else if (b === 0x7d || b === 0x5d) depth--;
  }
  return null;
}
