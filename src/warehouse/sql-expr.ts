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
  if (zone === 'UTC' || zone === 'Etc/UTC') return `make_timestamptz(${us})`;
  const z = quoteLiteral(zone);
  const offsetAt = (instantUs: string) => `(epoch_us(timezone(${z}, make_timestamptz(${instantUs}))) - ${instantUs})`;
  const before = offsetAt(`(${us} - ${DAY_US})`);
  const after = offsetAt(`(${us} + ${DAY_US})`);
  const [withBefore, withAfter] = [`(${us} - ${before})`, `(${us} - ${after})`];
  const [beforeFits, afterFits] = [`${offsetAt(withBefore)} = ${before}`, `${offsetAt(withAfter)} = ${after}`];
  return `make_timestamptz(CASE WHEN ${before} = ${after} THEN ${withBefore}
    WHEN ${beforeFits} AND ${afterFits} THEN least(${withBefore}, ${withAfter})
    WHEN ${beforeFits} THEN ${withBefore} WHEN ${afterFits} THEN ${withAfter}
    ELSE greatest(${withBefore}, ${withAfter}) END)`;
}

/**
 * `walls` (a relation with a TIMESTAMP column `wall`; its other columns are kept) with `instant_us`,
 * the epoch microseconds of each wall time read in `zone` by wallInZoneSql's rule, in layers, so
 * each time zone lookup is written, bound and planned once, not spliced into the expression again
 * at each use (a statement's planning grows with its text).
 */
export function wallInstantsSql(walls: string, zone: string): string {
  if (zone === 'UTC' || zone === 'Etc/UTC') return `SELECT *, epoch_us(wall) AS instant_us FROM ${walls}`;
  const z = quoteLiteral(zone);
  const offsetAt = (instantUs: string) => `(epoch_us(timezone(${z}, make_timestamptz(${instantUs}))) - ${instantUs})`;
  const offsets = `SELECT *, ${offsetAt(`(_us - ${DAY_US})`)} AS _before, ${offsetAt(`(_us + ${DAY_US})`)} AS _after FROM (SELECT *, epoch_us(wall) AS _us FROM ${walls})`;
  const candidates = `SELECT *, _us - _before AS _with_before, _us - _after AS _with_after FROM (${offsets})`;
  const fits = `SELECT *, ${offsetAt('_with_before')} = _before AS _before_fits, ${offsetAt('_with_after')} = _after AS _after_fits FROM (${candidates})`;
  return `SELECT * EXCLUDE (_us, _before, _after, _with_before, _with_after, _before_fits, _after_fits), CASE WHEN _before = _after THEN _with_before
      WHEN _before_fits AND _after_fits THEN least(_with_before, _with_after) WHEN _before_fits THEN _with_before WHEN _after_fits THEN _with_after
      ELSE greatest(_with_before, _with_after) END AS instant_us FROM (${fits})`;
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
