import type { Difference } from './difference.js';

/**
 * Tag or list memberships: the CRM's (from each contact it lists) against the rows of
 * `contact_tags` / `contact_lists`. Memberships of contacts the CRM no longer has are extra
 * (a deleted contact keeps none). Contacts in `reported` (missing from the warehouse, or live
 * there but deleted in the CRM) are skipped: the contact-level difference covers them.
 */
export function membershipDifferences(
  kind: 'tag' | 'list',
  crm: ReadonlyMap<number, readonly number[]>,
  warehouse: ReadonlyArray<readonly [number, number]>,
  reported: ReadonlySet<number>,
): Difference[] {
  const held = new Map<number, Set<number>>();
  for (const [contact, ref] of warehouse) {
    let s = held.get(contact);
    if (!s) held.set(contact, (s = new Set()));
    s.add(ref);
  }
  const out: Difference[] = [];
  const table = kind === 'tag' ? 'contact_tags' : 'contact_lists';
  const diff = (d: 'missing' | 'extra', contact: number, ref: number): Difference => ({
    stream: 'contacts',
    kind: d === 'missing' ? 'missing_membership' : 'extra_membership',
    id: String(contact),
    field: `${kind} ${ref}`,
    detail: d === 'missing' ? `contact ${contact} is in ${kind} ${ref} in the CRM but not in ${table}` : `contact ${contact} is in ${kind} ${ref} in ${table} but not in the CRM`,
  });
  for (const [contact, refs] of crm) {
    if (reported.has(contact)) continue;
    const have = held.get(contact);
    for (const ref of refs) if (!have?.has(ref)) out.push(diff('missing', contact, ref));
    if (have) for (const ref of [...have].sort((a, b) => a - b)) if (!refs.includes(ref)) out.push(diff('extra', contact, ref));
  }
  for (const [contact, have] of held) {
    if (crm.has(contact) || reported.has(contact)) continue;
    for (const ref of [...have].sort((a, b) => a - b)) out.push(diff('extra', contact, ref));
  }
  return out;
}
