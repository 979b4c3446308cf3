/**
 * The Parquet compression of the lake's files: `zstd` (level 3, DuckDB's), `zstd-1` (zstd at
 * level 1), `snappy` or `lz4`. Every reader of note reads all four.
 */
export const LAKE_COMPRESSIONS = ['zstd', 'zstd-1', 'snappy', 'lz4'] as const;
export type LakeCompression = (typeof LAKE_COMPRESSIONS)[number];

/** The COPY options that write `compression`. */
export function lakeCompressionOptions(compression: LakeCompression): string {
  return compression === 'zstd-1' ? 'COMPRESSION zstd, COMPRESSION_LEVEL 1' : `COMPRESSION ${compression}`;
}
