import type { Config } from '../src/config.js';
import type { Logger } from '../src/logger.js';
import { createPushActivitiesFromConfig } from './push-activities-from-config.js';

/**
 * Dependencies every activity factory may use. Add the fields your activities need (the CRM
 * client, the warehouse, limiters); build them in the worker command, fakes in tests.
 */
export interface ActivityDeps {
  config: Config;
  logger: Logger;
}

/**
 * The composition point for activities on the main task queue. Add one spread line per factory:
 * `...createSyncActivities(deps),`
 */
export function createActivities(deps: ActivityDeps) {
  void deps;
  return {
  };
}

/** Activities for the warehouse task queue (one worker: one DuckDB writer). Same pattern. */
export function createWarehouseActivities(deps: ActivityDeps) {
  return {
    ...createPushActivitiesFromConfig(deps),
  };
}
