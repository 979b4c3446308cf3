import { readFile } from 'node:fs/promises';
import { DeterminismViolationError } from '@temporalio/workflow';
import { Worker } from '@temporalio/worker';
import { beforeAll, describe, expect, it } from 'vitest';
import { quietTemporalRuntime, testWorkflowBundlePath } from '../helpers/temporal.js';

const historyFile = 'test/fixtures/histories/hello-workflow.json';

async function history(): Promise<{ events: Record<string, unknown>[] }> {
  return JSON.parse(await readFile(historyFile, 'utf8')) as { events: Record<string, unknown>[] };
}

describe('replay of a recorded history', () => {
  beforeAll(quietTemporalRuntime);

  it('replays hello-workflow.json against the current workflow code', async () => {
    await Worker.runReplayHistory({ workflowBundle: { codePath: testWorkflowBundlePath() } }, await history());
  });

  it('detects a history the code no longer produces', async () => {
    const changed = await history();
    const scheduled = changed.events.find((e) => e.eventType === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED') as
      | { activityTaskScheduledEventAttributes: { activityType: { name: string } } }
      | undefined;
    if (!scheduled) throw new Error(`${historyFile} has no scheduled activity; re-record it`);
    scheduled.activityTaskScheduledEventAttributes.activityType.name = 'greetSomeoneElse';
    await expect(Worker.runReplayHistory({ workflowBundle: { codePath: testWorkflowBundlePath() } }, changed)).rejects.toBeInstanceOf(
      DeterminismViolationError,
    );
  });
});
