import { CONTACT_COLUMNS } from './contact-columns.js';
import { quoteIdent, quoteLiteral } from './quote.js';
import { fingerprintExpr, isUtcZone, wallInstantsSql, wallInZoneSql } from './sql-expr.js';

/**
 * The client's tolerant contact schema (src/crm/schemas/contact.ts, primitives.ts, timestamps.ts)
 * in SQL, over one staged row `raw` (JSON text as the CRM sent it). Each row is parsed once by
 * `json_transform` into text fields; a cheap check on that text takes the common shape, and only
 * a value that fails it is looked at again in `raw` (CASE evaluates that branch for those rows
 * only). Every rule the client has is kept: ids and counts as numbers or numeric strings, `[]`
 * or `{}` for an empty list or object, both timestamp shapes with zone-less ones in the site's
 * zone. A row that does not fit gets a `_reason` naming each field and what it held.
 */
const TEXT_FIELDS = ['hash', 'first_name', 'last_name', 'full_name', 'contact_type', 'phone', 'address_line_1', 'address_line_2', 'city', 'state', 'postal_code', 'country', 'photo'];

const TRANSFORM = JSON.stringify({
  ...Object.fromEntries(CONTACT_COLUMNS.filter(([n]) => !['tag_ids', 'list_ids', 'custom_values'].includes(n)).map(([n]) => [n, 'VARCHAR'])),
  tags: [{ id: 'VARCHAR' }],
  lists: [{ id: 'VARCHAR' }],
  custom_values: 'JSON',
  custom_fields: 'JSON',
});

const INT = `'-?[0-9]+'`;
const INT_TRIMMED = `'\\s*-?[0-9]+\\s*'`;
const NUM_TRIMMED = `'\\s*-?[0-9]+(\\.[0-9]+)?\\s*'`;

const v = (k: string) => `r.${quoteIdent(k)}`;
const typeAt = (k: string) => `json_type(raw, ${quoteLiteral(`$.${k}`)})`;
const shown = (k: string) => `left(CAST(json_extract(raw, ${quoteLiteral(`$.${k}`)}) AS VARCHAR), 40)`;

interface Field {
  value: string;
  /** A message when the row does not fit, else NULL. */
  issue?: string;
  /** True (never NULL) whenever `issue` could be non-NULL: a cheap check, with no look at `raw`. */
  suspect?: string;
}

/** An integer's text as DuckDB writes it: the common shape, told without a regular expression. */
const canonicalInt = (x: string) => `coalesce(CAST(TRY_CAST(${x} AS BIGINT) AS VARCHAR) = ${x}, false)`;

/**
 * Values computed once per row in a layer below the fields, each used several times above: as
 * a column, not an expression spliced in at each use, it is bound and optimized once; spliced,
 * planning cost about as much as running a sync-sized load (bench/results/notes.md, "Issue 19").
 */
function sharedColumns(): string {
  const cv = v('custom_values');
  const cf = v('custom_fields');
  const positional = `to_json(map_from_entries([{'k': CAST(i - 1 AS VARCHAR), 'v': json_extract(${cv}, '$[' || (i - 1) || ']')} for i in range(1, CAST(json_array_length(${cv}) AS BIGINT) + 1)]))`;
  // Every branch is JSON already (the transform's text, or to_json's): a cast would parse it again to validate it.
  const picked = `CASE WHEN starts_with(${cv}, '{') THEN ${cv} WHEN ${cv} = '[]' THEN CAST('{}' AS JSON) WHEN starts_with(${cv}, '[') THEN ${positional}
    WHEN starts_with(${cf}, '{') THEN ${cf} ELSE CAST('{}' AS JSON) END`;
  const fast = (k: string) => `(${v(k)} IS NOT NULL AND coalesce(list_bool_and([coalesce(regexp_full_match(t.id, ${INT}), false) for t in ${v(k)}]), true))`;
  return `${picked} AS _cv, ${fast('tags')} AS _tags_fast, ${fast('lists')} AS _lists_fast`;
}

