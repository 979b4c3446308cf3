import { DuckDBTypeId, JSDuckDBValueConverter, StatementType, type DuckDBConnection, type DuckDBPreparedStatement, type DuckDBValueConverter, type JS } from '@duckdb/node-api';
import { missingDuckDbExtension } from './duckdb-extensions.js';
import { WarehouseInputError, WarehouseQueryError, WarehouseQueryNotReadOnlyError } from './errors.js';
import { parseAlone } from './parse-alone.js';
import { plain } from './plain-rows.js';
import { queryOver } from './sql-run.js';

export const MAX_SQL_BYTES = 1 << 20;

export interface QueryResult {
  columns: string[];
  rows: Record<string, unknown>[];
  /** True when more than maxRows rows were available and the rest were not read. */
  truncated: boolean;
}

/**
 * Settings that keep an analyst's session from writing outside the statement check: no
 * extension downloads (they write under ~/.duckdb), and no SET afterwards to undo it.
 */
const LOCKDOWN = ['SET autoinstall_known_extensions = false', 'SET lock_configuration = true'];

/**
 * Streams at most `maxRows` rows of an analyst's query (the rest is never materialized in JS).
 * Read-only for real: DuckDB's parser must see only SELECTs (DESCRIBE, SHOW, SUMMARIZE, FROM-first
 * and VALUES included) before anything is bound, because binding alone has effects (`EXPORT
 * DATABASE` creates its folder when prepared), so `COPY ... TO`, `EXPORT`, `ATTACH`, `INSTALL`,
 * `SET` and `PRAGMA` never reach a file. Reading files (`read_parquet`, `read_csv`) still works.
 * The connection is locked down for good: use a fresh one for the project's own SQL afterwards.
 */
export async function runQuery(connection: DuckDBConnection, sql: string, maxRows: number): Promise<QueryResult> {
  if (Buffer.byteLength(sql) > MAX_SQL_BYTES) throw new WarehouseInputError(`The query is longer than ${MAX_SQL_BYTES} bytes; put large inputs in a table instead.`);
  await requireOnlySelects(connection, sql);
  await lockDown(connection);
  let reader;
  try {
    const extracted = await connection.extractStatements(sql);
    if (extracted.count === 0) throw new WarehouseInputError('The query is empty; pass a SELECT, for example "SHOW TABLES".');
    const statements: DuckDBPreparedStatement[] = [];
    for (let i = 0; i < extracted.count; i++) statements.push(await extracted.prepare(i));
    // The parser said SELECT; the binder must agree before anything runs.
    const other = statements.find((s) => s.statementType !== StatementType.SELECT);
    if (other) throw new WarehouseQueryNotReadOnlyError(firstWords(sql));
    // Earlier statements are reads too; the last one's rows are shown.
    for (const s of statements.slice(0, -1)) await s.run();
    reader = await statements[statements.length - 1]!.streamAndReadUntil(maxRows + 1);
  } catch (err) {
    if (err instanceof WarehouseInputError || err instanceof WarehouseQueryNotReadOnlyError) throw err;
    const extension = missingDuckDbExtension(err);
    // DuckDB's own advice, INSTALL, is a statement this command refuses.
    if (extension)
      throw new WarehouseQueryError(
        `DuckDB would need its ${extension} extension, and crmsync installs none; read the warehouse's tables, or CSV, Parquet or JSON files (read_csv, read_parquet, read_json)`,
        { cause: err },
      );
    throw new WarehouseQueryError(err instanceof Error ? err.message : String(err), { cause: err });
  }
  const columns = reader.columnNames();
  const all = reader.convertRowObjects(analystValue);
  const rows = all.slice(0, maxRows).map((r) => plain(r) as Record<string, unknown>);
  return { columns, rows, truncated: all.length > maxRows || !reader.done };
}

/** Types whose JavaScript form misleads an analyst: a DATE as a midnight instant, a TIME as microseconds. */
const AS_DUCKDB_TEXT = new Set<DuckDBTypeId>([DuckDBTypeId.DATE, DuckDBTypeId.TIME, DuckDBTypeId.TIME_NS, DuckDBTypeId.TIME_TZ, DuckDBTypeId.INTERVAL]);

/**
 * The node client's JavaScript values, except dates, times and intervals, which keep DuckDB's own
 * text (`2020-01-02`, `10:11:12`, `3 days`), also inside lists and structs.
 */
const analystValue: DuckDBValueConverter<JS> = (value, type) => {
  if (value !== null && AS_DUCKDB_TEXT.has(type.typeId)) return String(value);
  return JSDuckDBValueConverter(value, type, analystValue);
};

/** Applies LOCKDOWN once per connection (a locked configuration refuses any later SET). */
async function lockDown(connection: DuckDBConnection): Promise<void> {
  const locked = await connection.runAndReadAll(`SELECT current_setting('lock_configuration') AS v`);
  if (locked.getRowObjectsJS()[0]?.v === true) return;
  for (const setting of LOCKDOWN) await connection.run(setting);
}

/** Parses without binding and refuses anything but SELECTs. */
async function requireOnlySelects(connection: DuckDBConnection, sql: string): Promise<void> {
  const j = await parseAlone(queryOver(connection), sql);
  if (!j.error) return;
  if (j.error_type === 'not implemented') throw new WarehouseQueryNotReadOnlyError(firstWords(sql));
  throw new WarehouseQueryError(j.error_message ?? 'the query does not parse');
}

function firstWords(sql: string): string {
  const text = sql.trim().replace(/\s+/g, ' ');
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
