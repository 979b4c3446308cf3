import { describe, expect, it } from 'vitest';
import { pagesFor, planPageRanges, rangeSizeFor } from '../../workflows/page-ranges.js';
import { chooseContactsMode } from '../../src/sync/choose-contacts-mode.js';
import { ContactsState } from '../../src/sync/contacts-state.js';
import { parseDuration } from '../../src/sync/parse-duration.js';
import { resolveStreams } from '../../src/sync/streams.js';

describe('planPageRanges', () => {
  it('covers every page not done exactly once, in ranges of at most the given size', () => {
    const done = [2, 3, 9];
    const ranges = planPageRanges(12, done, 3);
    const pages = ranges.flatMap((r) => Array.from({ length: r.toPage - r.fromPage + 1 }, (_, i) => r.fromPage + i));
    expect(pages).toEqual([1, 4, 5, 6, 7, 8, 10, 11, 12]);
    expect(ranges.every((r) => r.toPage - r.fromPage < 3)).toBe(true);
    expect(planPageRanges(0, [], 5)).toEqual([]);
    expect(() => planPageRanges(3, [], 0)).toThrow(RangeError);
  });

  it('sizes ranges to give each parallel slot several, within the cap', () => {
    expect(rangeSizeFor(1000, 4, 20)).toBe(20);
    expect(rangeSizeFor(40, 4, 20)).toBe(3);
    expect(rangeSizeFor(1, 4, 20)).toBe(1);
    expect(pagesFor(101, 50)).toBe(3);
    expect(pagesFor(0, 50)).toBe(0);
  });
});

describe('chooseContactsMode', () => {
  const base = ContactsState.parse({});
  const opts = { full: false, reconcile: 'auto' as const, reconcileEveryMs: 1000, nowMs: 10_000 };
  it('backfills first, resumes an unfinished scan, then runs incremental with sweeps on cadence or need', () => {
    expect(chooseContactsMode(base, opts).mode).toBe('backfill');
    const done = { ...base, backfillDone: true, lastReconcileAtMs: 9_500 };
    expect(chooseContactsMode(done, opts)).toMatchObject({ mode: 'incremental', reconcileDue: false });
    expect(chooseContactsMode({ ...done, lastReconcileAtMs: 8_000 }, opts).reconcileDue).toBe(true);
    expect(chooseContactsMode({ ...done, needsReconcile: true }, opts).reconcileDue).toBe(true);
    expect(chooseContactsMode({ ...done, needsReconcile: true }, { ...opts, reconcile: 'never' }).reconcileDue).toBe(false);
    expect(chooseContactsMode(done, { ...opts, full: true }).mode).toBe('backfill');
    const scan = { scanKey: 'k', mode: 'reconcile' as const, perPage: 5, total: 1, lastPage: 1, maxIdAtStart: 1, crmTotalAtStart: 1, crmMaxIdAtStart: 1, startedAtMs: 1 };
    expect(chooseContactsMode({ ...done, activeScan: scan }, { ...opts, full: true })).toMatchObject({ mode: 'reconcile', resumeScan: true });
  });
});

describe('options', () => {
  it('parses durations and names the fix for bad ones', () => {
    expect(parseDuration('15m', '--every')).toBe(900_000);
    expect(parseDuration('1h30m', '--every')).toBe(5_400_000);
    expect(() => parseDuration('15', '--every')).toThrow(/--every "15" is not a duration; use/);
    expect(() => parseDuration('0m', '--every')).toThrow(/--every "0m" is zero; give a positive duration/);
  });
  it('validates stream names', () => {
    expect(resolveStreams(undefined)).toContain('funnel_subscribers');
    expect(resolveStreams(['tags', 'contacts', 'tags'])).toEqual(['contacts', 'tags']);
    expect(() => resolveStreams(['contact'])).toThrow(/Unknown stream "contact"; use one of: contacts/);
  });
});