// `int`: an integer or a numeric string (no spaces); anything else, missing included, is an issue.
function id(): Field {
  return {
    value: `CASE WHEN regexp_full_match(${v('id')}, ${INT}) THEN TRY_CAST(${v('id')} AS BIGINT) END`,
    issue: `CASE WHEN ${v('id')} IS NULL OR NOT regexp_full_match(${v('id')}, ${INT}) OR TRY_CAST(${v('id')} AS BIGINT) IS NULL
      THEN 'id: expected an integer or numeric string, got ' || coalesce(${shown('id')}, 'nothing') END`,
    suspect: `NOT ${canonicalInt(v('id'))}`,
  };
}

// `intOrNull`: missing, null or '' give NULL; booleans 1/0; an integer or trimmed numeric string.
function intOrNull(k: string): Field {
  const x = v(k);
  const isBool = `${typeAt(k)} = 'BOOLEAN'`;
  return {
    value: `CASE WHEN ${x} IS NULL OR ${x} = '' THEN NULL WHEN regexp_full_match(${x}, ${INT_TRIMMED}) THEN TRY_CAST(trim(${x}) AS BIGINT)
      WHEN ${isBool} THEN CASE WHEN ${x} = 'true' THEN 1 ELSE 0 END END`,
    issue: `CASE WHEN ${x} IS NULL OR ${x} = '' THEN NULL
      WHEN regexp_full_match(${x}, ${INT_TRIMMED}) THEN CASE WHEN TRY_CAST(trim(${x}) AS BIGINT) IS NULL THEN '${k}: integer out of range: ' || ${shown(k)} END
      WHEN ${isBool} THEN NULL
      ELSE '${k}: expected an integer, numeric string or null, got ' || ${shown(k)} END`,
    suspect: `(${x} IS NOT NULL AND ${x} <> '' AND NOT ${canonicalInt(x)})`,
  };
}

// `numberOrNull`: missing, null or '' give NULL; a JSON number, or a trimmed decimal string.
function numberOrNull(k: string): Field {
  const x = v(k);
  const isNumber = `${typeAt(k)} IN ('BIGINT', 'UBIGINT', 'DOUBLE')`;
  return {
    value: `CASE WHEN ${x} IS NULL OR ${x} = '' THEN NULL WHEN regexp_full_match(${x}, ${NUM_TRIMMED}) THEN TRY_CAST(trim(${x}) AS DOUBLE)
      WHEN ${isNumber} THEN TRY_CAST(trim(${x}) AS DOUBLE) END`,
    issue: `CASE WHEN ${x} IS NULL OR ${x} = '' OR regexp_full_match(${x}, ${NUM_TRIMMED}) THEN NULL WHEN ${isNumber} THEN NULL
      ELSE '${k}: expected a number, numeric string or null, got ' || ${shown(k)} END`,
    suspect: `(${x} IS NOT NULL AND ${x} <> '' AND NOT regexp_full_match(${x}, ${NUM_TRIMMED}))`,
  };
}

// `textOrNull`: strings, numbers and booleans as text; an object or array is an issue (the
// transform would give its JSON text, so only a value that looks like one is checked in `raw`).
function textOrNull(k: string, nullAs?: string): Field {
  const x = v(k);
  const suspect = `(starts_with(${x}, '{') OR starts_with(${x}, '['))`;
  const isComposite = `${typeAt(k)} IN ('OBJECT', 'ARRAY')`;
  return {
    value: nullAs === undefined ? x : `coalesce(${x}, ${nullAs})`,
    issue: `CASE WHEN ${suspect} THEN CASE WHEN ${isComposite} THEN '${k}: expected a string or null, got ' || ${shown(k)} END END`,
    suspect: `coalesce(${suspect}, false)`,
  };
}

// `text` (email): required.
function requiredText(k: string): Field {
  const t = textOrNull(k);
  return {
    value: t.value,
    issue: `CASE WHEN ${v(k)} IS NULL THEN '${k}: expected a string, got ' || coalesce(${shown(k)}, 'nothing') ELSE ${t.issue} END`,
    suspect: `(${v(k)} IS NULL OR ${t.suspect})`,
  };
}

/**
 * Tag or list ids: objects with an id, or bare ids; `{}` is an empty list and a PHP map
 * `{"0": ...}` gives its values. Sorted and distinct, as the fingerprint was defined over.
 */
