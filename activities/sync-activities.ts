import { createContactActivities } from './sync-contacts.js';
import type { SyncActivityDeps } from './sync-deps.js';
import { createNewContactActivities } from './sync-new-contacts.js';
import { createContactSliceActivities } from './sync-contact-slice.js';
import { createFreshContactActivities } from './sync-fresh-contacts.js';
import { createMembershipActivities } from './sync-memberships.js';
import { createUpdatedContactActivities } from './sync-updated-contacts.js';
import { createEntityActivities } from './sync-entities.js';
import { createFunnelActivities } from './sync-funnels.js';
import { createReportActivities } from './sync-reports.js';
import { createRunActivities } from './sync-runs.js';
import { createSmallStreamActivities } from './sync-small-stream.js';
import { createContactsStartActivities } from './sync-contacts-start.js';
import { withFailureClassification } from './to-application-failure.js';

/**
 * Every sync activity, for the warehouse task queue (they fetch and load, so they run where the
 * single DuckDB writer lives). Errors are classified once, here.
 */
export function createSyncActivities(deps: SyncActivityDeps) {
  return withFailureClassification({
    ...createContactActivities(deps),
    ...createNewContactActivities(deps),
    ...createUpdatedContactActivities(deps),
    ...createMembershipActivities(deps),
    ...createContactSliceActivities(deps),
    ...createFreshContactActivities(deps),
    ...createEntityActivities(deps),
    ...createFunnelActivities(deps),
    ...createReportActivities(deps),
    ...createRunActivities(deps),
    ...createSmallStreamActivities(deps),
    ...createContactsStartActivities(deps),
  });
}

export type SyncActivities = ReturnType<typeof createSyncActivities>;
export type { SyncActivityDeps };
