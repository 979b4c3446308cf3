/**
 * Timestamp normalization. The CRM sends `YYYY-MM-DD HH:MM:SS` without a zone (site time) for most
 * resources and ISO 8601 UTC for funnels and webhooks; consumers get ISO 8601 UTC with `Z`.
 */
import { formatIsoUtc } from './iso-utc.js';
import { wallClockFormatter } from './site-time.js';

export type TimestampNormalizer = (value: unknown) => string | null;

const ZONELESS = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?$/;
const ZONED = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** Builds a normalizer that reads zone-less timestamps in `timeZone` (an IANA name). */
const PLAIN = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01]) ([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/;

export function createTimestampNormalizer(timeZone: string = 'UTC'): TimestampNormalizer {
  const utc = timeZone === 'UTC' || timeZone === 'Etc/UTC';
  const offsetOf = utc ? () => 0 : createOffsetLookup(timeZone);
  return (value) => {
    if (typeof value !== 'string') return null;
    // The common shape, without regex groups or Intl: this runs twice per contact row.
    if (PLAIN.test(value)) {
      const d = digits2(value, 8);
      // Impossible days (2026-02-30) go to the general path, which rejects them.
      if (d <= 28 || d <= daysInMonth(digits2(value, 0) * 100 + digits2(value, 2), digits2(value, 5))) {
        if (utc) return `${value.slice(0, 10)}T${value.slice(11)}.000Z`;
        const wall = Date.UTC(digits2(value, 0) * 100 + digits2(value, 2), digits2(value, 5) - 1, d, digits2(value, 11), digits2(value, 14), digits2(value, 17));
        return formatIsoUtc(instantOfWall(wall, offsetOf));
      }
    }
    return readGeneral(value, offsetOf);
  };
}

/**
 * Every other shape: zone-less with a T, a fraction or no time; zoned ISO 8601; days 29-31. Kept
 * out of the closure above: one function holding both paths ran the common one slower
 * (bench/results/notes.md, "timestamps").
 */
function readGeneral(value: string, offsetOf: (utcMs: number) => number): string | null {
  const s = value.trim();
  if (s === '' || s.startsWith('0000-00-00')) return null;
  const m = ZONELESS.exec(s);
  if (m) {
    const [, y, mo, d, h = '0', mi = '0', sec = '0', frac = '0'] = m;
    const wall = Date.UTC(+y!, +mo! - 1, +d!, +h, +mi, +sec, Math.round(Number(`0.${frac}`) * 1000));
    // Date.UTC rolls 2026-02-30 over to March: such a value is not a date.
    if (!Number.isFinite(wall) || new Date(wall).getUTCDate() !== +d! || new Date(wall).getUTCMonth() !== +mo! - 1 || +h > 23 || +mi > 59 || +sec > 59) return null;
    return new Date(instantOfWall(wall, offsetOf)).toISOString();
  }
  if (ZONED.test(s)) {
    const t = Date.parse(s.replace(' ', 'T'));
    return Number.isFinite(t) ? new Date(t).toISOString() : null;
  }
  return null;
}

const DAY_MS = 86_400_000;

/**
 * The instant (epoch ms) of a zone-less wall time (its digits as epoch ms), read as the CRM's PHP
 * reads it: the zone's offsets a day before and a day after bracket any change near it; in an hour
 * the clocks repeat, the earlier instant (daylight time); in an hour they skip, the time moved
 * forward by the skip (02:30 on New York's spring-forward night is 03:30 daylight time). The
 * warehouse's SQL reads wall times by the same rule (wallInZoneSql in src/warehouse/sql-expr.ts).
 */
export function instantOfWall(wall: number, offsetOf: (utcMs: number) => number): number {
  const before = offsetOf(wall - DAY_MS);
  const after = offsetOf(wall + DAY_MS);
  const withBefore = wall - before;
  if (before === after) return withBefore;
  const withAfter = wall - after;
  const beforeFits = offsetOf(withBefore) === before;
  const afterFits = offsetOf(withAfter) === after;
  if (beforeFits && afterFits) return Math.min(withBefore, withAfter);
  if (beforeFits) return withBefore;
  if (afterFits) return withAfter;
  // Skipped: wall minus the offset before the change, the later of the two.
  return Math.max(withBefore, withAfter);
}

function daysInMonth(y: number, mo: number): number {
  if (mo === 2) return y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28;
  return mo === 4 || mo === 6 || mo === 9 || mo === 11 ? 30 : 31;
}

/** The two-digit number at `i` (the caller has checked the digits). */
function digits2(s: string, i: number): number {
  return (s.charCodeAt(i) - 48) * 10 + s.charCodeAt(i + 1) - 48;
}

/** Offset (ms, wall minus UTC) of `timeZone` at a UTC instant, cached per hour. */
function createOffsetLookup(timeZone: string): (utcMs: number) => number {
  const fmt = wallClockFormatter(timeZone);
  const cache = new Map<number, number>();
  return (utcMs) => {
    const bucket = Math.floor(utcMs / 900_000); // 15-minute buckets: some zones have 15/30/45-minute offsets
    const hit = cache.get(bucket);
    if (hit !== undefined) return hit;
    const at = bucket * 900_000;
    const p: Record<string, number> = {};
    for (const part of fmt.formatToParts(new Date(at))) if (part.type !== 'literal') p[part.type] = Number(part.value);
    const wall = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
    const offset = wall - at;
    if (cache.size > 10_000) cache.clear();
    cache.set(bucket, offset);
    return offset;
  };
}