function refIds(k: 'tags' | 'lists'): Field {
  const x = v(k);
  const fast = `_${k}_fast`;
  const elements = `CASE ${typeAt(k)} WHEN 'ARRAY' THEN json_extract(raw, ${quoteLiteral(`$.${k}[*]`)}) WHEN 'OBJECT' THEN json_extract(raw, ${quoteLiteral(`$.${k}.*`)}) ELSE CAST([] AS JSON[]) END`;
  const idsOf = `[CASE WHEN json_type(e) = 'OBJECT' THEN json_extract_string(e, '$.id') ELSE json_extract_string(e, '$') END for e in ${elements}]`;
  const clean = (list: string) => `list_sort(list_distinct([TRY_CAST(i AS BIGINT) for i in ${list} if regexp_full_match(i, ${INT})]))`;
  // Sorting and de-duplicating a list costs about ten times reading it: one or two ids already in order (most contacts) skip it.
  const [a, b] = [`TRY_CAST(${x}[1].id AS BIGINT)`, `TRY_CAST(${x}[2].id AS BIGINT)`];
  const short = `CASE WHEN len(${x}) = 0 THEN CAST([] AS BIGINT[]) WHEN len(${x}) = 1 AND ${a} IS NOT NULL THEN [${a}] WHEN len(${x}) = 2 AND ${a} < ${b} THEN [${a}, ${b}]
    ELSE ${clean(`[t.id for t in ${x}]`)} END`;
  return {
    value: `CASE WHEN ${fast} THEN ${short} ELSE ${clean(idsOf)} END`,
    issue: `CASE WHEN ${fast} THEN NULL WHEN coalesce(${typeAt(k)}, 'NULL') = 'NULL' THEN NULL
      WHEN ${typeAt(k)} NOT IN ('ARRAY', 'OBJECT') THEN '${k}: expected an array, got ' || ${shown(k)}
      WHEN NOT coalesce(list_bool_and([coalesce(regexp_full_match(i, ${INT}), false) for i in ${idsOf}]), true) THEN '${k}: expected objects with an integer id, got ' || ${shown(k)} END`,
    suspect: `NOT ${fast}`,
  };
}

/**
 * `custom_values` as the client picks it: an object; `[]` as `{}`, a non-empty list keyed by
 * position; else `custom_fields` when it is an object (real listings with custom_fields=true);
 * else `{}`. Top-level keys sorted, as the client sorts them (the fingerprint covers the text).
 */
function customValues(): Field {
  const sorted = `to_json(map_from_entries([{'k': k, 'v': json_extract(_cv, '$."' || replace(k, '"', '\\"') || '"')} for k in list_sort(_cv_keys)]))`;
  // The transform and to_json both write minified JSON: no second pass (`json()`) is needed to make the text one form.
  return { value: `CASE WHEN _cv = '{}' OR _cv_keys = list_sort(_cv_keys) THEN _cv ELSE ${sorted} END` };
}

const ZONE_LESS = `'[0-9]{4}-[0-9]{2}-[0-9]{2}([ T][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,6})?)?)?'`;
const ZONED = `'(?i)[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})'`;

/** A CRM timestamp's wall time (TIMESTAMP) when it has no zone; NULL for one with a zone, or none. */
function wallSql(x: string): string {
  const t = `trim(${x})`;
  return `CASE WHEN ${x} IS NULL THEN NULL
    WHEN length(${x}) = 19 AND substr(${x}, 11, 1) = ' ' AND NOT starts_with(${x}, '0000') THEN TRY_CAST(${x} AS TIMESTAMP)
    WHEN ${t} = '' OR starts_with(${t}, '0000-00-00') THEN NULL
    WHEN regexp_full_match(${t}, ${ZONE_LESS}) THEN TRY_CAST(${t} AS TIMESTAMP) END`;
}

/** A CRM timestamp with a zone as TIMESTAMPTZ; NULL for a zone-less one, or none. */
function zonedSql(x: string): string {
  const t = `trim(${x})`;
  return `CASE WHEN ${x} IS NULL OR (length(${x}) = 19 AND substr(${x}, 11, 1) = ' ' AND NOT starts_with(${x}, '0000')) THEN NULL
    WHEN ${t} = '' OR starts_with(${t}, '0000-00-00') OR regexp_full_match(${t}, ${ZONE_LESS}) THEN NULL
    WHEN regexp_full_match(${t}, ${ZONED}) THEN TRY_CAST(${t} AS TIMESTAMPTZ) END`;
}

