import type { Config } from '../src/config.js';
import type { CrmClient } from '../src/crm/index.js';
import type { Logger } from '../src/logger.js';
import { pushCrmFromClient } from '../src/push/push-crm-from-client.js';
import type { WarehouseOwner } from '../src/warehouse/index.js';
import { createClientRefetcher } from '../src/webhooks/client-refetcher.js';
import { createSpoolRangeReader } from '../src/webhooks/spool-range-reader.js';
import { webhookSpoolDir } from '../src/webhooks/webhook-spool-dir.js';
import { createPushActivities } from './push-activities.js';
import { createSyncActivities } from './sync-activities.js';
import { createWebhookActivities } from './webhook-activities.js';

/** What every activity is built over; the worker builds them (src/worker/compose.ts), tests pass real ones. */
export interface ActivityDeps {
  config: Config;
  logger: Logger;
  /** The CRM client (credentials stay in the worker). */
  crm: CrmClient;
  /** The one writer of the DuckDB file: every warehouse write is a job on it. */
  owner: WarehouseOwner;
}

/**
 * Every activity, by the task queue it runs on. The warehouse queue has one worker, the one that
 * owns the DuckDB file; the main queue has workflows and nothing that writes.
 */
export function createActivities(deps: ActivityDeps) {
  const { config, crm, owner, logger } = deps;
  return {
    main: {},
    warehouse: {
      ...createSyncActivities({ client: crm, writes: owner, logger, publishEveryMs: config.publishEveryMs, contactPages: config.syncContactPages, typeAside: config.syncTypeAside }),
      ...createPushActivities({
        crm: pushCrmFromClient(crm),
        db: ownerSqlRunner(owner),
        publishLedger: () => owner.run((w) => w.publishLake(['_push_ledger'])),
        logger: logger.child({ component: 'push' }),
      }),
      ...createWebhookActivities({
        writes: owner,
        publishEveryMs: config.publishEveryMs,
        spool: createSpoolRangeReader(webhookSpoolDir(config)),
        refetcher: createClientRefetcher(crm),
        concurrency: config.crm.maxConcurrency ?? 8,
        siteTimeZone: config.crm.timezone,
        logger: logger.child({ component: 'webhooks' }),
      }),
    },
  };
}

/** SQL as the pusher runs it: each statement one job on the owner, so no job waits on an HTTP call. */
function ownerSqlRunner(owner: WarehouseOwner) {
  return { query: (sql: string, params?: readonly unknown[]) => owner.run((w) => w.query(sql, params)) };
}
