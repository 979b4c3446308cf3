import { proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import { formatGreeting } from './hello-format.js';

/** Activity contracts for the harness proof; tests pass real implementations. */
export interface HelloActivities {
  greet(name: string): Promise<string>;
}
export interface HelloWarehouseActivities {
  recordGreeting(greeting: string): Promise<number>;
}

const { greet } = proxyActivities<HelloActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3, initialInterval: '50 milliseconds' },
});

/**
 * The smallest real workflow: one activity, a durable timer and a local import (proves the
 * bundler resolves `.js` suffixes to `.ts` sources). Its recorded history is replayed in tests.
 */
export async function helloWorkflow(name: string): Promise<string> {
  const greeting = await greet(name);
  await sleep(10);
  return formatGreeting(greeting);
}

/**
 * Shows the queue convention: warehouse activities run on `<main queue>-warehouse`, derived from
 * the workflow's own queue (workflows cannot read config).
 */
export async function helloWarehouseWorkflow(name: string): Promise<number> {
  const { recordGreeting } = proxyActivities<HelloWarehouseActivities>({
    taskQueue: `${workflowInfo().taskQueue}-warehouse`,
    startToCloseTimeout: '10 seconds',
  });
  return await recordGreeting(formatGreeting(await greet(name)));
}
