import { randomUUID } from 'node:crypto';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { quietTemporalRuntime } from '../sync/quiet-temporal-runtime.js';
import { withTemporal } from '../temporal/connect.js';
import { taskQueues } from '../temporal/task-queues.js';
import { withInProcessWorkers } from '../worker/with-in-process-workers.js';
import type { RetryDeadLettersInput, RetryDeadLettersResult } from '../../workflows/webhook-apply-types.js';

export type DeadLetterOutcome = RetryDeadLettersResult['outcomes'][number];

/** Letters per workflow: each part's result stays small in history, and the user sees progress. */
const PART = 100;

/**
 * Retries up to `limit` dead letters through the warehouse worker (the DuckDB file's owner), one
 * workflow per part of at most PART letters, each after the last one's final letter. On the
 * embedded default, workers run in this process unless one already polls, as `sync` and `push` do.
 */
export async function retryDeadLettersThroughOwner(config: Config, limit: number, logger: Logger, onPart: (outcomes: DeadLetterOutcome[]) => void): Promise<DeadLetterOutcome[]> {
  quietTemporalRuntime(config.logLevel, logger);
  const embedded = !config.temporal.address;
  const run = async (t: Parameters<Parameters<typeof withTemporal>[1]>[0]): Promise<DeadLetterOutcome[]> => {
    const all: DeadLetterOutcome[] = [];
    let after: RetryDeadLettersInput['after'];
    const runId = randomUUID().slice(0, 8);
    for (let part = 0; all.length < limit; part++) {
      const input: RetryDeadLettersInput = { limit: Math.min(PART, limit - all.length), ...(after ? { after } : {}) };
      const { outcomes } = (await t.client.workflow.execute('retryWebhookDeadLettersWorkflow', {
        taskQueue: taskQueues(config).main,
        workflowId: `crmsync-dead-letters-retry-${runId}-${part}`,
        args: [input],
      })) as RetryDeadLettersResult;
      all.push(...outcomes);
      onPart(outcomes);
      const last = outcomes.at(-1);
      if (!last || outcomes.length < input.limit) break;
      after = { spoolSeq: last.spoolSeq, deliveryId: last.deliveryId };
    }
    return all;
  };
  return await withTemporal(
    config,
    async (t) => {
      if (!embedded || !t.nativeConnection) return await run(t);
      return await withInProcessWorkers({ config, logger, client: t.client, nativeConnection: t.nativeConnection, namespace: t.namespace }, () => run(t));
    },
    { worker: embedded },
  );
}
