import { createContactSliceActivities, type SliceResult } from './sync-contact-slice.js';
import type { SyncActivityDeps } from './sync-deps.js';
import { createMembershipActivities, type MembershipRepairResult } from './sync-memberships.js';
import { createUpdatedContactActivities, type UpdatedScanResult } from './sync-updated-contacts.js';

export interface FreshContactsInput {
  perPage: number;
  loadId: string;
  overlapMs: number;
  reprobeAfterMs: number;
  sweepRuns: number;
}

export interface FreshContactsResult {
  updated: UpdatedScanResult;
  members: MembershipRepairResult;
  /** Absent when membership repair asks for a sweep instead (the slice would re-read what it reads). */
  slice?: SliceResult;
}

export function createFreshContactActivities(deps: SyncActivityDeps) {
  const { scanUpdatedContacts } = createUpdatedContactActivities(deps);
  const { repairMemberships } = createMembershipActivities(deps);
  const { sweepContactSlice } = createContactSliceActivities(deps);

  return {
    /**
     * The three freshness checks of an incremental contacts run in one activity: one workflow
     * round trip instead of three, most of a sync with nothing to do. Strictly one after
     * another, never at once: two loads of one contact in flight together could let the older
     * read land last, and each flip would add a contacts_history row.
     */
    async refreshContacts(input: FreshContactsInput): Promise<FreshContactsResult> {
      const updated = await scanUpdatedContacts({ perPage: input.perPage, loadId: input.loadId, overlapMs: input.overlapMs, reprobeAfterMs: input.reprobeAfterMs });
      const members = await repairMemberships({ perPage: input.perPage, loadId: input.loadId });
      if (members.sweepInstead) return { updated, members };
      const slice = await sweepContactSlice({ perPage: input.perPage, loadId: input.loadId, sweepRuns: input.sweepRuns });
      return { updated, members, slice };
    },
  };
}
