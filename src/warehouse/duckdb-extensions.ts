/**
 * DuckDB settings for every instance crmsync opens: no extension is ever downloaded. What
 * crmsync's own SQL needs (json, parquet, icu) is built into @duckdb/node-api's DuckDB
 * (`duckdb_extensions()` lists them STATICALLY_LINKED), so only a user's SQL or file name asks
 * for another one (`--from targets.xlsx` wants excel, an https:// path httpfs). DuckDB would
 * fetch it from the network into ~/.duckdb while the command runs, or fail after trying with an
 * error that names no fix. Autoloading stays on: an extension the user installed still loads.
 */
export const NO_EXTENSION_INSTALLS = { autoinstall_known_extensions: 'false' } as const;

const NEEDS_EXTENSION = [
  // An extension DuckDB would load by itself: "... install the required extension 'excel'".
  /^Extension Autoloading Error:.*?required extension '([A-Za-z0-9_]+)'/s,
  // One it would not: "... is not in the catalog, but it exists in the spatial extension."
  /but it exists in the ([A-Za-z0-9_]+) extension/,
];

/** The DuckDB extension an error says is needed and not installed, or undefined for any other error. */
export function missingDuckDbExtension(err: unknown): string | undefined {
  const message = err instanceof Error ? err.message : String(err);
  for (const re of NEEDS_EXTENSION) {
    const m = re.exec(message);
    if (m) return m[1];
  }
  return undefined;
}
