import { createHash } from 'node:crypto';
import { canonicalJson } from './fingerprint.js';
import { normalizeColumns } from './map-source-row.js';
import { PushSourceError } from './push-errors.js';
import type { SourceRow } from './push-types.js';
import { FILE_FORMAT_NAMES, type SourceSpec } from './source-spec.js';
import { missingDuckDbExtension } from '../warehouse/duckdb-extensions.js';
import { pushQuerySyntaxError, readPushSourceJson, type PushSourceJson } from '../warehouse/push-source.js';
import type { WarehouseQuery } from '../warehouse/types.js';

export const DEFAULT_MAX_SOURCE_ROWS = 500_000;
/** One row's JSON text: contact fields are short, custom text at most 10,000 characters each. */
export const DEFAULT_MAX_SOURCE_ROW_BYTES = 256 * 1024;
/** All rows' JSON text: about 500 bytes a row at the most rows, held in memory while planning. */
export const DEFAULT_MAX_SOURCE_BYTES = 256 * 1024 * 1024;

export interface SourceLimits {
  maxRows: number;
  maxRowBytes: number;
  maxBytes: number;
}

const DEFAULT_LIMITS: SourceLimits = { maxRows: DEFAULT_MAX_SOURCE_ROWS, maxRowBytes: DEFAULT_MAX_SOURCE_ROW_BYTES, maxBytes: DEFAULT_MAX_SOURCE_BYTES };

/**
 * Reads the source rows (one JSON object each, see readPushSourceJson) and fingerprints them.
 * A source past any limit is refused whole, naming the limit: nothing of it is pushed.
 */
export async function readSourceRows(db: WarehouseQuery, spec: SourceSpec, limits: Partial<SourceLimits> = {}): Promise<SourceRow[]> {
  const { maxRows, maxRowBytes, maxBytes } = { ...DEFAULT_LIMITS, ...limits };
  if (spec.kind === 'query') {
    const syntax = await pushQuerySyntaxError(db, spec.text);
    if (syntax) throw new PushSourceError(`The push query does not parse: ${syntax}. Fix the query in --from (\`crmsync query\` runs it alone, as written).`);
  }
  let read: PushSourceJson;
  try {
    read = await readPushSourceJson(db, spec, { rows: maxRows + 1, rowBytes: maxRowBytes, totalBytes: maxBytes });
  } catch (err) {
    const source = spec.kind === 'query' ? 'query' : `"${spec.sourceId}"`;
    const extension = missingDuckDbExtension(err);
    if (extension) {
      // crmsync's DuckDB downloads no extensions (NO_EXTENSION_INSTALLS): name what it reads instead.
      throw new PushSourceError(
        `Cannot read the push source ${source}: DuckDB would need its ${extension} extension for it, and crmsync installs none. Push reads tables and views, queries over them, and ${FILE_FORMAT_NAMES} files: save the data as one of those (or load it into a table) and pass that.`,
        { cause: err },
      );
    }
    const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new PushSourceError(`Cannot read the push source ${source}: ${reason}. Check the table, view, file or query with \`crmsync query\`.`, { cause: err });
  }
  const what = spec.kind === 'query' ? 'The push query' : `The push source "${spec.sourceId}"`;
  const rows = read.rows;
  if (rows.length === 0) throw new PushSourceError(`${what} has no rows: nothing to push. Check it with \`crmsync query\` (a filter that matches nothing, or an empty file?).`);
  if (rows.length > maxRows) {
    throw new PushSourceError(`The push source has more than ${maxRows} rows; push it in parts (filter the query) or raise the limit.`);
  }
  const wide = rows.findIndex((r) => r.bytes > maxRowBytes);
  if (wide >= 0) {
    throw new PushSourceError(
      `${what} has a row of ${rows[wide]!.bytes} bytes (row ${wide + 1}; limit ${maxRowBytes} a row); a contact needs far less: select only the columns to push, and check that column for a stray file or blob.`,
    );
  }
  if (read.totalBytes > maxBytes) {
    throw new PushSourceError(`${what} is ${read.totalBytes} bytes as rows (limit ${maxBytes}); push it in parts (filter the query) or select fewer columns.`);
  }
  const json = rows.map((r) => r.json!);
  const columns = Object.keys(normalizeColumns(JSON.parse(json[0]!) as Record<string, unknown>));
  if (!columns.includes('email')) {
    throw new PushSourceError(`${what} has no \`email\` column (its columns: ${columns.join(', ').slice(0, 300)}); name the address column email, for example \`SELECT address AS email, ...\`.`);
  }
  return json.map((r, i) => {
    const data = normalizeColumns(JSON.parse(r) as Record<string, unknown>);
    // Key order follows the column order; sorting makes a reordered view the same source row.
    const sourceFingerprint = createHash('sha256').update(canonicalJson(data)).digest('hex');
    return { rowNumber: i + 1, data, sourceFingerprint };
  });
}
