/** Longest server-requested wait honoured; a larger value is clamped so one header cannot park a run for days. */
export const MAX_RETRY_AFTER_MS = 15 * 60_000;

/**
 * Parses a Retry-After header: delta-seconds ("120", "1.5") or an HTTP-date. Returns milliseconds
 * from `nowMs` (never negative, clamped to MAX_RETRY_AFTER_MS), or undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number = Date.now()): number | undefined {
  const v = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.min(Math.round(Number(v) * 1000), MAX_RETRY_AFTER_MS);
  // HTTP-date (IMF-fixdate, or the obsolete RFC 850 / asctime forms Date.parse also reads).
  if (!/[a-z]/i.test(v)) return undefined;
  const at = Date.parse(v);
  if (!Number.isFinite(at)) return undefined;
  return Math.min(Math.max(0, at - nowMs), MAX_RETRY_AFTER_MS);
}
