import type { Contact } from '../crm/types.js';

/** Milliseconds of a contact's `updated_at`, NaN when it has none. */
export function updatedMs(c: Pick<Contact, 'updated_at'>): number {
  return c.updated_at === null ? Number.NaN : Date.parse(c.updated_at);
}

/** Whether the rows come newest-updated first (equal seconds allowed: the real CRM has no tie-breaker). */
export function isNewestUpdatedFirst(rows: readonly Pick<Contact, 'updated_at'>[], afterMs = Number.POSITIVE_INFINITY): boolean {
  let prev = afterMs;
  for (const r of rows) {
    const t = updatedMs(r);
    if (Number.isNaN(t) || t > prev) return false;
    prev = t;
  }
  return true;
}

/**
 * The probe's verdict on `sort_by=updated_at`: the descending page must be non-increasing, the
 * ascending one non-decreasing, and their first rows must differ. A CRM that ignores the
 * parameter returns one order for both (its first rows are equal), which also rules out a table
 * that merely happens to be in updated order by id. Too few rows to tell counts as no.
 */
export function updatedOrderVerdict(desc: readonly Pick<Contact, 'updated_at'>[], asc: readonly Pick<Contact, 'updated_at'>[]): boolean {
  if (desc.length === 0 || asc.length === 0) return false;
  if (!isNewestUpdatedFirst(desc)) return false;
  if (!isNewestUpdatedFirst([...asc].reverse())) return false;
  return updatedMs(desc[0]!) > updatedMs(asc[0]!);
}