/** A CRM timestamp (either shape) as TIMESTAMPTZ, zone-less ones in `zone`; unreadable ones NULL (`raw` keeps them). */
export function siteTimestampSql(x: string, zone: string): string {
  return `coalesce(${wallInZoneSql(wallSql(x), zone)}, ${zonedSql(x)})`;
}

/**
 * The timestamps' columns (`created_at`, `updated_at`). In a zone with changes, a wall time is
 * read through the hour it falls in: `_zone_hours` holds, per hour of the batch's wall times,
 * the shift the client's rule gives at both ends of the hour, when they agree (a zone changes
 * offset at most once in an hour, so then every wall time in it shifts the same); a wall time
 * in an hour with a change is read on its own, in `_zone_walls`. Two lookups a row cost more
 * than the rest of its typing together.
 */
const TIMESTAMPS = ['created_at', 'updated_at'] as const;
const byZone = (zone: string) => !isUtcZone(zone);

function timestampValue(k: string, zone: string): string {
  const wall = `_${k}_wall`;
  if (!byZone(zone)) return `coalesce(${wallInZoneSql(wall, zone)}, _${k}_zoned)`;
  const shift = `_${k}_hour.shift_us`;
  return `coalesce(CASE WHEN ${shift} IS NOT NULL THEN make_timestamptz(epoch_us(${wall}) - ${shift}) ELSE make_timestamptz(_${k}_exact.instant_us) END, _${k}_zoned)`;
}

/** The CTEs `_zone_hours (hour, shift_us)` and `_zone_walls (wall, instant_us)` over the wall times of `typed`. */
function zoneCtes(typed: string, zone: string): string {
  const walls = TIMESTAMPS.map((k) => `SELECT _${k}_wall AS w FROM ${typed}`).join(' UNION ');
  const bounds = `SELECT hour, 0 AS k, hour AS wall FROM _hours UNION ALL SELECT hour, 1, hour + to_microseconds(3599999999) FROM _hours`;
  const shifts = `SELECT hour, max(epoch_us(wall) - instant_us) FILTER (WHERE k = 0) AS s0, max(epoch_us(wall) - instant_us) FILTER (WHERE k = 1) AS s1
    FROM (${wallInstantsSql(`(${bounds})`, zone)}) GROUP BY hour`;
  const inChangingHours = `SELECT DISTINCT w AS wall FROM (${walls}) JOIN _zone_hours ON _zone_hours.hour = date_trunc('hour', w) WHERE _zone_hours.shift_us IS NULL`;
  return `_hours AS (SELECT DISTINCT date_trunc('hour', w) AS hour FROM (${walls}) WHERE w IS NOT NULL),
    _zone_hours AS (SELECT hour, CASE WHEN s0 = s1 THEN s0 END AS shift_us FROM (${shifts})),
    _zone_walls AS (${wallInstantsSql(`(${inChangingHours})`, zone)})`;
}

function fields(zone: string): Record<string, Field> {
  const dob = v('date_of_birth');
  return {
    id: id(),
    user_id: intOrNull('user_id'),
    email: requiredText('email'),
    status: textOrNull('status', `''`),
    ...Object.fromEntries(TEXT_FIELDS.map((k) => [k, textOrNull(k)])),
    date_of_birth: {
      value: `TRY_CAST(CASE WHEN ${dob} = '' OR starts_with(${dob}, '0000') THEN NULL ELSE left(${dob}, 10) END AS DATE)`,
      issue: textOrNull('date_of_birth').issue!,
      suspect: textOrNull('date_of_birth').suspect!,
    },
    company_id: intOrNull('company_id'),
    total_points: numberOrNull('total_points'),
    life_time_value: numberOrNull('life_time_value'),
    tag_ids: refIds('tags'),
    list_ids: refIds('lists'),
    custom_values: customValues(),
    created_at: { value: timestampValue('created_at', zone) },
    updated_at: { value: timestampValue('updated_at', zone) },
  };
}

/** The rows as `json_transform` gives them, with the values several fields use. */
function transformedSql(rows: string): string {
  return `SELECT *, ${sharedColumns()} FROM (SELECT seq, page, position, raw, json_transform(raw, ${quoteLiteral(TRANSFORM)}) AS r FROM ${rows})`;
}

