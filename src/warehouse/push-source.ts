import { parseAlone } from './parse-alone.js';
import { quoteIdent, quoteLiteral } from './quote.js';
import type { WarehouseQuery } from './types.js';

/** Where push rows come from: a table or view, a file DuckDB reads itself, or a read-only query. */
export type PushSourceTarget = { kind: 'relation'; name: readonly string[] } | { kind: 'file'; format: 'csv' | 'parquet' | 'json'; path: string } | { kind: 'query'; text: string };

const FILE_READERS = { csv: 'read_csv', parquet: 'read_parquet', json: 'read_json' } as const;

/**
 * The SELECT that yields the source rows. Names are quoted part by part, a file path is a quoted
 * literal, and a query is wrapped as a subquery, so only statements that yield rows can run. The
 * query's closing bracket is on a line of its own: a `-- comment` ending the query would
 * otherwise comment it out.
 */
export function pushSourceSelect(target: PushSourceTarget): string {
  switch (target.kind) {
    case 'relation':
      return `SELECT * FROM ${target.name.map(quoteIdent).join('.')}`;
    case 'file':
      return `SELECT * FROM ${FILE_READERS[target.format]}(${quoteLiteral(target.path)})`;
    case 'query':
      return `SELECT * FROM (\n${target.text}\n) AS _push_source`;
  }
}

/** What the push may read of a source: rows, and bytes of their JSON text, per row and in all. */
export interface PushSourceLimits {
  rows: number;
  rowBytes: number;
  totalBytes: number;
}

/**
 * The source as read: each row's JSON text, or null for a row past `rowBytes` (its `bytes` tell
 * how long it was), and `totalBytes` of all of them, read or not.
 */
export interface PushSourceJson {
  rows: { json: string | null; bytes: number }[];
  totalBytes: number;
}

/**
 * At most `limits.rows` source rows, each as DuckDB's own JSON text of the row: dates as
 * `YYYY-MM-DD`, lists as arrays and JSON columns as objects, whatever the driver's conversions.
 * The source is read once, into DuckDB (which spills past its memory limit); a row longer than
 * `rowBytes`, and every row when they add up to more than `totalBytes`, come back as their
 * length only, so no more than the limits ever reaches JavaScript.
 */
export async function readPushSourceJson(db: WarehouseQuery, target: PushSourceTarget, limits: PushSourceLimits): Promise<PushSourceJson> {
  for (const [name, n] of Object.entries(limits)) if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`${name} must be a positive integer, got ${n}`);
  const rows = await db.query(
    // Numbered as read (a streaming row_number keeps the source's order) and put back in that
    // order at the end: the whole-source sum may reorder rows on their way.
    `SELECT CASE WHEN n <= ? AND total <= ? THEN j END AS j, n, total
     FROM (SELECT j, strlen(j)::BIGINT AS n, (sum(strlen(j)) OVER ())::BIGINT AS total, rn
           FROM (SELECT to_json(_s)::VARCHAR AS j, row_number() OVER () AS rn FROM (${pushSourceSelect(target)}) AS _s LIMIT ?))
     ORDER BY rn`,
    [limits.rowBytes, limits.totalBytes, limits.rows],
  );
  return { rows: rows.map((r) => ({ json: r.j === null ? null : String(r.j), bytes: Number(r.n) })), totalBytes: rows.length === 0 ? 0 : Number(rows[0]!.total) };
}

/**
 * DuckDB's syntax error in a push query, parsed alone (json_serialize_sql parses without binding
 * or running anything), with where in the query it is: "syntax error at or near ")" (line 1,
 * column 32: ...)". Undefined when the query parses. Parsed inside pushSourceSelect's wrapper,
 * a mistake shows as one near the wrapper's own `) AS _push_source`, or, with a stray bracket
 * (`SELECT 1) AS a, (SELECT 2`), as no mistake at all.
 */
export async function pushQuerySyntaxError(db: WarehouseQuery, text: string): Promise<string | undefined> {
  const parsed = await parseAlone(db, text);
  // Other errors (a statement other than a SELECT) are left to the read, which refuses them.
  if (!parsed.error || parsed.error_type !== 'parser') return undefined;
  const message = parsed.error_message ?? 'syntax error';
  const position = Number(parsed.position);
  return Number.isSafeInteger(position) && position >= 0 ? `${message} (${locate(text, position)})` : message;
}

/** "line L, column C: <the line up to there>" for a character offset into `text`. */
function locate(text: string, position: number): string {
  const before = Array.from(text).slice(0, position).join('');
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const column = before.length - lineStart + 1;
  const upTo = text.slice(lineStart, before.length + 1).trimStart();
  return `line ${line}, column ${column}: ${upTo.length > 60 ? `...${upTo.slice(-57)}` : upTo}`;
}
