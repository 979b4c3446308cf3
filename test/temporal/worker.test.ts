import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { beforeAll, describe, expect, it } from 'vitest';
import { taskQueues } from '../../src/temporal/task-queues.js';
import { resolveWorkflowsPath, runWorkers } from '../../src/temporal/worker.js';
import { quietTemporalRuntime, testFixtureWorkflowBundlePath, testTemporalAddress } from '../helpers/temporal.js';

describe('runWorkers', () => {
  beforeAll(quietTemporalRuntime);

  it('serves workflows on the main queue and warehouse activities on <main>-warehouse, then drains on abort', async () => {
    const address = testTemporalAddress();
    const queues = taskQueues({ temporal: { address, namespace: 'default', cliPath: undefined, taskQueue: `q-${randomUUID()}` } });
    expect(queues.warehouse).toBe(`${queues.main}-warehouse`);
    const recorded: string[] = [];
    const nativeConnection = await NativeConnection.connect({ address });
    const connection = await Connection.connect({ address });
    try {
      const abort = new AbortController();
      const running = runWorkers({
        nativeConnection,
        namespace: 'default',
        taskQueues: queues,
        activities: { greet: async (name: string) => `hi ${name}` },
        warehouseActivities: {
          recordGreeting: async (greeting: string) => {
            recorded.push(greeting);
            return recorded.length;
          },
        },
        workflowBundle: { codePath: testFixtureWorkflowBundlePath() },
        signal: abort.signal,
      });
      try {
        const client = new Client({ connection });
        const count = await client.workflow.execute('helloWarehouseWorkflow', {
          taskQueue: queues.main,
          workflowId: `wh-${randomUUID()}`,
          args: ['grace'],
        });
        expect(count).toBe(1);
        expect(recorded).toEqual(['hi grace!']);
      } finally {
        abort.abort();
        await running;
      }
    } finally {
      await connection.close();
      await nativeConnection.close();
    }
  });

  it('returns at once when the signal is already aborted', async () => {
    const nativeConnection = await NativeConnection.connect({ address: testTemporalAddress() });
    try {
      const abort = new AbortController();
      abort.abort();
      await runWorkers({
        nativeConnection,
        namespace: 'default',
        taskQueues: { main: `q-${randomUUID()}`, warehouse: `q-${randomUUID()}` },
        activities: {},
        warehouseActivities: {},
        signal: abort.signal,
      });
    } finally {
      await nativeConnection.close();
    }
  });

  it('builds the warehouse activities while the workflow worker is created, and fails with their error (no worker left running)', { timeout: 60_000 }, async () => {
    const nativeConnection = await NativeConnection.connect({ address: testTemporalAddress() });
    try {
      // As when the DuckDB file is held by another process: the error names the fix, and the
      // workflow worker created meanwhile is stopped rather than left to serve.
      let fail!: (err: Error) => void;
      const activities = new Promise<object>((_, reject) => (fail = reject));
      const running = runWorkers({
        nativeConnection,
        namespace: 'default',
        taskQueues: { main: `q-${randomUUID()}`, warehouse: `q-${randomUUID()}` },
        activities: {},
        warehouseActivities: activities,
        workflowBundle: { codePath: testFixtureWorkflowBundlePath() },
      });
      fail(new Error('the file is held by process 42; stop it first'));
      await expect(running).rejects.toThrow('held by process 42');
    } finally {
      await nativeConnection.close();
    }
  });

  it('resolves the workflows entry of the source tree when run from source', () => {
    expect(resolveWorkflowsPath()).toMatch(/\/workflows\/index\.ts$/);
  });
});
