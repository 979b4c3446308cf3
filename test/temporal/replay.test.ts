import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { historyFromJSON, type History } from '@temporalio/common/lib/proto-utils.js';
import { DeterminismViolationError } from '@temporalio/workflow';
import { Worker } from '@temporalio/worker';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundleWorkflows } from '../../src/temporal/bundle-workflows.js';
import { secretsIn } from '../fixtures/histories/recording-secrets.js';
import { quietTemporalRuntime, testWorkflowBundlePath } from '../helpers/temporal.js';

// Histories recorded on purpose by `npm run record-histories` (docs/workflow-histories.md). A
// failure here means workflows running when the new code is deployed would fail to resume: guard
// the change with `patched()`, or re-record if no run can be in flight across it.
const DIR = 'test/fixtures/histories';

interface Recorded {
  name: string;
  json: string;
  history: History;
}

async function recorded(): Promise<Recorded[]> {
  const files = (await readdir(DIR)).filter((f) => f.endsWith('.json')).sort();
  return await Promise.all(
    files.map(async (f) => {
      const json = await readFile(join(DIR, f), 'utf8');
      return { name: f.replace(/\.json$/, ''), json, history: historyFromJSON(JSON.parse(json)) };
    }),
  );
}

function byName(all: readonly Recorded[], name: string): Recorded {
  const found = all.find((r) => r.name === name);
  if (!found) throw new Error(`${DIR}/${name}.json is missing; run \`npm run record-histories\``);
  return found;
}

const eventsOf = (r: Recorded) => r.history.events ?? [];
const activitiesOf = (r: Recorded) =>
  eventsOf(r)
    .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
    .filter(Boolean);
/** The ids of the `patched()` markers in a history, in order. */
const patchIdsOf = (r: Recorded) =>
  eventsOf(r)
    .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
    .flatMap((e) => e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads ?? [])
    .map((p) => (JSON.parse(new TextDecoder().decode(p.data ?? new Uint8Array())) as { id: string }).id);
const continuesAsNew = (r: Recorded) => eventsOf(r).some((e) => e.workflowExecutionContinuedAsNewEventAttributes);