/**
 * SELECT over `rows` (a table or a parenthesized query of `seq`, `page`, `position`, `raw` JSON
 * text, one per contact row) giving the typed contact columns, `raw`, `_fingerprint`, the row's
 * `seq`/`page`/`position`, `_suspect` (true when a cheap check cannot tell that the row fits) and
 * `_reason`, NULL here: `contactReasonsSql` gives it for the suspect rows. Building every reject
 * message in this statement cost more to plan than the rest of it did, at every load.
 */
export function typedContactRowsSql(rows: string, zone: string): string {
  const f = fields(zone);
  const cols = CONTACT_COLUMNS.map(([n]) => `${f[n]!.value} AS ${quoteIdent(n)}`).join(',\n      ');
  const suspects = CONTACT_COLUMNS.map(([n]) => f[n]!.suspect).filter((x): x is string => x !== undefined);
  const times = TIMESTAMPS.map((k) => `${wallSql(v(k))} AS _${k}_wall, ${zonedSql(v(k))} AS _${k}_zoned`).join(', ');
  const typed = `SELECT *, CASE WHEN _cv <> '{}' THEN json_keys(_cv) END AS _cv_keys, ${times} FROM (${transformedSql(rows)})`;
  const checked = (from: string) => `SELECT seq, page, position, raw, ${cols},
      (${suspects.join(' OR ')}) AS _suspect, CAST(NULL AS VARCHAR) AS _reason
    FROM ${from}`;
  const joins = TIMESTAMPS.map(
    (k) => `LEFT JOIN _zone_hours AS _${k}_hour ON _${k}_hour.hour = date_trunc('hour', _${k}_wall) LEFT JOIN _zone_walls AS _${k}_exact ON _${k}_exact.wall = _${k}_wall`,
  ).join(' ');
  const body = byZone(zone) ? `WITH _typed AS (${typed}), ${zoneCtes('_typed', zone)} ${checked(`_typed ${joins}`)}` : checked(`(${typed})`);
  return `SELECT *, ${fingerprintExpr(CONTACT_COLUMNS)} AS _fingerprint FROM (
    ${body}
  )`;
}

/**
 * SELECT over `rows` (as for `typedContactRowsSql`) giving each row's `seq`, `position` and
 * `_reason`: every field that does not fit and what it held, NULL when the row fits.
 */
export function contactReasonsSql(rows: string): string {
  const f = fields('UTC');
  const issues = CONTACT_COLUMNS.map(([n]) => f[n]!.issue).filter((x): x is string => x !== undefined);
  return `SELECT seq, position, nullif(concat_ws('; ', ${issues.join(',\n        ')}), '') AS _reason FROM (${transformedSql(rows)})`;
}

/**
 * The contact rows of the staged pages `(seq, page, body)` and rows `(seq, page, position, raw)`.
 * A page whose rows the scan found is staged as its rows (`stage-contact-rows.ts`), its `body`
 * NULL. Else from `body`: the listing's `subscribers.data` array (the common shape, read with one
 * parse of the body); else a PHP keyed `data` object, `subscribers` as a plain array, or a
 * top-level `data` array.
 */
export function pageRowsSql(pages: string, rows: string): string {
  return `SELECT seq, page, raw, position FROM ${quoteIdent(rows)}
    UNION ALL ${bodyRowsSql(pages)}`;
}

function bodyRowsSql(pages: string): string {
  const other = `CASE WHEN json_type(body, '$.subscribers.data') = 'OBJECT' THEN json_extract(body, '$.subscribers.data.*')
      WHEN json_type(body, '$.subscribers') = 'ARRAY' THEN json_extract(body, '$.subscribers[*]')
      WHEN json_type(body, '$.data') = 'OBJECT' THEN json_extract(body, '$.data.*')
      ELSE json_extract(body, '$.data[*]') END`;
  return `SELECT seq, page, unnest(rows) AS raw, generate_subscripts(rows, 1) AS position FROM (
    SELECT seq, page, CASE WHEN len(listed) > 0 THEN listed ELSE ${other} END AS rows FROM (
      SELECT CAST(seq AS INTEGER) AS seq, CAST(page AS INTEGER) AS page, body, json_extract(body, '$.subscribers.data[*]') AS listed FROM ${quoteIdent(pages)} WHERE body IS NOT NULL
    )
  )`;
}
