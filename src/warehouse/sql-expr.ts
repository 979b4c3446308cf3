import { quoteIdent, quoteLiteral } from './quote.js';

/**
 * A CRM timestamp string as TIMESTAMPTZ: strings with a zone (the client's ISO UTC form) keep
 * it; zone-less strings are read in the site time zone, as the CRM writes them (wallInZoneSql).
 * The `Z` branch is the regex branch's commonest case, tested first because it is cheaper than
 * the regex.
 */
export function timestampExpr(expr: string, siteTimeZone: string): string {
  return `CASE WHEN ${expr} IS NULL OR ${expr} = '' THEN NULL
    WHEN ends_with(${expr}, 'Z') AND length(${expr}) > 10 THEN CAST(${expr} AS TIMESTAMPTZ)
    WHEN regexp_matches(${expr}, '(Z|[+-]\\d\\d(:?\\d\\d)?)$') AND length(${expr}) > 10 THEN CAST(${expr} AS TIMESTAMPTZ)
    ELSE ${wallInZoneSql(`CAST(${expr} AS TIMESTAMP)`, siteTimeZone)} END`;
}

const DAY_US = 86_400_000_000;

/**
 * A zone-less wall time (TIMESTAMP) read in `zone` as the client reads it (`instantOfWall` in
 * src/crm/timestamps.ts, PHP's rule): the zone's offsets a day before and after bracket any change;
 * in an hour the clocks repeat, the earlier instant; in an hour they skip, moved forward by the skip.
 * DuckDB's own `timezone(zone, wall)` picks the other instant of a repeated hour in some zones, and a
 * fingerprint must not depend on which path loaded a contact. Instants stay epoch microseconds
 * between the lookups, so only the lookups go through the time zone library: `timezone('UTC', ...)`
 * each way cost as much again. Outside a day with a change, two lookups, as before this rule.
 */
export function wallInZoneSql(wall: string, zone: string): string {
  const us = `epoch_us(${wall})`;
  if (isUtcZone(zone)) return `make_timestamptz(${us})`;
  const offsetAt = offsetAtSql(zone);
  const before = offsetAt(`(${us} - ${DAY_US})`);
  const after = offsetAt(`(${us} + ${DAY_US})`);
  const [withBefore, withAfter] = [`(${us} - ${before})`, `(${us} - ${after})`];
  return `make_timestamptz(${pickInstantSql({ before, after, withBefore, withAfter, beforeFits: `${offsetAt(withBefore)} = ${before}`, afterFits: `${offsetAt(withAfter)} = ${after}` })})`;
}

/**
 * `walls` (a relation with a TIMESTAMP column `wall`; its other columns are kept) with `instant_us`,
 * the epoch microseconds of each wall time read in `zone` by wallInZoneSql's rule, in layers, so
 * each time zone lookup is written, bound and planned once, not spliced into the expression again
 * at each use (a statement's planning grows with its text).
 */
export function wallInstantsSql(walls: string, zone: string): string {
  if (isUtcZone(zone)) return `SELECT *, epoch_us(wall) AS instant_us FROM ${walls}`;
  const offsetAt = offsetAtSql(zone);
  const offsets = `SELECT *, ${offsetAt(`(_us - ${DAY_US})`)} AS _before, ${offsetAt(`(_us + ${DAY_US})`)} AS _after FROM (SELECT *, epoch_us(wall) AS _us FROM ${walls})`;
  const candidates = `SELECT *, _us - _before AS _with_before, _us - _after AS _with_after FROM (${offsets})`;
  const fits = `SELECT *, ${offsetAt('_with_before')} = _before AS _before_fits, ${offsetAt('_with_after')} = _after AS _after_fits FROM (${candidates})`;
  const instant = pickInstantSql({ before: '_before', after: '_after', withBefore: '_with_before', withAfter: '_with_after', beforeFits: '_before_fits', afterFits: '_after_fits' });
  return `SELECT * EXCLUDE (_us, _before, _after, _with_before, _with_after, _before_fits, _after_fits), ${instant} AS instant_us FROM (${fits})`;
}

/** UTC and its alias: wall times are instants as they are, with no time zone lookup. */
export const isUtcZone = (zone: string): boolean => zone === 'UTC' || zone === 'Etc/UTC';

/** The zone's offset (microseconds, wall minus UTC) at an instant given in epoch microseconds. */
function offsetAtSql(zone: string): (instantUs: string) => string {
  const z = quoteLiteral(zone);
  return (instantUs) => `(epoch_us(timezone(${z}, make_timestamptz(${instantUs}))) - ${instantUs})`;
}

/**
 * PHP's choice between the wall time read with the offset before a change and with the one after
 * (each an SQL expression): the one instant when no change is near; the earlier when both fit (a
 * repeated hour); the one that fits; else (a skipped hour) the later, moved forward by the skip.
 */
function pickInstantSql(e: { before: string; after: string; withBefore: string; withAfter: string; beforeFits: string; afterFits: string }): string {
  return `CASE WHEN ${e.before} = ${e.after} THEN ${e.withBefore}
    WHEN ${e.beforeFits} AND ${e.afterFits} THEN least(${e.withBefore}, ${e.withAfter})
    WHEN ${e.beforeFits} THEN ${e.withBefore} WHEN ${e.afterFits} THEN ${e.withAfter}
    ELSE greatest(${e.withBefore}, ${e.withAfter}) END`;
}

/**
 * A stable content fingerprint of the given columns: md5 over their text joined by a unit
 * separator (NULL as NUL). Timestamps enter as epoch microseconds, so the session time zone
 * cannot change a fingerprint. Faster than md5(to_json(...)) (bench/results/notes.md, "fingerprint").
 */
export function fingerprintExpr(columns: readonly (readonly [string, string])[]): string {
  const parts = columns.map(([name, type]) => {
    const c = quoteIdent(name);
    const text = type === 'TIMESTAMPTZ' ? `CAST(epoch_us(${c}) AS VARCHAR)` : `CAST(${c} AS VARCHAR)`;
    return `coalesce(${text}, chr(0))`;
  });
  return `md5(concat_ws(chr(31), ${parts.join(', ')}))`;
}

export function timestampLiteral(d: Date): string {
  return `CAST(${quoteLiteral(d.toISOString())} AS TIMESTAMPTZ)`;
}
