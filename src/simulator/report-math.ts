import type { SimState } from './state.js';

const DAY = 86_400_000;

export const DATE_RANGES = ['today', 'yesterday', '7_days', '30_days', '90_days', '12_months', 'custom'] as const;

/**
 * Number of live contacts created before `ms`. Contacts are created in id order, so createdAt is
 * non-decreasing along the id index and a binary search answers in O(log n) even at 1M contacts.
 */
export function contactsCreatedBefore(state: SimState, ms: number): number {
  const store = state.contacts;
  let lo = 0;
  let hi = store.size;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = state.contacts.get(store.idAt(mid));
    if (c && c.createdAt < ms) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function startOfDay(ms: number): number {
  return Math.floor(ms / DAY) * DAY;
}

/** [start, end) of a named range ending now, and the period before it of equal length. */
export function rangeBounds(range: string, now: number, custom?: { start: number; end: number }): { start: number; end: number } {
  const today = startOfDay(now);
  switch (range) {
    case 'today':
      return { start: today, end: now + 1 };
    case 'yesterday':
      return { start: today - DAY, end: today };
    case '7_days':
      return { start: today - 6 * DAY, end: now + 1 };
    case '90_days':
      return { start: today - 89 * DAY, end: now + 1 };
    case '12_months':
      return { start: today - 364 * DAY, end: now + 1 };
    case 'custom':
      return custom ?? { start: today - 29 * DAY, end: now + 1 };
    default:
      return { start: today - 29 * DAY, end: now + 1 };
  }
}

export function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
