import { quoteIdent, quoteLiteral } from './quote.js';

/**
 * A CRM timestamp string as TIMESTAMPTZ: strings with a zone (the client's ISO UTC form) keep
 * it; zone-less strings are read in the site time zone, as the CRM writes them. The `Z` branch
 * is the regex branch's commonest case, tested first because it is cheaper than the regex.
 */
export function timestampExpr(expr: string, siteTimeZone: string): string {
  return `CASE WHEN ${expr} IS NULL OR ${expr} = '' THEN NULL
    WHEN ends_with(${expr}, 'Z') AND length(${expr}) > 10 THEN CAST(${expr} AS TIMESTAMPTZ)
    WHEN regexp_matches(${expr}, '(Z|[+-]\\d\\d(:?\\d\\d)?)$') AND length(${expr}) > 10 THEN CAST(${expr} AS TIMESTAMPTZ)
    ELSE timezone(${quoteLiteral(siteTimeZone)}, CAST(${expr} AS TIMESTAMP)) END`;
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
