import type { DuckDBConnection } from '@duckdb/node-api';
import type { RowSpec } from './entity-specs.js';
import { WarehouseInputError } from './errors.js';
import { quoteIdent, quoteLiteral } from './quote.js';
import { fingerprintExpr, timestampExpr, timestampLiteral } from './sql-expr.js';
import { RepeatLoads } from './repeat-loads.js';
import { inTransaction, readCount, run } from './sql-run.js';
import { stageDocs, stagedDocsSql } from './stage.js';
import type { LoadContext, LoadStats } from './types.js';

export const MAX_ROWS_PER_LOAD = 500_000;
const MAX_DOC_BYTES = 1 << 20;

export interface LoadRowsOptions {
  complete: boolean;
  siteTimeZone: string;
  /** SQL condition limiting which existing rows a complete read covers (e.g. one funnel). */
  scope?: string;
  /** The writer handle's memory of its last loads: a complete load of the same rows is skipped. */
  repeats?: RepeatLoads;
  /**
   * Columns the rows may lack because their read cannot give them (a by-id read has no listing's
   * stats or counts): where a row has none, the held row's value stays.
   */
  keepHeld?: readonly string[];
}

/**
 * Generic stage-fingerprint-merge for the small streams: unchanged rows are not rewritten, and
 * with `complete`, rows of the scope that were not read are tombstoned or removed (per spec).
 */
export async function loadRows(connection: DuckDBConnection, spec: RowSpec, rows: readonly object[], ctx: LoadContext, opts: LoadRowsOptions): Promise<LoadStats> {
  const docs = toDocs(spec, rows);
  const { repeats, scope } = opts;
  const digest = repeats && opts.complete ? RepeatLoads.digest(docs, opts.siteTimeZone) : undefined;
  if (repeats && digest !== undefined && repeats.isRepeat(spec.table, scope, digest)) return { inserted: 0, updated: 0, unchanged: docs.length, deleted: 0 };
  repeats?.loading(spec.table, scope);
  const stats = await mergeDocs(connection, spec, docs, ctx, opts);
  if (repeats && digest !== undefined) repeats.loaded(spec.table, scope, digest);
  return stats;
}

async function mergeDocs(connection: DuckDBConnection, spec: RowSpec, docs: string[], ctx: LoadContext, opts: LoadRowsOptions): Promise<LoadStats> {
  const stage = `_stage_${spec.table}`;
  await stageDocs(connection, `${stage}_docs`, docs);
  return inTransaction(connection, async () => {
    await run(connection, stageSql(spec, stage, opts.siteTimeZone, opts.keepHeld ?? []));
    const t = quoteIdent(spec.table);
    const on = spec.key.map((k) => `${t}.${quoteIdent(k)} = d.${quoteIdent(k)}`).join(' AND ');
    const tombstones = spec.absent === 'tombstone';
    await run(
      connection,
      `CREATE OR REPLACE TEMP TABLE ${stage}_diff AS
      SELECT d.*, ${t}.${quoteIdent(spec.key[0]!)} IS NULL AS _is_new FROM ${stage} d LEFT JOIN ${t} ON ${on}
      WHERE ${t}.${quoteIdent(spec.key[0]!)} IS NULL OR ${t}._fingerprint <> d._fingerprint ${tombstones ? `OR ${t}._deleted_at IS NOT NULL` : ''}`,
    );
    const inserted = await readCount(connection, `SELECT count(*) FROM ${stage}_diff WHERE _is_new`);
    const changed = await readCount(connection, `SELECT count(*) FROM ${stage}_diff`);
    const load = quoteLiteral(ctx.loadId);
    const at = timestampLiteral(ctx.syncedAt);
    const cols = [...spec.columns.map(([n]) => n), 'raw', '_fingerprint'].map(quoteIdent);
    if (changed > 0) {
      await run(
        connection,
        `MERGE INTO ${t} USING ${stage}_diff d ON ${on}
        WHEN MATCHED THEN UPDATE SET ${cols.map((c) => `${c} = d.${c}`).join(', ')}, _load_id = ${load}, _synced_at = ${at}${tombstones ? ', _deleted_at = NULL' : ''}
        WHEN NOT MATCHED THEN INSERT (${cols.join(', ')}, _load_id, _synced_at) VALUES (${cols.map((c) => `d.${c}`).join(', ')}, ${load}, ${at})`,
      );
    }
    let deleted = 0;
    if (opts.complete) {
      const absent = `${opts.scope ?? 'TRUE'} AND NOT EXISTS (SELECT 1 FROM ${stage} d WHERE ${on})`;
      if (tombstones) {
        deleted = await readCount(connection, `SELECT count(*) FROM ${t} WHERE _deleted_at IS NULL AND ${absent}`);
        if (deleted > 0) await run(connection, `UPDATE ${t} SET _deleted_at = ${at}, _load_id = ${load}, _synced_at = ${at} WHERE _deleted_at IS NULL AND ${absent}`);
      } else {
        deleted = await readCount(connection, `SELECT count(*) FROM ${t} WHERE ${absent}`);
        if (deleted > 0) await run(connection, `DELETE FROM ${t} WHERE ${absent}`);
      }
    }
    await run(connection, `DROP TABLE IF EXISTS ${stage}_docs; DROP TABLE IF EXISTS ${stage}; DROP TABLE IF EXISTS ${stage}_diff`);
    return { inserted, updated: changed - inserted, unchanged: docs.length - changed, deleted };
  });
}

