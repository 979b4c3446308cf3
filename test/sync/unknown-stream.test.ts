import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import type { SyncWorkflowInput } from '../../workflows/sync-types.js';
import { withTestWorker } from '../helpers/temporal.js';

describe('syncWorkflow input', () => {
  it('fails at once, naming the valid streams, when a caller outside TypeScript sends an unknown one', async () => {
    // No warehouse worker: a run that got as far as starting a stream child would hang, not fail.
    const failure = await withTestWorker({}, async ({ client, taskQueue, warehouseTaskQueue }) => {
      const input = { streams: ['contacts', 'contact'], warehouseTaskQueue } as unknown as SyncWorkflowInput;
      return await client.workflow.execute('syncWorkflow', { taskQueue, workflowId: `sync-${randomUUID()}`, args: [input], workflowExecutionTimeout: '30 s' }).then(
        () => undefined,
        (err: unknown) => err,
      );
    });
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const cause = (failure as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).type).toBe('UNKNOWN_STREAM');
    expect((cause as ApplicationFailure).message).toMatch(/Unknown stream "contact"; use one of: contacts, tags, /);
  });
});
