import pLimit from 'p-limit';
import type { Contact, Page, RawPage, RowRef, Tag } from '../src/crm/types.js';
import { createContactLoadBatch } from '../src/sync/contact-load-batch.js';
import { rawPageBodies } from '../src/sync/raw-page-bodies.js';
import { liveContactCount } from '../src/warehouse/scan-tables.js';
import { heldMembers, membershipCounts, type MembershipCount } from '../src/warehouse/membership-counts.js';
import type { LoadStats } from '../src/warehouse/types.js';
import { activityClient, startHeartbeats, type SyncActivityDeps } from './sync-deps.js';

export interface MembershipRepairResult extends LoadStats {
  /** Tags and lists compared, and those whose CRM count differed from the warehouse's. */
  checked: number;
  differing: string[];
  /** Members re-read through the `tags[]=` / `lists[]=` filters, and held members confirmed one by one. */
  rows: number;
  confirmed: number;
  requests: number;
  /**
   * The members to re-read outnumber the contacts held: nothing was re-read, and the run sweeps
   * instead (a sweep reads each contact once, in parallel ranges; this would read more).
   */
  sweepInstead: boolean;
  /** Rows of raw pages that did not fit the contact schema, kept in `_contact_rejects` (absent in results before it). */
  rejected?: number;
}

const MAX_PAGES = 100_000;
/** Member pages requested at once while re-reading one tag or list. */
const PAGES_AT_ONCE = 4;

/**
 * Whether a CRM count disagrees with the warehouse's. `subscribersCount` counts subscribed members
 * only; lists (and tags in the written interface) also carry `totalCount` of every status.
 */
function differs(item: Pick<Tag, 'total_count' | 'subscribers_count'>, held: MembershipCount | undefined): boolean {
  const h = held ?? { total: 0, subscribed: 0 };
  if (item.total_count !== null && item.total_count !== h.total) return true;
  return item.subscribers_count !== null && item.subscribers_count !== h.subscribed;
}

