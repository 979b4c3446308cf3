const UNITS: Record<string, number> = { kb: 1e3, mb: 1e6, gb: 1e9, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3 };

/** '256MB', '1.5GiB' as bytes (the forms config accepts for CRMSYNC_SYNC_MEMORY_LIMIT and CRMSYNC_SYNC_CHECKPOINT_THRESHOLD). */
export function sizeBytes(size: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([KMG]i?B)$/i.exec(size.trim());
  if (!m) throw new RangeError(`a size must look like 256MB or 2GB, got "${size}"`);
  return Number(m[1]) * (UNITS[m[2]!.toLowerCase()] ?? NaN);
}
