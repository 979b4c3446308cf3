import { CancellationScope, isCancellation, patched, setHandler, workflowInfo } from '@temporalio/workflow';
import { allOrStopTheRest } from './all-or-stop-the-rest.js';
import { bookkeepingActivities, syncActivities } from './sync-activity-proxies.js';
import { runContactsFlow } from './sync-contacts-flow.js';
import { progressQuery } from './sync-queries.js';
import { modeAfterRun } from './stream-mode.js';
import { isSmallStream, type SmallStreamName } from './streams.js';
import { addTotals, emptyTotals, type ContactsMode, type FreshSummary, type StreamProgress, type StreamResult, type StreamTotals, type StreamWorkflowInput } from './sync-types.js';

/** Funnels whose subscribers load at once; the contacts stream keeps most of the parallel budget. */
const FUNNELS_AT_ONCE = 4;

/**
 * One stream of one sync run. Started as a child with the id `crmsync-stream-<stream>`, so a
 * second run of the same stream cannot start while this one runs. Writes its `_sync_runs` row at
 * start and end (also when failed or cancelled).
 */
export async function syncStreamWorkflow(input: StreamWorkflowInput): Promise<StreamResult> {
  const startedAtMs = input.carry?.startedAtMs ?? Date.now();
  const totals: StreamTotals = input.carry?.totals ?? emptyTotals();
  const progress: StreamProgress = {
    stream: input.stream,
    runId: input.runId,
    phase: 'starting',
    pagesDone: 0,
    pagesTotal: undefined,
    rows: totals.rows,
    requests: totals.requests,
    startedAtMs,
    updatedAtMs: startedAtMs,
    drift: false,
  };
  setHandler(progressQuery, () => ({ ...progress, updatedAtMs: Date.now() }));
  const book = bookkeepingActivities(input.warehouseTaskQueue);
  let mode: ContactsMode = input.carry?.mode ?? (input.full ? 'backfill' : 'incremental');
  const record = (status: 'running' | 'succeeded' | 'skipped' | 'failed' | 'cancelled', error: string | null, publish = false) =>
    book.recordStreamRun({
      runId: input.runId,
      stream: input.stream,
      mode,
      startedAtMs,
      finishedAtMs: status === 'running' ? null : Date.now(),
      status,
      error,
      ...totals,
      ...(publish ? { publish } : {}),
    });

  // The start record and the stream's first step are independent, so they run together: one
  // activity round trip less before each stream's work (most of a sync with nothing to do is
  // such round trips). Not cancellable: it must land before the final record, which waits for
  // it. Runs started before this change wrote it first.
  // A small stream's start record, sync and final record in one activity (see syncSmallStream):
  // two activity round trips and two workflow tasks less per stream. Runs started before this
  // change take the path below.
  const atOnce = !input.carry && isSmallStream(input.stream) && patched('small-stream-one-activity');
  let started: Promise<unknown> | undefined;
  if (!input.carry && !atOnce) {
    if (patched('run-record-alongside')) {
      started = CancellationScope.nonCancellable(() => record('running', null));
      started.catch(() => undefined); // awaited below; a failure is not unhandled meanwhile
    } else await record('running', null);
  }
  let fresh: FreshSummary | undefined;
  try {
    const ran = atOnce
      ? await runSmallStreamRecorded(input, input.stream as SmallStreamName, startedAtMs, totals, progress)
      : await runStream(
          input,
          totals,
          progress,
          () => {
            progress.drift = true;
          },
          (f) => {
            fresh = f;
          },
        );
    await started;
    mode = ran.mode;
    progress.phase = 'done';
    // A stream the CRM lacks is recorded as skipped, its reason where a failure's error goes. The
    // run's only stream publishes the lake with that record.
    const final = atOnce ? undefined : await record(ran.skipped ? 'skipped' : 'succeeded', ran.skipped ?? null, input.publishAtEnd === true);
    const published = final?.published === true;
    return {
      stream: input.stream,
      mode,
      drift: progress.drift,
      ...(progress.reconcileNext ? { reconcileNext: true } : {}),
      ...totals,
      // The record's counts of what the loads wrote (contacts), where an attempt's report was lost.
      ...(final?.counts ?? {}),
      ...(ran.skipped ? { skipped: ran.skipped } : {}),
      ...(fresh ? { fresh } : {}),
      ...(published ? { published } : {}),
    };
  } catch (err) {
    const cancelled = isCancellation(err);
    progress.phase = cancelled ? 'cancelled' : 'failed';
    // The innermost cause: an activity's failure says "Activity task failed", its cause names the fix.
    progress.error = innermostMessage(err);
    // Record the outcome even when cancelled: the scope that was cancelled cannot run activities.
    await CancellationScope.nonCancellable(async () => {
      await started?.catch(() => undefined);
      await record(cancelled ? 'cancelled' : 'failed', progress.error ?? null);
    });
    throw err;
  }
}

