import { Worker } from 'node:worker_threads';

/**
 * fdatasync on threads of the spool's own that keep syncing while there is something to sync.
 * Through the thread pool every batch pays a dispatch and a wake-up on the receiver's thread, and
 * on a busy machine the woken pool thread often takes the receiver's core. Here the receiver only
 * publishes "written up to batch N" in shared memory; an idle thread claims every batch written so
 * far and syncs once for all of them, and sleeps only when nothing is left to claim.
 */
export interface SyncThread {
  /**
   * Shared memory to encode the next batch's frames into (`size` bytes), for the thread that
   * syncs the batch to write (`datasync` with a position); undefined when there is no room (a
   * large batch, or many in flight): the caller writes that batch itself.
   */
  frameSpace(size: number): Buffer | undefined;
  /**
   * Calls `done` once a sync of the file at `path` that started after this call has ended (or
   * failed). With `position`, the frames of the last `frameSpace` are first written there, by the
   * thread that syncs them. Answers come in the order of the requests. Every earlier request must
   * have been answered before `path` changes (a rotation).
   */
  datasync(path: string, done: (err: Error | null) => void, position?: number): void;
  /**
   * Answers at once every request whose sync has ended (one read of shared memory), without
   * waiting for the thread's message: a receiver busy with other deliveries reaches that message
   * only on a later turn of its event loop, on a loaded machine milliseconds later
   * (bench/results/notes.md, "the receiver's throughput ratio"). Failures still come by message.
   */
  collect(): void;
  /** fdatasync calls made so far (each covers the requests of one claim). */
  syncs(): number;
  /** Ends the threads once every requested sync has been answered. */
  close(): Promise<void>;
}

// Slots of the shared state (Int32): the batch number last requested, the threads asleep, the
// stop flag, the batch number the newest sync was claimed for, the file's generation, its path's
// length in bytes, a counter bumped by every request and by the stop, which is what a sleeping
// thread waits on, the batch number up to which every batch is durable, and the one up to which
// every batch is written; the path follows, then a table of batches by batch number modulo its
// size (their file positions, as Float64; then, as Int32, where the batch's frames are in the
// frame space, their length, 0 when the receiver wrote them itself, and the batch's number once
// written and once durable), then the frame space. Batch numbers only grow; 2^31 batches is far
// beyond a receiver's life.
const REQUESTED = 0;
const SLEEPERS = 1;
const STOP = 2;
const CLAIMED = 3;
const GENERATION = 4;
const PATH_LENGTH = 5;
const WAKE = 6;
const SYNCED = 7;
const WRITTEN = 8;
const PATH_AT = 16 * Int32Array.BYTES_PER_ELEMENT;
const MAX_PATH_BYTES = 4096;
const TABLE_AT = PATH_AT + MAX_PATH_BYTES;
/** Int32s a batch takes in the table, and where its written and durable marks are. */
const ROW = 4;
const WRITTEN_MARK = 2;
const DURABLE_MARK = 3;
/** Bytes a batch takes in the table (its Float64 position and its row). */
const SLOT_BYTES = 8 + 4 * ROW;

/**
 * Moves `counter` (SYNCED or WRITTEN) over every batch after it whose `mark` holds its number, as
 * CommonJS source shared by the threads and the receiver. Each marks its batches first, then
 * moves the counter: whichever marks last sees the other's marks.
 */
const ADVANCE = `(state, table, slots, counter, mark) => {
  const marked = (batch) => Atomics.load(table, (batch % slots) * ${ROW} + mark) === batch;
  for (let done = Atomics.load(state, counter); marked(done + 1); done = Atomics.load(state, counter)) {
    let to = done + 1;
    while (marked(to + 1)) to++;
    Atomics.compareExchange(state, counter, done, to);
  }
}`;
/** Raises `counter` to `to` at least. */
const RAISE = `(state, counter, to) => {
  for (let at = Atomics.load(state, counter); at < to; at = Atomics.load(state, counter)) if (Atomics.compareExchange(state, counter, at, to) === at) break;
}`;
const advance = new Function(`return ${ADVANCE}`)() as (state: Int32Array, table: Int32Array, slots: number, counter: number, mark: number) => void;