export function createMembershipActivities(deps: SyncActivityDeps) {
  const { writes } = deps;
  const now = deps.now ?? Date.now;

  return {
    /**
     * Membership repair: tag and list changes leave `updated_at` alone, so compare per-tag and
     * per-list counts from the CRM's listings with the warehouse's; re-read the members of each
     * that differs and confirm the held members the re-read did not return (they lost it, or are
     * gone: tombstoned).
     */
    async repairMemberships(input: { perPage: number; loadId: string }): Promise<MembershipRepairResult> {
      const client = activityClient(deps.client);
      const raw = (deps.contactPages ?? 'raw') === 'raw';
      const fetchMemberPage =
        (kind: 'tags' | 'lists', id: number) =>
        (page: number, perPage: number): Promise<Page<Contact> | RawPage> => {
          const q = { page, perPage, order: 'asc' as const, orderBy: 'id' as const, customFields: true, ...(kind === 'tags' ? { tags: [id] } : { lists: [id] }) };
          return raw ? client.contacts.listPageRaw(q) : client.contacts.listPage(q);
        };
      const result: MembershipRepairResult = { checked: 0, differing: [], rows: 0, confirmed: 0, requests: 2, sweepInstead: false, inserted: 0, updated: 0, unchanged: 0, deleted: 0 };
      const [tags, lists] = await Promise.all([client.tags.list(), client.lists.list()]);
      const held = await writes.run(async (w) => ({ tags: await membershipCounts(w, 'tags'), lists: await membershipCounts(w, 'lists'), live: await liveContactCount(w) }));
      const todo: { kind: 'tags' | 'lists'; id: number; members: number; deletedInCrm?: true }[] = [];
      let toRead = 0;
      let toConfirm = 0;
      for (const [kind, items] of [
        ['tags', tags],
        ['lists', lists],
      ] as const) {
        for (const item of items) {
          result.checked++;
          const h = held[kind].get(item.id);
          if (!differs(item, h)) continue;
          const members = Math.max(item.total_count ?? 0, item.subscribers_count ?? 0, h?.total ?? 0);
          todo.push({ kind, id: item.id, members });
          toRead += members;
        }
        // Held members of a tag or list the CRM no longer lists: deleting it took it off every
        // contact without moving their updated_at. Each held member is read again by id.
        const listed = new Set(items.map((i) => i.id));
        for (const [id, h] of held[kind]) {
          if (listed.has(id)) continue;
          result.checked++;
          todo.push({ kind, id, members: h.total, deletedInCrm: true });
          toConfirm += h.total;
        }
      }
      // Requests: member pages and reads by id, against a sweep's pages of every contact.
      if (toRead + toConfirm * input.perPage > held.live) {
        result.sweepInstead = true;
        result.differing = todo.map(({ kind, id }) => `${kind === 'tags' ? 'tag' : 'list'} ${id}`);
        return result;
      }
      const ctx = () => ({ loadId: input.loadId, syncedAt: new Date(now()) });
      const add = (s: LoadStats & { rejected?: number }): void => {
        result.inserted += s.inserted;
        result.updated += s.updated;
        result.unchanged += s.unchanged;
        result.deleted += s.deleted;
        if (s.rejected) result.rejected = (result.rejected ?? 0) + s.rejected;
      };
      const hb = startHeartbeats(() => ({ differing: todo.length, rows: result.rows }));
      try {
        for (const { kind, id, members, deletedInCrm } of todo) {
          result.differing.push(`${kind === 'tags' ? 'tag' : 'list'} ${id}${deletedInCrm ? ' (deleted)' : ''}`);
          const seen = new Set<number>();
          const batch = createContactLoadBatch(writes, ctx);
          const fetchPage = fetchMemberPage(kind, id);
          const counted = (page: number, perPage: number) => {
            result.requests++;
            return fetchPage(page, perPage);
          };
          // Several pages at once (the client's limiter caps them), but no more than the counts say
          // there are: the first ones go out before page 1 tells the page count.
          const concurrency = Math.max(1, Math.min(PAGES_AT_ONCE, Math.ceil(members / input.perPage)));
          // Loads go one after another.
          let pageNo = 0;
          // A deleted tag or list has no members to list: its held members are all confirmed below.
          if (!deletedInCrm) {
            for await (const p of client.paginate<Contact | RowRef, Page<Contact> | RawPage>(counted, { perPage: input.perPage, order: 'asc', concurrency, maxPages: MAX_PAGES })) {
              hb.throwIfCancelled();
              pageNo++;
              for (const c of p.items) if (c.id !== undefined) seen.add(c.id);
              // Raw: DuckDB parses the members' rows; parsed, the JavaScript path loads the same rows.
              if ('body' in p) await batch.addPages(rawPageBodies(p, pageNo), p.items.length);
              else await batch.add(p.items);
              result.rows += p.items.length;
              hb.beat();
            }
          }
          add(await batch.flush());
          // Held as members but not returned: re-read each (it lost the membership) or tombstone it (gone).
          const stale = (await writes.run((w) => heldMembers(w, kind, id))).filter((c) => !seen.has(c));
          const found: Contact[] = [];
          const gone: number[] = [];
          const limit = pLimit(deps.confirmConcurrency ?? 4);
          await Promise.all(
            stale.map((cid) =>
              limit(async () => {
                const c = await client.contacts.get(cid, { with: ['subscriber.custom_values'] });
                result.requests++;
                result.confirmed++;
                if (c) found.push(c);
                else gone.push(cid);
              }),
            ),
          );
          await writes.run(async (w) => {
            if (found.length > 0) add(await w.loadContacts(found, ctx()));
            if (gone.length > 0) result.deleted += await w.tombstoneContacts(gone, ctx());
          });
        }
      } finally {
        hb.stop();
      }
      return result;
    },
  };
}
