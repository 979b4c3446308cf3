import { encodeFrameInto, type SpoolRecord } from './spool-frame.js';

/** Batches up to this size are encoded into one reused buffer; a larger one gets its own. */
const MAX_SCRATCH_BYTES = 1024 * 1024;

/** A record and the length of its frame (`frameLength(record)`). */
export interface FramedRecord {
  record: SpoolRecord;
  frameBytes: number;
}

/**
 * Encodes a batch's frames into one buffer, valid until the next call. The spool writes each batch
 * synchronously and its records keep their own bodies, so one buffer serves every batch: a new one
 * per batch (above 4 KiB, an ArrayBuffer of its own) was garbage for the receiver's GC.
 */
export function createBatchFrames(): (batch: readonly FramedRecord[], size: number) => Buffer {
  let scratch = Buffer.allocUnsafe(0);
  return (batch, size) => {
    let buf: Buffer;
    if (size > MAX_SCRATCH_BYTES) buf = Buffer.allocUnsafe(size);
    else {
      if (scratch.length < size) scratch = Buffer.allocUnsafe(Math.min(MAX_SCRATCH_BYTES, Math.max(size, 2 * scratch.length, 64 * 1024)));
      buf = scratch.subarray(0, size);
    }
    let at = 0;
    for (const p of batch) at = encodeFrameInto(p.record, buf, at);
    return buf;
  };
}
