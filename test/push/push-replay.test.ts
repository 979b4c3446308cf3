import { readFile } from 'node:fs/promises';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import { quietTemporalRuntime, testWorkflowBundlePath } from '../helpers/temporal.js';

// Recorded by `RECORD_PUSH_HISTORY=1 npx vitest run test/push/push-workflow.test.ts -t continues`:
// the first run of a push (plan, two batches, continueAsNew). Re-record after an intended change.
const historyFile = 'test/push/fixtures/push-workflow-history.json';

async function history(): Promise<{ events: Record<string, unknown>[] }> {
  return JSON.parse(await readFile(historyFile, 'utf8')) as { events: Record<string, unknown>[] };
}

describe('pushWorkflow replay', () => {
  beforeAll(quietTemporalRuntime);

  it('replays a recorded push history against the current workflow code', async () => {
    await Worker.runReplayHistory({ workflowBundle: { codePath: testWorkflowBundlePath() } }, await history(), 'push-replay');
  });

  it('fails on a history the code no longer produces', async () => {
    const changed = await history();
    const scheduled = changed.events.filter((e) => e.eventType === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED') as {
      activityTaskScheduledEventAttributes: { activityType: { name: string } };
    }[];
    expect(scheduled.map((e) => e.activityTaskScheduledEventAttributes.activityType.name)).toEqual(['planPush', 'pushBatch', 'pushBatch']);
    scheduled[1]!.activityTaskScheduledEventAttributes.activityType.name = 'pushEverything';
    await expect(Worker.runReplayHistory({ workflowBundle: { codePath: testWorkflowBundlePath() } }, changed, 'push-replay')).rejects.toBeInstanceOf(DeterminismViolationError);
  });
});
