import { proxyActivities, sleep } from '@temporalio/workflow';
import { formatGreeting } from './hello-format.js';

/** Activity contract for the harness proof; tests pass real implementations. */
export interface HelloActivities {
  greet(name: string): Promise<string>;
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
