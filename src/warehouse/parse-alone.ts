import type { WarehouseQuery } from './types.js';

/** What DuckDB's parser says of a text: `json_serialize_sql`'s error fields (no error: it parsed). */
export interface ParseOutcome {
  error?: boolean;
  /** `parser` for a syntax error; `not implemented` for a statement other than a SELECT. */
  error_type?: string;
  error_message?: string;
  /** The character offset of a syntax error, as text. */
  position?: string;
}

/** Parses `text` without binding or running anything (json_serialize_sql serializes SELECTs only). */
export async function parseAlone(db: WarehouseQuery, text: string): Promise<ParseOutcome> {
  const [row] = await db.query('SELECT json_serialize_sql(?::VARCHAR) AS j', [text]);
  return JSON.parse(String(row?.j)) as ParseOutcome;
}
