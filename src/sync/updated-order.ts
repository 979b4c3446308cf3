/** A row's normalized `updated_at`: a parsed contact's, or a raw page's as its scan read it. */
export interface UpdatedRow {
  updated_at?: string | null;
}

/** Milliseconds of a contact's `updated_at`, NaN when it has none. */
export function updatedMs(c: UpdatedRow): number {
  return c.updated_at === null || c.updated_at === undefined ? Number.NaN : Date.parse(c.updated_at);
}

/** Whether the rows come newest-updated first (equal seconds allowed: the real CRM has no tie-breaker). */
export function isNewestUpdatedFirst(rows: readonly UpdatedRow[], afterMs = Number.POSITIVE_INFINITY): boolean {
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
export function updatedOrderVerdict(desc: readonly UpdatedRow[], asc: readonly UpdatedRow[]): boolean {
  if (desc.length === 0 || asc.length === 0) return false;
  if (!isNewestUpdatedFirst(desc)) return false;
  if (!isNewestUpdatedFirst([...asc].reverse())) return false;
  return updatedMs(desc[0]!) > updatedMs(asc[0]!);
}
