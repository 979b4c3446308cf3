import type { ContactWrite, CustomField } from '../crm/types.js';
import { checkCustomValue } from './check-custom-value.js';
import { checkEmail, checkIsoDate, checkStatus, clip, MAX_TEXT_LENGTH } from './field-checks.js';
import { parseTaxonomyRefs } from './parse-taxonomy-refs.js';
import type { DraftResult, RowRejection } from './push-types.js';

export const TEXT_COLUMNS = ['first_name', 'last_name', 'phone', 'address_line_1', 'address_line_2', 'city', 'state', 'postal_code', 'country'] as const;

export const KNOWN_COLUMNS = new Set<string>(['email', 'status', 'date_of_birth', 'custom_values', 'tags', 'lists', ...TEXT_COLUMNS]);
export const CUSTOM_COLUMN_PREFIX = 'cf_';

type TextColumn = (typeof TEXT_COLUMNS)[number];

/**
 * Column names as the mapping expects them: known columns in lower case (`Email` is `email`),
 * `CF_slug` as `cf_slug` with the slug kept as written. Other columns are left alone.
 */
export function normalizeColumns(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(row)) {
    const lower = name.toLowerCase();
    if (KNOWN_COLUMNS.has(lower)) out[lower] = value;
    else if (lower.startsWith(CUSTOM_COLUMN_PREFIX)) out[CUSTOM_COLUMN_PREFIX + name.slice(CUSTOM_COLUMN_PREFIX.length)] = value;
    else out[name] = value;
  }
  return out;
}

/** Columns the push does not use (a typo such as `frist_name` shows up here in the dry run). */
export function ignoredColumns(row: Record<string, unknown> | undefined): string[] {
  if (!row) return [];
  return Object.keys(row).filter((c) => !KNOWN_COLUMNS.has(c) && !c.startsWith(CUSTOM_COLUMN_PREFIX));
}

class Rejected extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/**
 * Maps one source row (a JSON object, one key per column) to the create body, checking every
 * field locally. Empty and null cells are left out: the CRM's upsert never blanks a field anyway.
 */
export function mapSourceRow(row: Record<string, unknown>, rowNumber: number, fields: ReadonlyMap<string, CustomField>, sourceFingerprint = ''): DraftResult {
  const rawEmail = typeof row.email === 'string' ? row.email.trim() : row.email == null ? '' : String(row.email);
  const key = rawEmail.toLowerCase();
  try {
    const emailFailure = checkEmail(rawEmail);
    if (emailFailure) throw new Rejected('email', emailFailure.message);
    const statusCell = row.status == null ? '' : String(row.status);
    const status = checkStatus(statusCell);
    if ('message' in status) throw new Rejected('status', status.message);

    const body: Omit<ContactWrite, 'tags' | 'lists'> = { email: rawEmail, status: status.status };
    for (const column of TEXT_COLUMNS) {
      const value = textCell(row, column);
      if (value !== undefined) body[column] = value;
    }
    const dob = textCell(row, 'date_of_birth');
    if (dob !== undefined) {
      const failure = checkIsoDate(dob);
      if (failure) throw new Rejected('date_of_birth', failure.message);
      body.date_of_birth = dob;
    }
    const customValues = mapCustomValues(row, fields);
    if (Object.keys(customValues).length > 0) body.custom_values = customValues;
    return { ok: true, draft: { rowNumber, sourceFingerprint, key, body, tags: refs(row, 'tags'), lists: refs(row, 'lists') } };
  } catch (err) {
    if (!(err instanceof Rejected)) throw err;
    return { ok: false, rejection: rejection(rowNumber, key, rawEmail, err.field, err.reason) };
  }
}

export function rejection(rowNumber: number, key: string, email: string, field: string, reason: string): RowRejection {
  return { rowNumber, key, email, field, reason: `${field}: ${reason}` };
}

function textCell(row: Record<string, unknown>, column: TextColumn | 'date_of_birth'): string | undefined {
  const raw = row[column];
  if (raw === null || raw === undefined) return undefined;
  if (typeof raw === 'object') throw new Rejected(column, 'is a list or object; give a text value');
  const value = String(raw).trim();
  if (value.length === 0) return undefined;
  if (value.length > MAX_TEXT_LENGTH) throw new Rejected(column, `is ${value.length} characters long (limit ${MAX_TEXT_LENGTH})`);
  return value;
}

function refs(row: Record<string, unknown>, column: 'tags' | 'lists'): (number | string)[] {
  const parsed = parseTaxonomyRefs(row[column]);
  if ('message' in parsed) throw new Rejected(column, parsed.message);
  return parsed.refs;
}

function mapCustomValues(row: Record<string, unknown>, fields: ReadonlyMap<string, CustomField>): Record<string, string | string[]> {
  const merged: Record<string, unknown> = { ...parseCustomValuesCell(row.custom_values) };
  for (const [column, value] of Object.entries(row)) {
    // An empty cf_ cell has nothing to win with: the slug's value in custom_values stays.
    if (column.startsWith(CUSTOM_COLUMN_PREFIX) && !isEmptyCell(value)) merged[column.slice(CUSTOM_COLUMN_PREFIX.length)] = value;
  }
  const out: Record<string, string | string[]> = {};
  for (const slug of Object.keys(merged).sort()) {
    const result = checkCustomValue(fields, slug, merged[slug]);
    if ('message' in result) throw new Rejected(`custom_values.${slug}`, result.message);
    if ('value' in result) out[slug] = result.value;
  }
  return out;
}

function isEmptyCell(value: unknown): boolean {
  return value === null || value === undefined || (typeof value === 'string' && value.trim() === '');
}

function parseCustomValuesCell(cell: unknown): Record<string, unknown> {
  if (cell === null || cell === undefined || cell === '') return {};
  let value = cell;
  if (typeof cell === 'string') {
    try {
      value = JSON.parse(cell);
    } catch {
      throw new Rejected('custom_values', `"${clip(cell)}" is not a JSON object of slug to value`);
    }
  }
  // Real deployments send [] for an empty object; accept it from analysts too.
  if (Array.isArray(value) && value.length === 0) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Rejected('custom_values', 'must be a JSON object of slug to value');
  }
  return value as Record<string, unknown>;
}
