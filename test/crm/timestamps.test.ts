import { describe, expect, it } from 'vitest';
import { createTimestampNormalizer, formatSiteTime, parseRetryAfter } from '../../src/crm/index.js';

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