/** The small stream's run in one activity, which writes its run records itself. */
async function runSmallStreamRecorded(
  input: StreamWorkflowInput,
  stream: SmallStreamName,
  startedAtMs: number,
  totals: StreamTotals,
  progress: StreamProgress,
): Promise<{ mode: ContactsMode; skipped?: string }> {
  progress.phase = input.full ? 'backfill' : 'incremental';
  const r = await syncActivities(input.warehouseTaskQueue, input.tuning).syncSmallStream({
    runId: input.runId,
    stream,
    loadId: `${input.runId}:${stream}`,
    full: input.full,
    startedAtMs,
  });
  addTotals(totals, r);
  progress.rows = totals.rows;
  progress.requests = totals.requests;
  return r.skipped ? { mode: r.mode, skipped: r.skipped } : { mode: r.mode };
}

async function runStream(
  input: StreamWorkflowInput,
  totals: StreamTotals,
  progress: StreamProgress,
  onDrift: () => void,
  onFresh: (f: FreshSummary) => void,
): Promise<{ mode: ContactsMode; skipped?: string }> {
  const acts = syncActivities(input.warehouseTaskQueue, input.tuning);
  const loadId = `${input.runId}:${input.stream}`;
  const stream = input.stream;
  if (stream === 'contacts') return { mode: await runContactsFlow(input, totals, progress, onDrift, onFresh) };
  progress.phase = input.full ? 'backfill' : 'incremental';
  const mode: ContactsMode = input.full ? 'backfill' : 'incremental';
  let skipped: string | undefined;
  if (isSmallStream(stream)) {
    const r = await acts.syncEntityStream({ stream, loadId });
    addTotals(totals, r);
    skipped = r.skipped;
  } else if (stream === 'funnel_subscribers') {
    const funnels = await acts.listFunnelIds();
    totals.requests += funnels.requests;
    // Without funnels on the CRM there is nothing to prune against: held rows stay as they are.
    if (funnels.skipped) return { mode, skipped: funnels.skipped };
    progress.pagesTotal = funnels.ids.length;
    const queue = [...funnels.ids];
    const lane = async (): Promise<void> => {
      for (let funnelId = queue.shift(); funnelId !== undefined; funnelId = queue.shift()) {
        const r = await acts.syncFunnelSubscribers({ funnelId, loadId });
        addTotals(totals, r);
        progress.pagesDone++;
        progress.rows = totals.rows;
        progress.requests = totals.requests;
      }
    };
    // A few funnels at once: each is a short activity, and one after another their round trips
    // were most of a sync with nothing to do. Runs started before this change replay one lane.
    if (patched('funnel-subscribers-at-once')) await allOrStopTheRest(Array.from({ length: FUNNELS_AT_ONCE }, () => lane));
    else await lane();
    const pruned = await acts.pruneFunnelSubscribers({ keepFunnelIds: funnels.ids, loadId });
    totals.deleted += pruned.deleted;
  } else if (stream === 'reports') {
    const r = await acts.snapshotReports({ loadId });
    totals.requests += r.requests;
    totals.rows += r.rows;
    totals.inserted += r.rows;
    totals.pages += r.snapshots;
    skipped = r.skipped;
  } else {
    throw new Error(`Unknown stream "${stream}" (workflow ${workflowInfo().workflowId})`);
  }
  progress.rows = totals.rows;
  progress.requests = totals.requests;
  const finalMode = modeAfterRun(stream, input.full, totals);
  return skipped ? { mode: finalMode, skipped } : { mode: finalMode };
}

function innermostMessage(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}
