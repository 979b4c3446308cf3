import { readLiveContacts, readMemberships, readTombstonedContactIds } from '../warehouse/verify-reads.js';
import { contactDifferences } from './contact-differences.js';
import type { Difference } from './difference.js';
import { membershipDifferences } from './membership-differences.js';
import { CONTACTS_PER_PAGE, type VerifyDeps } from './verify-deps.js';

/** Past this many contacts missing from the listing, they are reported without a read each. */
const MAX_CONFIRMED = 1_000;

/**
 * Contacts: every CRM contact (with custom values, `custom_fields=true`) against the live
 * warehouse rows: presence both ways, every typed column, custom values, and the tag and list
 * memberships of `contact_tags` and `contact_lists`.
 */
export async function verifyContacts(deps: VerifyDeps): Promise<Difference[]> {
  const { client } = deps;
  const perPage = deps.perPage ?? CONTACTS_PER_PAGE;
  const [rows, tombstoned, tagRows, listRows] = await deps.read(
    async (w) => [await readLiveContacts(w), new Set(await readTombstonedContactIds(w)), await readMemberships(w, 'tags'), await readMemberships(w, 'lists')] as const,
  );
  const held = new Map(rows.map((r) => [Number(r.id), r]));
  const crmTags = new Map<number, number[]>();
  const crmLists = new Map<number, number[]>();
  const reported = new Set<number>();
  const diffs: Difference[] = [];
  let rowsRead = 0;
  const pages = client.paginate((page, size) => client.contacts.listPage({ page, perPage: size, order: 'asc', orderBy: 'id', customFields: true }), {
    perPage,
    order: 'asc',
    concurrency: deps.concurrency ?? 2,
  });
  // What the CRM says each contact belongs to, compared with the membership tables afterwards.
  const remember = (c: { id: number; tags: { id: number }[]; lists: { id: number }[] }): void => {
    crmTags.set(
      c.id,
      c.tags.map((t) => t.id),
    );
    crmLists.set(
      c.id,
      c.lists.map((l) => l.id),
    );
  };
  for await (const p of pages) {
    for (const c of p.items) {
      if (crmTags.has(c.id)) continue; // seen on an earlier page (rows shifted during the scan)
      remember(c);
      const row = held.get(c.id);
      if (!row) {
        reported.add(c.id);
        const why = tombstoned.has(c.id) ? 'tombstoned in the warehouse' : 'not in the warehouse';
        diffs.push({ stream: 'contacts', kind: 'missing_in_warehouse', id: String(c.id), detail: `contact ${c.id} (${c.email}) is in the CRM but ${why}` });
        continue;
      }
      diffs.push(...contactDifferences(c, row));
    }
    rowsRead += p.items.length;
    deps.onProgress?.({ stream: 'contacts', pagesDone: p.currentPage, pagesTotal: p.lastPage, rows: rowsRead });
  }
  // A contact the listing did not show may have slid across a page boundary while rows were
  // deleted during the scan: each is confirmed by a single read before it is called deleted.
  const unseen = [...held.keys()].filter((id) => !crmTags.has(id));
  const confirm = unseen.length <= MAX_CONFIRMED;
  for (const id of unseen) {
    const row = held.get(id)!;
    const c = confirm ? await client.contacts.get(id, { with: ['subscriber.custom_values'] }) : null;
    if (c) {
      remember(c);
      diffs.push(...contactDifferences(c, row));
      continue;
    }
    reported.add(id);
    diffs.push({ stream: 'contacts', kind: 'deleted_in_crm', id: String(id), detail: `contact ${id} (${String(row.email ?? '')}) is live in the warehouse but no longer in the CRM` });
  }
  diffs.push(...membershipDifferences('tag', crmTags, tagRows, reported));
  diffs.push(...membershipDifferences('list', crmLists, listRows, reported));
  return diffs;
}