describe('replay of the recorded workflow histories', () => {
  let all: Recorded[] = [];
  beforeAll(async () => {
    quietTemporalRuntime();
    all = await recorded();
  });

  it('cover the sync and push workflows: child fan-out, parallel page ranges, continue-as-new, the patches, batches', () => {
    const sync = byName(all, 'sync-backfill');
    expect(eventsOf(sync).filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes).length).toBe(9);
    const scan = byName(all, 'sync-backfill.contacts-1');
    expect(activitiesOf(scan).filter((a) => a === 'syncContactPages').length).toBeGreaterThan(1);
    expect(continuesAsNew(scan)).toBe(true);
    // The scan starts in the run's first activity; runs started before that change start it in one of its own.
    expect(patchIdsOf(scan)).toEqual(['run-record-alongside', 'contacts-start-one-activity', 'contacts-run-starts-scan']);
    expect(activitiesOf(scan).slice(0, 3)).toEqual(['recordStreamRun', 'startContactsRun', 'syncContactPages']);
    const scanApart = byName(all, 'before-contacts-run-starts-scan.sync-backfill.contacts-1');
    expect(activitiesOf(scanApart).slice(0, 3)).toEqual(['recordStreamRun', 'startContactsRun', 'startContactsScan']);
    // A run of one stream: the stream's final record publishes the lake, the run schedules no publish.
    expect(activitiesOf(byName(all, 'sync-one-stream'))).toEqual([]);
    expect(activitiesOf(byName(all, 'sync-backfill'))).toEqual(['publishLake']);
    // The scan's end: the finish fetches the contacts created meanwhile; runs started before that
    // change fetch them in an activity of their own.
    const finished = byName(all, 'sync-backfill.contacts-2');
    expect(patchIdsOf(finished)).toEqual(['finish-fetches-new']);
    expect(activitiesOf(finished).slice(-2)).toEqual(['finishContactsScan', 'recordStreamRun']);
    expect(activitiesOf(byName(all, 'before-finish-fetches-new.sync-backfill.contacts-2')).slice(-3)).toEqual(['finishContactsScan', 'fetchNewContacts', 'recordStreamRun']);
    const incremental = byName(all, 'sync-incremental.contacts');
    expect(patchIdsOf(incremental)).toEqual(['run-record-alongside', 'contacts-start-one-activity', 'contacts-run-starts-scan']);
    expect(activitiesOf(incremental)).toEqual(['recordStreamRun', 'startContactsRun', 'recordStreamRun']);
    const oneAtATime = byName(all, 'before-contacts-start-one-activity.sync-incremental.contacts');
    expect(patchIdsOf(oneAtATime)).toEqual(['run-record-alongside', 'fresh-contacts', 'fresh-contacts-one-activity']);
    expect(activitiesOf(oneAtATime)).toEqual(expect.arrayContaining(['planContactsRun', 'fetchNewContacts', 'refreshContacts']));
    expect(activitiesOf(byName(all, 'before-contacts-start-one-activity.sync-backfill.contacts-1'))).toContain('planContactsRun');
    // Runs started before a patch keep replaying on the old path: their histories stay.
    expect(patchIdsOf(byName(all, 'before-run-record-alongside.sync-incremental.contacts'))).toEqual(['fresh-contacts']);
    const separateChecks = byName(all, 'before-fresh-contacts-one-activity.sync-incremental.contacts');
    expect(patchIdsOf(separateChecks)).toEqual(['run-record-alongside', 'fresh-contacts']);
    expect(activitiesOf(separateChecks)).toEqual(expect.arrayContaining(['scanUpdatedContacts', 'repairMemberships', 'sweepContactSlice']));
    // A small stream's run is one activity; runs started before that change replay three.
    const tags = byName(all, 'sync-backfill.tags');
    expect(patchIdsOf(tags)).toEqual(['small-stream-one-activity']);
    expect(activitiesOf(tags)).toEqual(['syncSmallStream']);
    expect(activitiesOf(byName(all, 'before-small-stream-one-activity.sync-backfill.tags'))).toEqual(['recordStreamRun', 'syncEntityStream', 'recordStreamRun']);
    expect(activitiesOf(byName(all, 'push-1'))).toEqual(['planPush', 'pushBatch', 'pushBatch']);
    expect(continuesAsNew(byName(all, 'push-1'))).toBe(true);
    expect(activitiesOf(byName(all, 'push-2'))).toEqual(['pushBatch', 'finishPush']);
  });

  it('cover the webhook apply workflow: one activity per spool range, continue-as-new, the resumed run waiting for more', () => {
    const first = byName(all, 'webhook-apply-1');
    expect(activitiesOf(first)).toEqual(['applyWebhookSpool', 'applyWebhookSpool', 'applyWebhookSpool']);
    expect(continuesAsNew(first)).toBe(true);
    const resumed = byName(all, 'webhook-apply-2');
    expect(eventsOf(resumed)[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId).toBeTruthy();
    expect(activitiesOf(resumed)).toEqual(['applyWebhookSpool', 'applyWebhookSpool']);
  });

  it('include every workflow the production bundle ships', async () => {
    const shipped = Object.entries(await import('../../workflows/index.js'))
      .filter(([, value]) => typeof value === 'function')
      .map(([name]) => name)
      .sort();
    const recordedTypes = new Set(all.map((r) => eventsOf(r)[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name));
    // A new workflow needs a run in record-histories.ts before it ships (docs/workflow-histories.md).
    expect(shipped.filter((name) => !recordedTypes.has(name))).toEqual([]);
  });

  it('every history replays against the production bundle (workflows/index.ts)', async () => {
    expect(all.length).toBeGreaterThan(0);
    const outcomes: { name: string; error: string | undefined }[] = [];
    const results = Worker.runReplayHistories(
      { workflowBundle: { codePath: testWorkflowBundlePath() } },
      all.map((r) => ({ workflowId: r.name, history: r.history })),
    );
    for await (const result of results) outcomes.push({ name: result.workflowId, error: result.error?.message });
    expect(outcomes).toEqual(all.map((r) => ({ name: r.name, error: undefined })));
  });

  it('a push workflow that calls another activity first does not replay the recorded push', async () => {
    const changed = await bundleWorkflows(resolve('test/fixtures/workflows/changed-push-workflow.ts'));
    const push = byName(all, 'push-1');
    await expect(Worker.runReplayHistory({ workflowBundle: { code: changed.code } }, push.history, push.name)).rejects.toBeInstanceOf(DeterminismViolationError);
  });

  it('a webhook apply workflow that waits on a timer first does not replay the recorded apply', async () => {
    const changed = await bundleWorkflows(resolve('test/fixtures/workflows/changed-webhook-apply-workflow.ts'));
    const apply = byName(all, 'webhook-apply-1');
    await expect(Worker.runReplayHistory({ workflowBundle: { code: changed.code } }, apply.history, apply.name)).rejects.toBeInstanceOf(DeterminismViolationError);
  });

  it('hold no credential of the recording worker', () => {
    expect(all.map((r) => ({ name: r.name, secrets: secretsIn(r.json) }))).toEqual(all.map((r) => ({ name: r.name, secrets: [] })));
  });
});
