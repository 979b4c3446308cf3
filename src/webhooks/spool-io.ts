import { fdatasync, writeSync } from 'node:fs';

/**
 * The two file calls made for every batch, when a test injects them to hold a sync back or fail
 * it. The write is synchronous: a positioned write of a few KiB into the page cache of a
 * preallocated file costs a few microseconds, while the same write through the thread pool costs
 * tens of microseconds of dispatch and wake-ups per batch. Without an injected `io`, the spool's
 * sync threads sync (sync-thread.ts).
 */
export interface SpoolIo {
  /** Writes all of `buf` at `position`; throws on failure. `buf` is reused once this returns. */
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
