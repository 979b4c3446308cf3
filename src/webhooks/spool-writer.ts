import { open, type FileHandle } from 'node:fs/promises';
import type { Logger } from '../logger.js';
import { SpoolUnavailableError } from './errors.js';
import { createSegmentSpace } from './segment-space.js';
import { createBatchFrames } from './batch-frames.js';
import type { SpoolRecord } from './spool-frame.js';
import { fileSpoolIo, type SpoolIo } from './spool-io.js';
import { fsyncDir, segmentPath, type SegmentInfo } from './spool-recovery.js';
import { startSyncThread, type SyncThreadStats } from './sync-thread.js';

export interface PendingAppend {
  record: SpoolRecord;
  /** `frameLength(record)`: the frame is encoded when its batch is written, into the batch's buffer. */
  frameBytes: number;
  /** Where the spool's dedupe index holds this append, handed back with the record in onDurable. */
  seenAt: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

export interface SpoolWriterOptions {
  dir: string;
  /** The segment to append to (its `size` is the durable end) and its open handle. */
  active: SegmentInfo;
  fh: FileHandle;
  /** Bytes already allocated in the active segment's file (preallocated zeros included). */
  allocated: number;
  maxSegmentBytes: number;
  /** Called in log order once a batch is durable, before its requests are answered. */
  onDurable(batch: readonly PendingAppend[], segment: SegmentInfo): void;
  /** Called when a new segment is started. */
  onSegment(segment: SegmentInfo): void;
  logger?: Logger;
  io?: SpoolIo;
  /** fdatasyncs that may run at once on the sync threads (default DEFAULT_SYNC_THREADS). */
  syncThreads?: number;
  /** Batches written and not yet durable, at most (default MAX_IN_FLIGHT). */
  syncsInFlight?: number;
}

/** The sync threads' counts (with an injected `io`, a sync a batch) beside the batches'. */
export interface SpoolWriterStats extends SyncThreadStats {
  batches: number;
  /** Time spent in write + fdatasync, summed and worst, in ms. */
  syncMsTotal: number;
  syncMsMax: number;
}

export interface SpoolWriter {
  enqueue(p: PendingAppend): void;
  /** Settles at once the batches whose sync has ended (see SyncThread.collect). */
  collect(): void;
  readonly queued: number;
  readonly broken: Error | undefined;
  stats(): SpoolWriterStats;
  /** Waits for every queued append, trims the preallocated tail and closes the file. */
  close(): Promise<void>;
}

interface InFlight {
  batch: PendingAppend[];
  segment: SegmentInfo;
  end: number;
  started: number;
  state: 'syncing' | 'synced' | 'failed';
  error?: unknown;
}

/**
 * Batches written and not yet durable, at most. A batch is written at the end of the event-loop
 * turn that gathered it, even while a sync runs: the sync thread then claims it the moment it is
 * free, without waiting for the receiver's thread to hear of the last sync and write (on a loaded
 * machine that round trip took milliseconds). Writing only when a thread is free (one batch in
 * flight per thread) saves writes but lost more to that wait: bench/results/webhooks*.json.
 */
export const MAX_IN_FLIGHT = 64;

/**
 * Group commit: appends that arrive during one event-loop turn form a batch (one write, one file
 * position); an idle sync thread claims every batch written so far and syncs once for all of
 * them. Batches are acknowledged strictly in log order once a sync that started after their write
 * ended. A failed write or sync fails that batch and every later one still unacknowledged (they
 * follow it in the file), then the segment is cut back to the last acknowledged frame.
 */
export function createSpoolWriter(o: SpoolWriterOptions): SpoolWriter {
  const { dir, maxSegmentBytes, logger } = o;
  const thread = o.io ? undefined : startSyncThread(o.syncThreads);
  const maxInFlight = o.syncsInFlight ?? MAX_IN_FLIGHT;
  const write = o.io?.write ?? fileSpoolIo.write;
  let active = o.active;
  const space = createSegmentSpace({
    fh: o.fh,
    allocated: o.allocated,
    maxSegmentBytes,
    ...(logger ? { logger } : {}),
    onExtended: () => {
      if (failing) recover().catch(backgroundFailed);
    },
  });
  let written = active.size;
  const encodeBatch = createBatchFrames();
  let queue: PendingAppend[] = [];
  /** Appends queued or in flight: the spool refuses more than its limit. */
  let unsettled = 0;
  const pipeline: InFlight[] = [];
  let writing = false;
  let failing = false;
  let broken: Error | undefined;
  let drained: (() => void)[] = [];
  const stats = { batches: 0, syncMsTotal: 0, syncMsMax: 0 };

  const unavailable = (cause: unknown): SpoolUnavailableError => new SpoolUnavailableError('The webhook spool could not be written; the CRM will retry.', { cause });

  const notifyDrained = (): void => {
    if (writing || pipeline.length > 0 || queue.length > 0) return;
    const d = drained;
    drained = [];
    for (const f of d) f();
  };

  const idle = (): Promise<void> =>
    new Promise<void>((resolve) => {
      drained.push(resolve);
      notifyDrained();
    });

  // recover() and writeNext() settle every request themselves; this only reports a bug in them
  // instead of an unhandled rejection that would stop the receiver.
  const backgroundFailed = (err: unknown): void => {
    logger?.error({ err: { message: (err as Error | undefined)?.message } }, 'spool: background write step failed unexpectedly');
  };

  /** After a failure: once nothing is in flight, cut the file back to its durable end. */
  let recovering = false;
  const recover = async (): Promise<void> => {
    // One cut-back at a time: a second truncate landing after new writes would cut them off.
    if (!failing || recovering || writing || pipeline.length > 0 || space.extending) return;
    recovering = true;
    try {
      await space.cutTo(active.size, false);
      written = active.size;
      failing = false;
    } catch (err) {
      broken = new SpoolUnavailableError('The webhook spool is damaged and cannot be written; restart the receiver.', { cause: err });
      const waiting = queue;
      queue = [];
      unsettled -= waiting.length;
      for (const p of waiting) p.reject(broken);
    } finally {
      recovering = false;
    }
    kick();
  };

  const settle = (): void => {
    while (pipeline.length > 0 && pipeline[0]!.state !== 'syncing') {
      const e = pipeline.shift()!;
      unsettled -= e.batch.length;
      if (e.state === 'synced' && !failing) {
        const took = performance.now() - e.started;
        stats.batches++;
        stats.syncMsTotal += took;
        stats.syncMsMax = Math.max(stats.syncMsMax, took);
        e.segment.size = e.end;
        o.onDurable(e.batch, e.segment);
        for (const p of e.batch) p.resolve();
      } else {
        if (!failing)
          logger?.error(
            { err: { code: (e.error as NodeJS.ErrnoException | undefined)?.code, message: (e.error as Error | undefined)?.message }, deliveries: e.batch.length },
            'spool write failed; answering 503',
          );
        failing = true;
        const err = unavailable(e.error);
        for (const p of e.batch) p.reject(err);
      }
    }
    if (failing) {
      recover().then(() => {
        kick();
        notifyDrained();
      }, backgroundFailed);
      return;
    }
    kick();
    notifyDrained();
  };

  const extendAhead = (): void => {
    if (!failing && !broken) space.extendAhead(written);
  };

  /** Cuts the preallocated tail off the active segment before it is left (rotation, close). */
  const trim = async (): Promise<void> => {
    if (space.allocated > active.size) await space.cutTo(active.size, true);
  };

  // The new file is opened first: if that fails, the current segment stays usable.
  const rotate = async (): Promise<void> => {
    await space.extended();
    const no = active.no + 1;
    const next: SegmentInfo = { no, path: segmentPath(dir, no), size: 0, firstSeq: 0, lastSeq: 0, newestAt: 0 };
    const nextFh = await open(next.path, 'w', 0o600);
    try {
      await fsyncDir(dir);
      await trim();
    } catch (err) {
      await nextFh.close();
      throw err;
    }
    await space.fh.close();
    active = next;
    space.reset(nextFh);
    written = 0;
    o.onSegment(active);
  };

  /** Starts the sync of a batch just written; batches are answered in log order as their syncs end. */
  const startSync = (entry: InFlight): void => {
    pipeline.push(entry);
    const done = (err: Error | null): void => {
      if (err) {
        entry.state = 'failed';
        entry.error = err;
      } else {
        entry.state = 'synced';
      }
      settle();
    };
    try {
      if (thread) thread.datasync(active.path, done);
      else o.io!.datasync(space.fh.fd, done);
    } catch (err) {
      // The entry is in the pipeline already: it fails there, in log order, like a failed sync.
      done(err as Error);
    }
  };

  /** Writes the batch and starts its sync; false when the file must first rotate or grow (awaited). */
  const writeBatch = (batch: PendingAppend[], started: number): boolean => {
    const start = written;
    if (start >= maxSegmentBytes) return false;
    let size = 0;
    for (const p of batch) size += p.frameBytes;
    if (start + size > space.allocated) return false;
    write(space.fh.fd, encodeBatch(batch, size), start);
    written = start + size;
    startSync({ batch, segment: active, end: written, started, state: 'syncing' });
    extendAhead();
    return true;
  };

  // Rotating and growing the file are rare and awaited.
  const writeAfterGrowing = async (batch: PendingAppend[], started: number): Promise<void> => {
    const start = written;
    try {
      if (written >= maxSegmentBytes) {
        // The syncs in flight belong to the old file: they end first.
        while (pipeline.length > 0) await new Promise<void>((r) => setImmediate(r));
        if (failing) throw new Error('an earlier batch failed');
        await rotate();
      }
      const size = batch.reduce((n, p) => n + p.frameBytes, 0);
      if (written + size > space.allocated) await space.extended();
      if (written + size > space.allocated) await space.grow(written + size);
      if (!writeBatch(batch, started)) throw new Error('the spool segment did not grow');
    } catch (err) {
      // Nothing of this batch is acknowledged; later batches wait for the cut-back in recover().
      pipeline.push({ batch, segment: active, end: start, started, state: 'failed', error: err });
      settle();
    }
  };

  // The usual batch is written synchronously, on the event loop's turn that gathered it.
  const writeNext = (): void => {
    const batch = queue;
    queue = [];
    if (broken) {
      unsettled -= batch.length;
      for (const p of batch) p.reject(broken);
      return;
    }
    const started = performance.now();
    try {
      if (writeBatch(batch, started)) return;
    } catch (err) {
      pipeline.push({ batch, segment: active, end: written, started, state: 'failed', error: err });
      settle();
      return;
    }
    writing = true;
    writeAfterGrowing(batch, started)
      .finally(() => {
        writing = false;
        kick();
        recover().then(notifyDrained, backgroundFailed);
      })
      .catch(backgroundFailed);
  };

  // While failing, new appends wait for the cut-back (quick) instead of being refused.
  const kick = (): void => {
    if (writing || failing || recovering || queue.length === 0 || pipeline.length >= maxInFlight) return;
    writeNext();
  };

  // Appends made during one turn of the event loop (every request read in one poll) share a batch:
  // the write waits for the check phase of that turn, not for a timer.
  let flushScheduled = false;
  const flush = (): void => {
    flushScheduled = false;
    thread?.collectBeforeWait();
    kick();
  };

  return {
    enqueue(p) {
      queue.push(p);
      unsettled++;
      if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(flush);
        // The flush collects: the sync threads need not post what it will find.
        thread?.expectCollect();
      }
    },
    collect: () => thread?.collect(),
    get queued() {
      return unsettled;
    },
    get broken() {
      return broken;
    },
    stats: () => {
      const threads = thread?.stats() ?? { syncs: stats.batches, syncWakeups: 0, silentSyncs: 0 };
      return { ...stats, syncMsTotal: Math.round(stats.syncMsTotal), syncMsMax: Math.round(stats.syncMsMax), ...threads };
    },
    async close() {
      await idle();
      await space.extended();
      try {
        if (!broken) await trim().catch(() => undefined);
      } finally {
        await space.fh.close();
        await thread?.close();
      }
    },
  };
}