/**
 * The frame space: batches of up to this size (the usual batch is a few KiB) are written by the
 * thread that syncs them. The write was 5-6 % of the receiver's thread (the page cache copy and
 * ext4's inode dirtying): bench/results/notes.md, "Issue 17, writes on the sync threads".
 */
const FRAME_SPACE_BYTES = 1024 * 1024;

/**
 * The threads' loop, as CommonJS source (an eval worker runs the same under tsx and compiled).
 * A thread claims every batch requested so far (compare-and-swap, so two threads never sync for
 * the same claim), writes the claimed batches whose frames are in the frame space, syncs, and
 * answers with [from, to] (the claim: batches after `from` up to `to`) or [from, to, code,
 * message] when the write or sync failed. With two threads, a batch written while one sync runs
 * starts its own write and sync at once instead of waiting for that one to end. A sync covers
 * only its claim: the other thread may still be writing an earlier one. So each thread marks its
 * batches durable in the table, then moves SYNCED over every batch marked in a row from there:
 * whichever thread marks last sees the other's marks.
 *
 * Each thread writes and syncs through a descriptor of its own, opened by path: Linux reports a
 * writeback error to one fsync per open file description, so threads sharing the receiver's
 * descriptor could each miss an error the other took, and acknowledge pages that never reached
 * the disk.
 */
const loop = (slots: number): string => `
const { workerData, parentPort } = require('node:worker_threads');
const { closeSync, fdatasyncSync, openSync, writeSync } = require('node:fs');
const state = new Int32Array(workerData);
const pathBytes = new Uint8Array(workerData, ${PATH_AT}, ${MAX_PATH_BYTES});
const positions = new Float64Array(workerData, ${TABLE_AT}, ${slots});
const table = new Int32Array(workerData, ${TABLE_AT + 8 * slots}, ${ROW * slots});
const frames = Buffer.from(workerData, ${TABLE_AT + SLOT_BYTES * slots}, ${FRAME_SPACE_BYTES});
const advance = ${ADVANCE};
const raise = ${RAISE};
let fd = -1;
let generation = 0;
const descriptor = () => {
  const current = Atomics.load(state, ${GENERATION});
  if (current !== generation || fd < 0) {
    if (fd >= 0) closeSync(fd);
    fd = -1;
    generation = current;
    const path = Buffer.from(pathBytes.slice(0, Atomics.load(state, ${PATH_LENGTH}))).toString('utf8');
    fd = openSync(path, 'r+');
  }
  return fd;
};
for (;;) {
  const claimed = Atomics.load(state, ${CLAIMED});
  const target = Atomics.load(state, ${REQUESTED});
  if (target === claimed) {
    if (Atomics.load(state, ${STOP}) === 1) break;
    // Read the counter before the last checks: a request or the stop that lands after them bumps
    // it, so the wait returns at once or is woken. (Waiting on REQUESTED, a stop between the checks
    // and the wait was never seen, and close() could wait forever.)
    const wake = Atomics.load(state, ${WAKE});
    Atomics.add(state, ${SLEEPERS}, 1);
    if (Atomics.load(state, ${REQUESTED}) === target && Atomics.load(state, ${STOP}) === 0) Atomics.wait(state, ${WAKE}, wake);
    Atomics.sub(state, ${SLEEPERS}, 1);
    continue;
  }
  if (Atomics.compareExchange(state, ${CLAIMED}, claimed, target) !== claimed) continue;
  try {
    const f = descriptor();
    for (let b = claimed + 1; b <= target; b++) {
      const row = (b % ${slots}) * ${ROW};
      const at = table[row];
      const length = table[row + 1];
      const position = positions[b % ${slots}];
      for (let off = 0; off < length; ) off += writeSync(f, frames, at + off, length - off, position + off);
      Atomics.store(table, row + ${WRITTEN_MARK}, b);
    }
    advance(state, table, ${slots}, ${WRITTEN}, ${WRITTEN_MARK});
    // Every batch up to here was written before the sync starts: the sync covers them too.
    const covered = Atomics.load(state, ${WRITTEN});
    fdatasyncSync(f);
    for (let b = claimed + 1; b <= target; b++) Atomics.store(table, (b % ${slots}) * ${ROW} + ${DURABLE_MARK}, b);
    raise(state, ${SYNCED}, covered);
    advance(state, table, ${slots}, ${SYNCED}, ${DURABLE_MARK});
    parentPort.postMessage([claimed, target, covered]);
  } catch (err) {
    parentPort.postMessage([claimed, target, String(err && err.code), String(err && err.message)]);
  }
}
if (fd >= 0) closeSync(fd);
`;