function toDocs(spec: RowSpec, rows: readonly object[]): string[] {
  if (rows.length > MAX_ROWS_PER_LOAD) {
    throw new WarehouseInputError(`Loading ${spec.table}: got ${rows.length} rows; load at most ${MAX_ROWS_PER_LOAD} per call.`);
  }
  const byKey = new Map<string, string>();
  for (const row of rows) {
    const r = row as Record<string, unknown>;
    const key = JSON.stringify(spec.key.map((k) => r[k]));
    if (spec.key.some((k) => r[k] === null || r[k] === undefined)) {
      throw new WarehouseInputError(`Loading ${spec.table}: a row lacks its key (${spec.key.join(', ')}).`);
    }
    const doc = JSON.stringify(row);
    if (doc.length > MAX_DOC_BYTES) throw new WarehouseInputError(`Loading ${spec.table}: row ${key} is ${doc.length} bytes as JSON; the limit is ${MAX_DOC_BYTES}.`);
    byKey.delete(key);
    byKey.set(key, doc);
  }
  return [...byKey.values()];
}

function stageSql(spec: RowSpec, stage: string, siteTimeZone: string, keepHeld: readonly string[]): string {
  const transform = Object.fromEntries([...spec.columns.map(([n, t]) => [n, t === 'TIMESTAMPTZ' || t === 'DATE' ? 'VARCHAR' : t]), ['raw', 'JSON']]);
  const typed = spec.columns.map(([n, t]) => {
    const src = `j.${quoteIdent(n)}`;
    if (t === 'TIMESTAMPTZ') return `${timestampExpr(src, siteTimeZone)} AS ${quoteIdent(n)}`;
    if (t === 'DATE') return `TRY_CAST(${src} AS DATE) AS ${quoteIdent(n)}`;
    if (keepHeld.includes(n)) {
      const held = `(SELECT h.${quoteIdent(n)} FROM ${quoteIdent(spec.table)} h WHERE ${spec.key.map((k) => `h.${quoteIdent(k)} = j.${quoteIdent(k)}`).join(' AND ')})`;
      return `coalesce(${src}, ${held}) AS ${quoteIdent(n)}`;
    }
    return `${src} AS ${quoteIdent(n)}`;
  });
  return `CREATE OR REPLACE TEMP TABLE ${quoteIdent(stage)} AS
    SELECT *, ${fingerprintExpr(spec.columns)} AS _fingerprint FROM (
      SELECT ${typed.join(', ')}, j.raw AS raw
      FROM (SELECT json_transform(doc, ${quoteLiteral(JSON.stringify(transform))}) AS j FROM ${stagedDocsSql(`${stage}_docs`)})
    )`;
}
