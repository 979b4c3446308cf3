import { describe, expect, it } from 'vitest';
import { createTimestampNormalizer, formatSiteTime, parseRetryAfter } from '../../src/crm/index.js';
import { formatIsoUtc } from '../../src/crm/iso-utc.js';
import { DST_WALLS } from '../helpers/dst-walls.js';

describe('timestamps', () => {
  it('reads zone-less times in the site zone and outputs ISO 8601 UTC', () => {
    const utc = createTimestampNormalizer('UTC');
    expect(utc('2026-11-21 04:55:36')).toBe('2026-11-21T04:55:36.000Z');
    expect(utc('2026-01-31 23:59:59')).toBe('2026-01-31T23:59:59.000Z');
    expect(utc('2026-11-21T04:55:36Z')).toBe('2026-11-21T04:55:36.000Z');
    expect(utc('2026-11-21T06:55:36+02:00')).toBe('2026-11-21T04:55:36.000Z');
    expect(utc('2026-11-21')).toBe('2026-11-21T00:00:00.000Z');
    const berlin = createTimestampNormalizer('Europe/Berlin');
    expect(berlin('2026-11-21 04:55:36')).toBe('2026-11-21T03:55:36.000Z'); // CET, UTC+1
    expect(berlin('2026-07-01 12:00:00')).toBe('2026-07-01T10:00:00.000Z'); // CEST, UTC+2
    expect(berlin('2026-07-01T12:00:00Z')).toBe('2026-07-01T12:00:00.000Z'); // zoned values keep their zone
    const kolkata = createTimestampNormalizer('Asia/Kolkata');
    expect(kolkata('2026-01-01 05:30:00')).toBe('2026-01-01T00:00:00.000Z');
    const ny = createTimestampNormalizer('America/New_York');
    expect(ny('2026-03-08 03:30:00')).toBe('2026-03-08T07:30:00.000Z'); // just after the spring-forward gap
  });

  it('reads a repeated hour as its earlier instant and a skipped one moved forward, as PHP does', () => {
    for (const [zone, wall, instant] of DST_WALLS) {
      const ts = createTimestampNormalizer(zone);
      expect(ts(wall), `${zone} ${wall}`).toBe(instant);
      expect(ts(wall.replace(' ', 'T')), `${zone} ${wall} (general path)`).toBe(instant);
    }
  });

  it('gives null for missing, zero and impossible dates', () => {
    const utc = createTimestampNormalizer('UTC');
    for (const v of [null, undefined, '', '0000-00-00 00:00:00', 'yesterday', 12345, '2026-02-30 10:00:00', '2026-13-01 00:00:00', '2026-04-31 00:00:00']) {
      expect(utc(v), String(v)).toBeNull();
    }
    expect(createTimestampNormalizer('Europe/Berlin')('2026-02-30 10:00:00')).toBeNull();
  });

  it('formats site time for writes', () => {
    expect(formatSiteTime(Date.UTC(2026, 10, 21, 4, 55, 36), 'UTC')).toBe('2026-11-21 04:55:36');
    expect(formatSiteTime(Date.UTC(2026, 10, 21, 23, 30, 0), 'Europe/Berlin')).toBe('2026-11-22 00:30:00');
  });
});

describe('the fast path for YYYY-MM-DD HH:MM:SS', () => {
  // A space-separated value takes the fast path; the same value with a "T" (or a fraction) takes the
  // general one (regex groups, toISOString). Both must agree in every zone, at DST edges and month ends.
  const zones = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'Pacific/Chatham', 'America/St_Johns'];
  const walls: string[] = [];
  const pad = (n: number) => String(n).padStart(2, '0');
  for (let m = 0; m < 24 * 60 * 60 * 4; m += 37 * 60 + 13) {
    // Four days around each of the 2026 DST changes of the zones above, and some month ends.
    for (const day of [Date.UTC(2026, 2, 7), Date.UTC(2026, 2, 27), Date.UTC(2026, 3, 3), Date.UTC(2026, 8, 25), Date.UTC(2026, 9, 24), Date.UTC(2026, 10, 0), Date.UTC(2024, 1, 27)]) {
      const d = new Date(day + m * 1000);
      walls.push(`${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`);
    }
  }
  walls.push('1000-01-01 00:00:00', '9999-12-28 23:59:59', '1969-12-31 23:59:59', '1970-01-01 00:00:00', '2026-02-28 23:59:59', '2026-02-29 00:00:00', '2024-02-29 12:00:00', '2026-04-31 00:00:00');

  it.each(zones)('agrees with the general path in %s', (zone) => {
    const ts = createTimestampNormalizer(zone);
    for (const w of walls) {
      const general = ts(w.replace(' ', 'T'));
      expect(ts(w), w).toBe(general);
      expect(ts(`${w}.0`), w).toBe(general);
    }
  });

  it('formatIsoUtc matches toISOString', () => {
    const edges = [0, -1, 1, 86_399_999, -62_135_596_800_000, 253_402_300_799_999, 951_782_400_000, 4_107_542_400_000, -30_610_224_000_000, 253_402_300_800_000, -8.64e15, 8.64e15];
    let x = 12345;
    for (let i = 0; i < 20_000; i++) {
      x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
      edges.push(Math.round((x / 2 ** 31 - 0.5) * 2 * 2.6e14) + (i % 1000));
    }
    for (const ms of edges) expect(formatIsoUtc(ms), String(ms)).toBe(new Date(ms).toISOString());
    expect(() => formatIsoUtc(NaN)).toThrow(RangeError);
  });
});

describe('Retry-After', () => {
  it('reads delta-seconds and HTTP-dates, clamps, and ignores junk', () => {
    const now = Date.UTC(2026, 10, 21, 6, 0, 0);
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter('0.5', now)).toBe(500);
    expect(parseRetryAfter(['3'], now)).toBe(3000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 06:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 05:59:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('99999999', now)).toBe(15 * 60_000);
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
  });
});
