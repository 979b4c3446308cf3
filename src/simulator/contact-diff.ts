import type { ContactRec } from './model.js';

const UNSEEN: ReadonlySet<keyof ContactRec> = new Set(['updatedAt', 'stats']);
// fluentcrm-2.9 keeps tags and lists in a pivot table, outside the subscriber row.
const OUTSIDE_ROW: ReadonlySet<keyof ContactRec> = new Set([...UNSEEN, 'tags', 'lists']);

/** Whether a write changed anything a reader can see (updated_at and stats aside). */
export function sameContact(a: ContactRec, b: ContactRec): boolean {
  return sameExcept(a, b, UNSEEN);
}

/** Whether the subscriber row's own columns are unchanged, whatever happened to tags and lists. */
export function sameRow(a: ContactRec, b: ContactRec): boolean {
  return sameExcept(a, b, OUTSIDE_ROW);
}

function sameExcept(a: ContactRec, b: ContactRec, skip: ReadonlySet<keyof ContactRec>): boolean {
  for (const k of Object.keys(a) as (keyof ContactRec)[]) {
    if (skip.has(k)) continue;
    const x = a[k];
    const y = b[k];
    if (typeof x === 'object' && x !== null) {
      if (JSON.stringify(x) !== JSON.stringify(y)) return false;
    } else if (x !== y) return false;
  }
  return true;
}

/** `data.contact` of contact events: id, email, first_name, last_name, status, created_at (spec). */
export function contactEventData(c: ContactRec, state: { formatLocal(ms: number): string }): Record<string, unknown> {
  return {
    id: c.id,
    email: c.email,
    first_name: c.firstName,
    last_name: c.lastName,
    status: c.status,
    created_at: state.formatLocal(c.createdAt),
  };
}
