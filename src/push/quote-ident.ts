/** Quotes one SQL identifier for DuckDB (doubling embedded quotes). */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
