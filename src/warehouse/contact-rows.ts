import type { Contact } from '../crm/types.js';
import { CONTACT_COLUMNS } from './contact-columns.js';
import { quoteIdent } from './quote.js';
import { timestampExpr } from './sql-expr.js';

/**
 * Contacts cross from JS into DuckDB as delimited text rows, not JSON documents: the typed
 * fields joined by unit separators (chr 31), one row per appended value. Only `custom_values`
 * (and `raw`, in its own column) is serialized as JSON; DuckDB splits the rows and casts the fields in
 * parallel, with no JSON parse of the normalized fields on either side (profiled: stringifying
 * and re-parsing the whole contact was most of a load).
 */
const FIELD = '\x1f';
const NULL_FIELD = '\x1d';
// A text value holding any of these control characters travels as this prefix + its JSON string.
const ESCAPED = '\x1c';
// eslint-disable-next-line no-control-regex -- these separators are the point
const CONTROL = /[\x1c-\x1f]/;

function text(v: unknown): string {
  if (v === null || v === undefined) return NULL_FIELD;
  let s: string;
  if (typeof v === 'string') s = v;
  else if (typeof v === 'number') return Number.isFinite(v) ? String(v) : NULL_FIELD;
  else s = JSON.stringify(v) ?? NULL_FIELD;
  return CONTROL.test(s) ? ESCAPED + JSON.stringify(s) : s;
}

function num(v: unknown): string {
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : NULL_FIELD;
  if (typeof v === 'string' && v !== '' && !CONTROL.test(v)) return v;
  return NULL_FIELD;
}

function ids(refs: unknown): string {
  if (!Array.isArray(refs)) return NULL_FIELD;
  const out: number[] = [];
  let sorted = true;
  for (const r of refs as { id?: unknown }[]) {
    const id = typeof r?.id === 'number' ? r.id : typeof r?.id === 'string' ? Number(r.id) : NaN;
    if (!Number.isSafeInteger(id)) continue;
    if (out.length > 0 && id <= out[out.length - 1]!) sorted = false;
    out.push(id);
  }
  // Same list as list_sort(list_distinct(...)) in SQL, which the fingerprint was defined over.
  return `[${sorted ? out.join(',') : [...new Set(out)].sort((a, b) => a - b).join(',')}]`;
}

// The fingerprint covers custom_values as JSON text: a list read and a single read that order
// the keys differently must not count as a change.
function sortedJson(values: Record<string, unknown> | null | undefined): string {
  const v = values ?? {};
  const keys = Object.keys(v);
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1]! > keys[i]!) {
      const sorted: Record<string, unknown> = {};
      for (const k of keys.sort()) sorted[k] = v[k];
      return JSON.stringify(sorted);
    }
  }
  return JSON.stringify(v);
}

/** One contact's typed fields as a text row (see above). */
export function encodeContactRow(c: Contact): string {
  // An array joined once builds one flat string; `+` chains build ropes that cost a second copy.
  return [
    String(c.id),
    num(c.user_id),
    text(c.hash),
    text(c.email),
    text(c.first_name),
    text(c.last_name),
    text(c.full_name),
    text(c.status),
    text(c.contact_type),
    text(c.phone),
    text(c.address_line_1),
    text(c.address_line_2),
    text(c.city),
    text(c.state),
    text(c.postal_code),
    text(c.country),
    text(c.date_of_birth),
    text(c.photo),
    num(c.company_id),
    num(c.total_points),
    num(c.life_time_value),
    ids(c.tags),
    ids(c.lists),
    sortedJson(c.custom_values),
    text(c.created_at),
    text(c.updated_at),
  ].join(FIELD);
}

/**
 * `raw` travels in a column of its own (not in the text row, so splitting the row never scans
 * it), and only for new or changed contacts: it is not part of the fingerprint, so an unchanged
 * contact's raw record is never serialized (most of a reload's work). Null when there is none.
 */
export function encodeContactRaw(c: Contact): string | null {
  return JSON.stringify(c.raw) ?? null;
}

/**
 * `raw` as JSON from its staged text column. A cast, not json(): the cast validates the text
 * and keeps the text JSON.stringify wrote; json() re-serializes every record for the same value
 * under JSON.parse, at a higher CPU cost (bench/results/notes.md, "raw JSON cast").
 */
export function contactRawSql(column: string): string {
  return `CAST(${column} AS JSON)`;
}

/**
 * SELECT list typing the fields of `f` (the row split into a list) into the contact columns.
 * JSON goes through json() so its text is normalized exactly as json_transform did before (the
 * fingerprint covers custom_values).
 */
export function contactRowSelectSql(f: string, siteTimeZone: string): string {
  const cols = CONTACT_COLUMNS.map(([n, t], i) => {
    const raw = `${f}[${i + 1}]`;
    const plain = `nullif(${raw}, chr(29))`;
    const decoded = `CASE WHEN starts_with(${raw}, chr(28)) THEN json_extract_string(${raw}[2:], '$') ELSE ${plain} END`;
    const out = quoteIdent(n);
    if (t === 'BIGINT' || t === 'DOUBLE') return `TRY_CAST(${plain} AS ${t}) AS ${out}`;
    if (t === 'BIGINT[]') return `CAST(${plain} AS BIGINT[]) AS ${out}`;
    if (t === 'JSON') return `json(${plain}) AS ${out}`;
    if (t === 'DATE') return `TRY_CAST(${decoded} AS DATE) AS ${out}`;
    if (t === 'TIMESTAMPTZ') return `${timestampExpr(`(${decoded})`, siteTimeZone)} AS ${out}`;
    return `${decoded} AS ${out}`;
  });
  return cols.join(',\n      ');
}
