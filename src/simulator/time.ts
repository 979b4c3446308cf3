/**
 * The two timestamp shapes of the interface: zone-less `YYYY-MM-DD HH:MM:SS` in the site time
 * zone (most resources) and ISO 8601 UTC `YYYY-MM-DDTHH:MM:SSZ` (funnels, webhooks).
 * Formatting is hand-rolled because Intl per value is too slow for 1000-row pages.
 */
const offsetCache = new Map<string, number>();

function pad(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

function utcParts(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** Offset of `timeZone` from UTC in minutes at instant `ms` (cached per zone and hour). */
export function zoneOffsetMinutes(ms: number, timeZone: string): number {
  if (timeZone === 'UTC' || timeZone === 'Etc/UTC') return 0;
  const key = `${timeZone}|${Math.floor(ms / 3_600_000)}`;
  const cached = offsetCache.get(key);
  if (cached !== undefined) return cached;
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(ms));
  const get = (t: string): number => Number(parts.find((p) => p.type === t)?.value ?? 0);
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  const offset = Math.round((asUtc - Math.floor(ms / 1000) * 1000) / 60_000);
  if (offsetCache.size > 10_000) offsetCache.clear();
  offsetCache.set(key, offset);
  return offset;
}

/** `YYYY-MM-DD HH:MM:SS` in the site time zone, with no offset, as the service writes it. */
export function formatLocal(ms: number, timeZone: string): string {
  return utcParts(ms + zoneOffsetMinutes(ms, timeZone) * 60_000);
}

/** `YYYY-MM-DDTHH:MM:SSZ`. */
export function formatIsoZ(ms: number): string {
  return `${utcParts(ms).replace(' ', 'T')}Z`;
}

/** `YYYY-MM-DD` in the site time zone. */
export function formatDate(ms: number, timeZone: string): string {
  return formatLocal(ms, timeZone).slice(0, 10);
}

/** Parses a zone-less site-local timestamp or an ISO string; NaN when invalid. */
export function parseTimestamp(value: string, timeZone: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(value.trim());
  if (!m) return Date.parse(value);
  const asUtc = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0));
  return asUtc - zoneOffsetMinutes(asUtc, timeZone) * 60_000;
}
