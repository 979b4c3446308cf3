import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { PushSourceError } from './push-errors.js';
import type { PushSourceTarget } from '../warehouse/push-source.js';
import { hasStatementBreak } from '../warehouse/statement-break.js';

/** Longest `--from` text accepted: a query longer than this is almost certainly a mistake. */
export const MAX_SOURCE_TEXT = 100_000;
/** Largest file `--from` may name (1 GiB): its rows must fit the push's row and byte limits anyway. */
export const MAX_SOURCE_FILE_BYTES = 1024 ** 3;

export type SourceSpec = PushSourceTarget & {
  /** Stable name of the source in the ledger: the relation name, `query:<hash>`, or `file:<name>`. */
  sourceId: string;
};

const LEDGER_NAME = /^[A-Za-z0-9_.:-]{1,100}$/;
const RELATION = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){0,2}$/;
const QUERY_START = /^(select|with|from|values|table|\()/i;
/** Spreadsheet files: a missing one would read as a table of a schema, `nosuch.xlsx` as table xlsx of schema nosuch. */
const SPREADSHEET = /\.(xlsx|xlsm|xlsb|xls|ods)$/i;
/** The file names FILE_FORMATS reads, for messages. */
export const FILE_FORMAT_NAMES = '.csv, .tsv, .parquet, .json, .jsonl or .ndjson (optionally .gz)';
/** A CSV, Parquet or JSON file, read with DuckDB's own readers (types detected from the data). */
const FILE_FORMATS: [RegExp, 'csv' | 'parquet' | 'json'][] = [
  [/\.(csv|tsv)(\.gz)?$/i, 'csv'],
  [/\.parquet$/i, 'parquet'],
  [/\.(json|jsonl|ndjson)(\.gz)?$/i, 'json'],
];

/**
 * Reads `--from`: a table or view name (optionally schema- or catalog-qualified) or a read-only
 * query. A query is wrapped as a subquery, so only statements that yield rows can run.
 */
export function parseSourceSpec(from: string, ledgerName?: string): SourceSpec {
  const spec = parseFrom(from);
  if (ledgerName === undefined) return spec;
  if (!LEDGER_NAME.test(ledgerName)) {
    throw new PushSourceError(`--ledger-name "${ledgerName.slice(0, 40)}" must be 1 to 100 letters, digits, or _ . : -`);
  }
  return { ...spec, sourceId: ledgerName };
}

/** `--from` with a file made absolute, so a worker in another folder reads the same file. */
export function absoluteFileSource(from: string): string {
  const text = from.trim();
  return !QUERY_START.test(text) && FILE_FORMATS.some(([re]) => re.test(text)) ? resolve(text) : from;
}

/**
 * The ledger is per source: a relation by its name, a query by a hash of its text (so editing the
 * query starts a new ledger unless `--ledger-name` keeps the old one).
 */
function parseFrom(from: string): SourceSpec {
  const text = from.trim().replace(/;+\s*$/, '');
  if (text.length === 0) throw new PushSourceError('`--from` is empty; pass a table or view name, or a SELECT query.');
  if (text.length > MAX_SOURCE_TEXT) {
    throw new PushSourceError(`\`--from\` is ${text.length} characters (limit ${MAX_SOURCE_TEXT}); save the query as a view and pass its name.`);
  }
  const format = QUERY_START.test(text) ? undefined : FILE_FORMATS.find(([re]) => re.test(text))?.[1];
  if (format) {
    const path = resolve(text);
    const st = existsSync(path) ? statSync(path) : undefined;
    if (!st?.isFile()) {
      throw new PushSourceError(`\`--from\` names the file ${path}, which does not exist; check the path (CSV, Parquet and JSON files are read directly).`);
    }
    if (st.size > MAX_SOURCE_FILE_BYTES) {
      throw new PushSourceError(`\`--from\` names the file ${path} of ${st.size} bytes (limit ${MAX_SOURCE_FILE_BYTES}, 1 GiB); split it into smaller files and push each.`);
    }
    return { kind: 'file', sourceId: `file:${basename(path).toLowerCase()}`, format, path };
  }
  if (!QUERY_START.test(text) && /\.[A-Za-z0-9]{1,10}$/.test(text) && existsSync(resolve(text)) && statSync(resolve(text)).isFile()) {
    // Else `targets.xlsx` reads as table xlsx of schema targets, and DuckDB asks for an extension.
    throw new PushSourceError(`\`--from\` names the file ${resolve(text)}, which is not a format push reads; save it as ${FILE_FORMAT_NAMES} and pass that.`);
  }
  if (RELATION.test(text)) {
    if (SPREADSHEET.test(text)) {
      throw new PushSourceError(
        `\`--from\` names the file ${resolve(text)}, which does not exist; push reads ${FILE_FORMAT_NAMES} files, so save the sheet as one of those and pass its path (a table so named is read with a query that selects from it).`,
      );
    }
    return { kind: 'relation', sourceId: text.toLowerCase(), name: text.split('.') };
  }
  if (!QUERY_START.test(text)) {
    throw new PushSourceError(`\`--from\` is neither a table/view name, a .csv, .parquet or .json file, nor a query starting with SELECT, WITH or FROM: "${text.slice(0, 60)}".`);
  }
  if (hasStatementBreak(text)) {
    throw new PushSourceError('`--from` holds more than one statement; pass a single SELECT query (or a view name).');
  }
  const normalized = text.replace(/\s+/g, ' ');
  const hash = createHash('sha256').update(normalized).digest('hex').slice(0, 16);
  return { kind: 'query', sourceId: `query:${hash}`, text };
}
