import { fdatasync, writeSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { Logger } from '../logger.js';
import { SpoolUnavailableError } from './errors.js';
import type { SpoolRecord } from './spool-frame.js';
import { fsyncDir, segmentPath, type SegmentInfo } from './spool-recovery.js';
import { startSyncThread } from './sync-thread.js';

export interface PendingAppend {
  record: SpoolRecord;
  frame: Buffer;
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * The two file calls made for every batch. The write is synchronous: a positioned write of a few
 * KiB into the page cache of a preallocated file costs a few microseconds, while the same write
 * through the thread pool costs tens of microseconds of dispatch and wake-ups per batch. The sync
 * runs on the thread pool. Injectable so that tests can hold a sync back or fail it.
 */
export interface SpoolIo {
  /** Writes all of `buf` at `position`; throws on failure. */
  write(fd: number, buf: Buffer, position: number): void;
  datasync(fd: number, done: (err: Error | null) => void): void;
}

export const fileSpoolIo: SpoolIo = {
  write(fd, buf, position) {
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off, position + off);
  },
  datasync: (fd, done) => fdatasync(fd, done),
};

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
  /**
   * Where fdatasync runs when no `io` is given: on a sync thread of the writer's own (the default,
   * see sync-thread.ts), or on libuv's thread pool, one call per batch ('pool').
   */
  syncOn?: SyncOn;
  /** fdatasyncs that may run at once on the sync threads (default DEFAULT_SYNC_THREADS). */
  syncThreads?: number;
  /** Batches written and not yet durable, at most (default: 64 on the sync thread, else MAX_IN_FLIGHT). */
  syncsInFlight?: number;
  /**
   * A further batch starts its sync while another is still syncing only once the newest sync has
   * run this long (default PIPELINE_AFTER_MS): see MAX_IN_FLIGHT.
   */
  pipelineAfterMs?: number;
  /** Monotonic milliseconds for the timing of syncs (default performance.now; tests drive it). */
  clock?: () => number;
}

export type SyncOn = 'thread' | 'pool';

export interface SpoolWriterStats {
  batches: number;
  syncMsTotal: number;
  syncMsMax: number;
}

export interface SpoolWriter {
  enqueue(p: PendingAppend): void;
  readonly queued: number;
  readonly broken: Error | undefined;
  stats(): SpoolWriterStats;
  /** Waits for every queued append, trims the preallocated tail and closes the file. */
  close(): Promise<void>;
}

/**
 * Syncs in flight at once, and when a further one may start. Appends gather while a sync runs, so
 * a group commit grows with the load, and every fdatasync costs CPU: on a fast disk one sync at a
 * time uses the least CPU per delivery. On a slow or busy disk a sync takes many milliseconds and
 * the receiver sits idle waiting for it, while concurrent syncs overlap on the device. So a
 * further batch starts its sync only once the newest sync has run PIPELINE_AFTER_MS (a quick
 * sync ends first and the batch joins the next group commit), up to MAX_IN_FLIGHT at once.
 * Figures for both regimes: bench/results/webhooks.json and docs/webhooks.md.
 */
const MAX_IN_FLIGHT = 4;
const PIPELINE_AFTER_MS = 2;

interface InFlight {
  batch: PendingAppend[];
  segment: SegmentInfo;
  end: number;
  started: number;
  state: 'syncing' | 'synced' | 'failed';
  error?: unknown;
}

/**
 * Group commit with a pipeline: appends that arrive while a batch is written form the next batch;
 * writes are serialized (one file position), each batch is then fdatasynced without waiting for
 * the previous sync, and batches are acknowledged strictly in log order once their own sync ended.
 * A failed write or sync fails that batch and every later one still unacknowledged (they follow
 * it in the file), then the segment is cut back to the last acknowledged frame.
 */
