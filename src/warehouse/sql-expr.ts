import { quoteIdent, quoteLiteral } from './quote.js';

/**
 * A CRM timestamp string as TIMESTAMPTZ: strings with a zone (the client's ISO UTC form) keep
 * it; zone-less strings are read in the site time zone, as the CRM writes them.
 */
export function timestampExpr(expr: string, siteTimeZone: string): string {
  return `CASE WHEN ${expr} IS NULL OR ${expr} = '' THEN NULL
    WHEN regexp_matches(${expr}, '(Z|[+-]\\d\\d(:?\\d\\d)?)$') AND length(${expr}) > 10 THEN CAST(${expr} AS TIMESTAMPTZ)
    ELSE timezone(${quoteLiteral(siteTimeZone)}, CAST(${expr} AS TIMESTAMP)) END`;
}

/** A stable content fingerprint of the given columns (md5 of their JSON). */
export function fingerprintExpr(columns: readonly string[], from = ''): string {
  const prefix = from ? `${from}.` : '';
  return `md5(CAST(to_json(struct_pack(${columns.map((c) => `${quoteIdent(c)} := ${prefix}${quoteIdent(c)}`).join(', ')})) AS VARCHAR))`;
}

export function timestampLiteral(d: Date): string {
  return `CAST(${quoteLiteral(d.toISOString())} AS TIMESTAMPTZ)`;
}
