import type { FileHandle } from 'node:fs/promises';
import type { Logger } from '../logger.js';

/**
 * The preallocated space of the active spool segment: frames are written into zeros already on
 * disk, so that an append's fdatasync does not also carry the file's growth (a metadata journal
 * commit). Space is added a step at a time, and the next step is written in the background once
 * the current one is half used, so that appends do not wait for 4 MiB of zeros and their fsync
 * (tens of milliseconds on a busy disk). It writes only past `allocated`, where no frame goes
 * until it is done; a cut-back, rotation or close waits for it (`extended`).
 */
export interface SegmentSpace {
  /** The active segment's open file. */
  readonly fh: FileHandle;
  /** Bytes allocated in that file (preallocated zeros included). */
  readonly allocated: number;
  /** True while a background step is being written. */
  readonly extending: boolean;
  /** Starts the next step in the background when less than half a step is left past `written`. */
  extendAhead(written: number): void;
  /** Waits for a background step. */
  extended(): Promise<void>;
  /** Allocates at least up to `needed` now (a batch larger than what is left). */
  grow(needed: number): Promise<void>;
  /** Cuts the file back to `size`, dropping torn frames or the preallocated tail; `sync` makes it durable. */
  cutTo(size: number, sync: boolean): Promise<void>;
  /** The next segment's file (a rotation), empty. */
  reset(fh: FileHandle): void;
}

export interface SegmentSpaceOptions {
  fh: FileHandle;
  allocated: number;
  maxSegmentBytes: number;
  /** Called after every background step, written or failed. */
  onExtended(): void;
  logger?: Logger;
}

/**
 * The preallocated zeros are written this much at a time. Linux (ext4 since 6.16, XFS earlier)
 * backs a large write with large folios, and every later small write into one walks all of its
 * blocks: a 2 KiB append into space written as one 4 MiB piece cost 5.7-6.6 us of CPU, against
 * 1.7-2.0 us into space written 64 KiB at a time (bench/results/notes.md, "Issue 17, the
 * preallocated space's folios").
 */
export const ZERO_WRITE_BYTES = 64 * 1024;

export function createSegmentSpace(o: SegmentSpaceOptions): SegmentSpace {
  const { maxSegmentBytes, logger } = o;
  const step = Math.min(4 * 1024 * 1024, Math.max(64 * 1024, maxSegmentBytes));
  let fh = o.fh;
  let allocated = o.allocated;
  let zeroPiece: Buffer | undefined;
  let extending: Promise<void> | undefined;

  const grow = async (needed: number): Promise<void> => {
    const handle = fh;
    const base = allocated;
    const size = Math.max(step, needed - base);
    // In pieces of ZERO_WRITE_BYTES: the page cache sizes its folios by the write, and an append
    // into a folio of megabytes walks every block of it (see ZERO_WRITE_BYTES).
    const zeros = (zeroPiece ??= Buffer.alloc(ZERO_WRITE_BYTES));
    let off = 0;
    while (off < size) off += (await handle.write(zeros, 0, Math.min(ZERO_WRITE_BYTES, size - off), base + off)).bytesWritten;
    await handle.sync();
    // A cut-back or rotation in the meantime: this space is no longer where frames go.
    if (handle === fh && allocated === base) allocated = base + size;
  };

  return {
    get fh() {
      return fh;
    },
    get allocated() {
      return allocated;
    },
    get extending() {
      return extending !== undefined;
    },
    extendAhead(written) {
      if (extending || allocated >= maxSegmentBytes || allocated - written > step / 2) return;
      extending = grow(allocated + 1)
        .catch((err: unknown) => {
          logger?.warn({ err: { code: (err as NodeJS.ErrnoException).code, message: (err as Error).message } }, 'spool: preallocating ahead failed; the next write that needs the space tries again');
        })
        .finally(() => {
          extending = undefined;
          o.onExtended();
        });
    },
    async extended() {
      while (extending) await extending;
    },
    grow,
    async cutTo(size, sync) {
      await fh.truncate(size);
      if (sync) await fh.sync();
      allocated = size;
    },
    reset(next) {
      fh = next;
      allocated = 0;
    },
  };
}