export function createSpoolWriter(o: SpoolWriterOptions): SpoolWriter {
  const { dir, maxSegmentBytes, logger } = o;
  const thread = o.io || o.syncOn === 'pool' ? undefined : startSyncThread(o.syncThreads);
  const io: SpoolIo = o.io ?? (thread ? { write: fileSpoolIo.write, datasync: (fd, done) => thread.datasync(fd, done) } : fileSpoolIo);
  const maxInFlight = o.syncsInFlight ?? (thread ? 64 : MAX_IN_FLIGHT);
  const pipelineAfterMs = o.pipelineAfterMs ?? (thread ? 0 : PIPELINE_AFTER_MS);
  const clock = o.clock ?? (() => performance.now());
  let pipelineTimer: NodeJS.Timeout | undefined;
  const preallocStep = Math.min(4 * 1024 * 1024, Math.max(64 * 1024, maxSegmentBytes));
  let active = o.active;
  let fh = o.fh;
  let allocated = o.allocated;
  let written = active.size;
  let queue: PendingAppend[] = [];
  const pipeline: InFlight[] = [];
  let writing = false;
  let failing = false;
  let broken: Error | undefined;
  let drained: (() => void)[] = [];
  const stats: SpoolWriterStats = { batches: 0, syncMsTotal: 0, syncMsMax: 0 };

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
    if (!failing || recovering || writing || pipeline.length > 0 || extending) return;
    recovering = true;
    try {
      await fh.truncate(active.size);
      written = active.size;
      allocated = active.size;
      failing = false;
    } catch (err) {
      broken = new SpoolUnavailableError('The webhook spool is damaged and cannot be written; restart the receiver.', { cause: err });
      const waiting = queue;
      queue = [];
      for (const p of waiting) p.reject(broken);
    } finally {
      recovering = false;
    }
    kick();
  };

  const settle = (): void => {
    while (pipeline.length > 0 && pipeline[0]!.state !== 'syncing') {
      const e = pipeline.shift()!;
      if (e.state === 'synced' && !failing) {
        const took = clock() - e.started;
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
    recover().then(() => {
      kick();
      notifyDrained();
    }, backgroundFailed);
  };

  let zeroStep: Buffer | undefined;
  const preallocate = async (needed: number): Promise<void> => {
    const handle = fh;
    const base = allocated;
    const grow = Math.max(preallocStep, needed - base);
    const zeros = grow === preallocStep ? (zeroStep ??= Buffer.alloc(preallocStep)) : Buffer.alloc(grow);
    let off = 0;
    while (off < grow) off += (await handle.write(zeros, off, grow - off, base + off)).bytesWritten;
    await handle.sync();
    if (handle === fh && allocated === base) allocated = base + grow;
  };

  /**
   * The next preallocation starts in the background once the current one is half used, so that
   * appends do not wait for 4 MiB of zeros and their fsync (tens of milliseconds on a busy disk).
   * It writes only past `allocated`, where no frame goes until it is done; a cut-back, rotation or
   * close waits for it.
   */
  let extending: Promise<void> | undefined;
  const extendAhead = (): void => {
    if (extending || failing || broken || allocated >= maxSegmentBytes || allocated - written > preallocStep / 2) return;
    extending = preallocate(allocated + 1)
      .catch((err: unknown) => {
        logger?.warn({ err: { code: (err as NodeJS.ErrnoException).code, message: (err as Error).message } }, 'spool: preallocating ahead failed; the next write that needs the space tries again');
      })
      .finally(() => {
        extending = undefined;
        if (failing) recover().catch(backgroundFailed);
      });
  };
  const extended = async (): Promise<void> => {
    while (extending) await extending;
  };

  const trim = async (): Promise<void> => {
    if (allocated > active.size) {
      await fh.truncate(active.size);
      await fh.sync();
      allocated = active.size;
    }
  };

  // The new file is opened first: if that fails, the current segment stays usable.
  const rotate = async (): Promise<void> => {
    await extended();
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
    await fh.close();
    active = next;
    fh = nextFh;
    allocated = 0;
    written = 0;
    o.onSegment(active);
  };

  const waitPipelineEmpty = async (): Promise<void> => {
    while (pipeline.length > 0) await new Promise<void>((r) => setImmediate(r));
  };

  /** Starts the sync of a batch just written; batches are answered in log order as their syncs end. */
  const startSync = (entry: InFlight): void => {
    pipeline.push(entry);
    io.datasync(fh.fd, (err) => {
      if (err) {
        entry.state = 'failed';
        entry.error = err;
      } else {
        entry.state = 'synced';
      }
      settle();
    });
  };

  // Rotating and growing the file are rare and awaited; the usual batch is written synchronously.
  const writeNext = async (): Promise<void> => {
    const batch = queue;
    queue = [];
    if (broken) {
      for (const p of batch) p.reject(broken);
      return;
    }
    const started = clock();
    let start = written;
    try {
      if (written >= maxSegmentBytes) {
        // The syncs in flight belong to the old file handle.
        await waitPipelineEmpty();
        if (failing) throw new Error('an earlier batch failed');
        await rotate();
        start = written;
      }
      const buf = batch.length === 1 ? batch[0]!.frame : Buffer.concat(batch.map((p) => p.frame));
      if (start + buf.length > allocated) await extended();
      if (start + buf.length > allocated) await preallocate(start + buf.length);
      io.write(fh.fd, buf, start);
      written = start + buf.length;
      startSync({ batch, segment: active, end: written, started, state: 'syncing' });
      extendAhead();
    } catch (err) {
      // Nothing of this batch is acknowledged; later batches wait for the cut-back in recover().
      pipeline.push({ batch, segment: active, end: start, started, state: 'failed', error: err });
      settle();
    }
  };

  // While failing, new appends wait for the cut-back (quick) instead of being refused.
  const kick = (): void => {
    if (writing || failing || recovering || queue.length === 0 || pipeline.length >= maxInFlight) return;
    const newest = pipeline[pipeline.length - 1];
    if (newest) {
      const wait = newest.started + pipelineAfterMs - clock();
      if (wait > 0) {
        pipelineTimer ??= setTimeout(() => {
          pipelineTimer = undefined;
          kick();
        }, Math.ceil(wait));
        pipelineTimer.unref();
        return;
      }
    }
    writing = true;
    writeNext()
      .finally(() => {
        writing = false;
        kick();
        recover().then(notifyDrained, backgroundFailed);
      })
      .catch(backgroundFailed);
  };

  // Appends made during one turn of the event loop (every request read in one poll) share a batch:
  // the write waits for the check phase of that turn, not for a timer.
  let flushScheduled = false;
  const flush = (): void => {
    flushScheduled = false;
    kick();
  };

  return {
    enqueue(p) {
      queue.push(p);
      if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(flush);
      }
    },
    get queued() {
      return queue.length + pipeline.reduce((n, e) => n + e.batch.length, 0);
    },
    get broken() {
      return broken;
    },
    stats: () => ({ ...stats, syncMsTotal: Math.round(stats.syncMsTotal), syncMsMax: Math.round(stats.syncMsMax) }),
    async close() {
      await idle();
      clearTimeout(pipelineTimer);
      await extended();
      try {
        if (!broken) await trim().catch(() => undefined);
      } finally {
        await fh.close();
        await thread?.close();
      }
    },
  };
}
