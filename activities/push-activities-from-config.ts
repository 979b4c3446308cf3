import type { Config } from '../src/config.js';
import { crmClientFromConfig, type CrmClient } from '../src/crm/index.js';
import type { Logger } from '../src/logger.js';
import { pushCrmFromClient } from '../src/push/push-crm-from-client.js';
import type { PushCrm } from '../src/push/push-crm.js';
import { withWarehouse } from '../src/warehouse/index.js';
import type { PushActivities } from '../workflows/push-types.js';
import { createPushActivities } from './push-activities.js';

/**
 * Push activities as a worker builds them from configuration. The CRM client is created on first
 * use (a worker without CRM settings can still serve other activities) and shares the process-wide
 * rate limiter with every other client for the same CRM and user. Each activity holds the
 * warehouse's write scope for its own length only.
 */
export function createPushActivitiesFromConfig(deps: { config: Config; logger: Logger }): PushActivities {
  let client: CrmClient | undefined;
  const crm = (): PushCrm => pushCrmFromClient((client ??= crmClientFromConfig(deps.config, { logger: deps.logger })));
  return createPushActivities({
    crm: {
      listCustomFields: () => crm().listCustomFields(),
      listTags: () => crm().listTags(),
      listLists: () => crm().listLists(),
      createTag: (title) => crm().createTag(title),
      createList: (title) => crm().createList(title),
      upsertContact: (body) => crm().upsertContact(body),
    },
    withDb: (fn) => withWarehouse({ dbPath: deps.config.dbPath, lakePath: deps.config.lakePath, write: true, logger: deps.logger }, (w) => fn(w)),
    logger: deps.logger.child({ component: 'push' }),
  });
}
