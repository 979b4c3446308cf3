import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { testFixtureWorkflowBundlePath, withTestWorker } from '../helpers/temporal.js';

describe('harness: a workflow on the real dev server', () => {
  it('runs helloWorkflow with a real activity on a per-test task queue', async () => {
    const calls: string[] = [];
    const activities = {
      greet: async (name: string) => {
        calls.push(name);
        return `hello ${name}`;
      },
    };
    const result = await withTestWorker({ activities, workflowBundlePath: testFixtureWorkflowBundlePath() }, async ({ client, taskQueue }) =>
      client.workflow.execute('helloWorkflow', { taskQueue, workflowId: `hello-${randomUUID()}`, args: ['ada'] }),
    );
    expect(result).toBe('hello ada!');
    expect(calls).toEqual(['ada']);
  });

  it('serves warehouse activities on <taskQueue>-warehouse when given', async () => {
    const recorded: string[] = [];
    const result = await withTestWorker(
      {
        activities: { greet: async (name: string) => `hey ${name}` },
        warehouseActivities: { recordGreeting: async (g: string) => recorded.push(g) },
        workflowBundlePath: testFixtureWorkflowBundlePath(),
      },
      async ({ client, taskQueue, warehouseTaskQueue }) => {
        expect(warehouseTaskQueue).toBe(`${taskQueue}-warehouse`);
        return await client.workflow.execute('helloWarehouseWorkflow', { taskQueue, workflowId: `hello-${randomUUID()}`, args: ['lin'] });
      },
    );
    expect(result).toBe(1);
    expect(recorded).toEqual(['hey lin!']);
  });

  it('surfaces a non-retryable activity failure as a failed workflow', async () => {
    let attempts = 0;
    const activities = {
      greet: async () => {
        attempts++;
        throw ApplicationFailure.nonRetryable('no greeting today', 'NO_GREETING');
      },
    };
    const run = withTestWorker({ activities, workflowBundlePath: testFixtureWorkflowBundlePath() }, async ({ client, taskQueue }) =>
      client.workflow.execute('helloWorkflow', { taskQueue, workflowId: `hello-${randomUUID()}`, args: ['bob'] }),
    );
    await expect(run).rejects.toBeInstanceOf(WorkflowFailedError);
    expect(attempts).toBe(1);
  });
});