/**
 * Two: a batch written while one sync runs starts its own sync on the other thread instead of
 * waiting for that sync to end, which shortens the wait for the acknowledgement when syncs are
 * slow (a busy disk). Safe because each thread syncs through a descriptor of its own. Figures:
 * bench/results/webhooks-h17-two-threads.json and bench/results/notes.md ("spool sync threads").
 */
export const DEFAULT_SYNC_THREADS = 2;

/** Requests not yet answered, at most, unless `startSyncThread` is given more. */
export const DEFAULT_MAX_PENDING = 64;

interface Waiting {
  batch: number;
  done: (err: Error | null) => void;
  /** Where its frames are in the frame space (-1: written by the caller). */
  framesAt: number;
  /** Set once its claim was answered: null (durable) or the failure. */
  outcome: Error | null | undefined;
}

/** `maxPending`: requests not yet answered, at most (the writer's batches in flight). */
export function startSyncThread(threads = DEFAULT_SYNC_THREADS, maxPending = DEFAULT_MAX_PENDING): SyncThread {
  const slots = maxPending + 1;
  const shared = new SharedArrayBuffer(TABLE_AT + SLOT_BYTES * slots + FRAME_SPACE_BYTES);
  const state = new Int32Array(shared, 0, PATH_AT / Int32Array.BYTES_PER_ELEMENT);
  const pathBytes = new Uint8Array(shared, PATH_AT, MAX_PATH_BYTES);
  const positions = new Float64Array(shared, TABLE_AT, slots);
  const table = new Int32Array(shared, TABLE_AT + 8 * slots, ROW * slots);
  const frames = Buffer.from(shared, TABLE_AT + SLOT_BYTES * slots, FRAME_SPACE_BYTES);
  const source = loop(slots);
  const workers = Array.from({ length: Math.max(1, threads) }, () => new Worker(source, { eval: true, workerData: shared }));
  // A receiver with nothing to sync must be able to exit; a request in flight keeps it alive.
  let referenced = true;
  const ref = (on: boolean): void => {
    if (on === referenced) return;
    referenced = on;
    for (const w of workers)
      if (on) w.ref();
      else w.unref();
  };
  ref(false);
  const waiting: Waiting[] = [];
  let requested = 0;
  let path: string | undefined;
  let failed: Error | undefined;
  let syncs = 0;
  let closing = false;
  // The frame space is used in request order and freed in answer order: the next free byte, and
  // the last `frameSpace` handed out and not yet requested.
  let head = 0;
  let reserved: { at: number; length: number } | undefined;

  // Claims end in any order (a later claim's sync can end first); requests are answered in order.
  // Once closing, the threads stay referenced until they exit: the first thread's exit must not
  // let the process end (and close() never resolve) while the other is still stopping.
  const answer = (from: number, to: number, err: Error | null): void => {
    for (const w of waiting) {
      if (w.batch > to) break;
      if (w.batch > from && w.outcome === undefined) w.outcome = err;
    }
    while (waiting.length > 0 && waiting[0]!.outcome !== undefined) {
      const w = waiting.shift()!;
      w.done(w.outcome!);
    }
    if (waiting.length === 0 && !closing) ref(false);
  };
  const exits = workers.map((worker) => {
    // [from, to, covered]: the claim after `from` up to `to` is durable, and so is every batch up
    // to `covered` (written before the sync started); [from, to, code, message]: the claim failed.
    worker.on('message', (m: [number, number, number] | [number, number, string, string]) => {
      syncs++;
      if (m.length === 3) {
        answer(m[0], m[1], null);
        answer(-Infinity, m[2], null);
        return;
      }
      answer(m[0], m[1], Object.assign(new Error(m[3]), { code: m[2] }));
      // Failed batches are answered now: marked written and durable in the table, they no longer
      // hold the counters back from the batches after them (collect() only answers requests
      // still waiting, and an answer is never changed).
      for (let b = m[0] + 1; b <= m[1]; b++) {
        Atomics.store(table, (b % slots) * ROW + WRITTEN_MARK, b);
        Atomics.store(table, (b % slots) * ROW + DURABLE_MARK, b);
      }
      advance(state, table, slots, WRITTEN, WRITTEN_MARK);
      advance(state, table, slots, SYNCED, DURABLE_MARK);
    });
    worker.on('error', (err) => {
      failed ??= err;
      answer(-Infinity, Infinity, err);
    });
    return new Promise<void>((resolve) =>
      worker.once('exit', () => {
        failed ??= new Error('the spool sync thread stopped');
        answer(-Infinity, Infinity, failed);
        resolve();
      }),
    );
  });

  return {
    frameSpace(size) {
      reserved = undefined;
      if (failed || size <= 0 || size > FRAME_SPACE_BYTES || waiting.length >= maxPending) return undefined;
      let oldest = -1;
      for (const w of waiting) {
        if (w.framesAt >= 0) {
          oldest = w.framesAt;
          break;
        }
      }
      let at: number;
      if (oldest < 0) at = 0;
      else if (head > oldest) at = head + size <= FRAME_SPACE_BYTES ? head : size <= oldest ? 0 : -1;
      else at = head + size <= oldest ? head : -1;
      if (at < 0) return undefined;
      reserved = { at, length: size };
      return frames.subarray(at, at + size);
    },
    datasync(target, done, position) {
      if (failed) {
        done(failed);
        return;
      }
      if (waiting.length >= maxPending) throw new Error(`sync thread: more than ${maxPending} requests in flight`);
      if (position !== undefined && !reserved) throw new Error('sync thread: frames to write at a position, but no frame space was taken for them');
      if (target !== path) {
        // Another file (a rotation): the threads open it at their next claim.
        if (waiting.length > 0) throw new Error('sync thread: the file changed while syncs of the previous one were still running');
        const bytes = Buffer.from(target, 'utf8');
        if (bytes.length > MAX_PATH_BYTES) {
          done(new Error(`The spool path is longer than ${MAX_PATH_BYTES} bytes; use a shorter spool directory.`));
          return;
        }
        path = target;
        pathBytes.set(bytes);
        Atomics.store(state, PATH_LENGTH, bytes.length);
        Atomics.add(state, GENERATION, 1);
      }
      const batch = ++requested;
      const slot = batch % slots;
      let framesAt = -1;
      if (position !== undefined && reserved) {
        framesAt = reserved.at;
        table[slot * ROW] = reserved.at;
        table[slot * ROW + 1] = reserved.length;
        positions[slot] = position;
        head = reserved.at + reserved.length;
      } else {
        // Written by the caller already.
        table[slot * ROW + 1] = 0;
        Atomics.store(table, slot * ROW + WRITTEN_MARK, batch);
      }
      reserved = undefined;
      waiting.push({ batch, done, framesAt, outcome: undefined });
      ref(true);
      if (framesAt < 0) advance(state, table, slots, WRITTEN, WRITTEN_MARK);
      // The table and the frames above are published by this store (the threads read them after
      // loading REQUESTED).
      Atomics.store(state, REQUESTED, batch);
      Atomics.add(state, WAKE, 1);
      if (Atomics.load(state, SLEEPERS) > 0) Atomics.notify(state, WAKE, 1);
    },
    collect() {
      if (waiting.length === 0 || failed) return;
      const synced = Atomics.load(state, SYNCED);
      if (waiting[0]!.batch <= synced) answer(-Infinity, synced, null);
    },
    syncs: () => syncs,
    async close() {
      closing = true;
      Atomics.store(state, STOP, 1);
      Atomics.add(state, WAKE, 1);
      Atomics.notify(state, WAKE);
      ref(true);
      await Promise.all(exits);
    },
  };
}
