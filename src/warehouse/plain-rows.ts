import type { DuckDBConnection } from '@duckdb/node-api';

const MAX_PARAMS = 10_000;

/** Runs SQL and returns plain objects: BIGINT as number when safe (else string), timestamps as Date. */
export async function queryRows(connection: DuckDBConnection, sql: string, params: readonly unknown[] = []): Promise<Record<string, unknown>[]> {
  if (params.length > MAX_PARAMS) throw new RangeError(`At most ${MAX_PARAMS} parameters per query.`);
  const values = params.map(toParam);
  const reader = values.length > 0 ? await connection.runAndReadAll(sql, values as never) : await connection.runAndReadAll(sql);
  return reader.getRowObjectsJS().map((row) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(row)) out[k] = plain(v);
    return out;
  });
}

function toParam(v: unknown): unknown {
  if (v instanceof Date) return v.toISOString();
  if (v === undefined) return null;
  return v;
}

export function plain(v: unknown): unknown {
  if (typeof v === 'bigint') return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
  if (Array.isArray(v)) return v.map(plain);
  if (v !== null && typeof v === 'object' && !(v instanceof Date) && !(v instanceof Uint8Array)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = plain(x);
    return out;
  }
  return v;
}
