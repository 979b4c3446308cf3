import { createHash } from 'node:crypto';
import { canonicalJson } from './fingerprint.js';
import { normalizeColumns } from './map-source-row.js';
import { PushSourceError } from './push-errors.js';
import type { SourceRow } from './push-types.js';
import type { SourceSpec } from './source-spec.js';
import { readPushSourceJson } from '../warehouse/push-source.js';
import type { WarehouseQuery } from '../warehouse/types.js';

export const DEFAULT_MAX_SOURCE_ROWS = 500_000;

/** Reads the source rows (one JSON object each, see readPushSourceJson) and fingerprints them. */
export async function readSourceRows(db: WarehouseQuery, spec: SourceSpec, maxRows = DEFAULT_MAX_SOURCE_ROWS): Promise<SourceRow[]> {
  let rows: string[];
  try {
    rows = await readPushSourceJson(db, spec, maxRows + 1);
  } catch (err) {
    const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new PushSourceError(`Cannot read the push source ${spec.kind === 'query' ? 'query' : `"${spec.sourceId}"`}: ${reason}. Check the table, view, file or query with \`crmsync query\`.`, {
      cause: err,
    });
  }
  const what = spec.kind === 'query' ? 'The push query' : `The push source "${spec.sourceId}"`;
  if (rows.length === 0) throw new PushSourceError(`${what} has no rows: nothing to push. Check it with \`crmsync query\` (a filter that matches nothing, or an empty file?).`);
  const columns = Object.keys(normalizeColumns(JSON.parse(rows[0]!) as Record<string, unknown>));
  if (!columns.includes('email')) {
    throw new PushSourceError(`${what} has no \`email\` column (its columns: ${columns.join(', ').slice(0, 300)}); name the address column email, for example \`SELECT address AS email, ...\`.`);
  }
  if (rows.length > maxRows) {
    throw new PushSourceError(`The push source has more than ${maxRows} rows; push it in parts (filter the query) or raise the limit.`);
  }
  return rows.map((r, i) => {
    const data = normalizeColumns(JSON.parse(r) as Record<string, unknown>);
    // Key order follows the column order; sorting makes a reordered view the same source row.
    const sourceFingerprint = createHash('sha256').update(canonicalJson(data)).digest('hex');
    return { rowNumber: i + 1, data, sourceFingerprint };
  });
}
