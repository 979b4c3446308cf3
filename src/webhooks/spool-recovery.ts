import { hash } from 'node:crypto';
import { mkdir, open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../logger.js';
import type { InflightAppend } from './spool-dedupe.js';
import { decodeFrames } from './spool-frame.js';
import { createSeenTable, type SeenTable } from './seen-table.js';

export interface SegmentInfo {
  no: number;
  path: string;
  /** Bytes of whole, durable frames. */
  size: number;
  firstSeq: number;
  /** 0 when the segment holds no record. */
  lastSeq: number;
  newestAt: number;
}

export interface RecoveredSpool {
  segments: SegmentInfo[];
  /**
   * Every delivery id and body key on disk, to its seq, in seq order (which pruning relies on): a
   * body is stored once, whatever delivery id it comes under.
   */
  seen: SeenTable<InflightAppend>;
  lastSeq: number;
}

/**
 * The key a body is deduplicated by: SHA-256 of the raw bytes, one character a byte ('binary' is
 * latin1). The keys stay in memory over the retention: the shortest string (32 characters; base64
 * took 44).
 */
export function bodyKey(body: Uint8Array): string {
  return hash('sha256', body, 'binary');
}

const SEGMENT = /^segment-(\d{12})\.log$/;

export function segmentPath(dir: string, no: number): string {
  return join(dir, `segment-${String(no).padStart(12, '0')}.log`);
}

export async function fsyncDir(dir: string): Promise<void> {
  const d = await open(dir, 'r');
  try {
    await d.sync();
  } finally {
    await d.close();
  }
}

/**
 * Rebuilds the spool's state from its segments: the dedup index (every delivery id still on disk)
 * and each segment's seq range. A torn frame at the end of the last segment (a crash mid-write,
 * never acknowledged) is cut off; damage elsewhere is reported and skipped.
 */
export async function recoverSpool(dir: string, logger?: Logger): Promise<RecoveredSpool> {
  await mkdir(dir, { recursive: true });
  const names = (await readdir(dir)).filter((n) => SEGMENT.test(n)).sort();
  const segments: SegmentInfo[] = [];
  const seen = createSeenTable<InflightAppend>();
  let lastSeq = 0;
  for (const [i, name] of names.entries()) {
    const no = Number(SEGMENT.exec(name)![1]);
    const path = join(dir, name);
    const buf = await readFile(path);
    const decoded = decodeFrames(buf);
    const seg: SegmentInfo = { no, path, size: decoded.validEnd, firstSeq: 0, lastSeq: 0, newestAt: 0 };
    for (const { record } of decoded.records) {
      if (record.seq <= lastSeq) continue;
      if (seg.firstSeq === 0) seg.firstSeq = record.seq;
      seg.lastSeq = record.seq;
      seg.newestAt = Math.max(seg.newestAt, record.receivedAt);
      lastSeq = record.seq;
      seen.add(record.deliveryId, bodyKey(record.body), record.seq);
    }
    if (decoded.validEnd < buf.length) {
      const isLast = i === names.length - 1;
      // Zeros after the last frame are preallocated space, not damage.
      const zeros = buf.subarray(decoded.validEnd).every((b) => b === 0);
      if (!zeros) logger?.warn({ segment: name, validBytes: decoded.validEnd, totalBytes: buf.length }, isLast ? 'spool: cutting off a torn tail' : 'spool: damaged frames skipped');
      if (isLast || zeros) {
        const fh = await open(path, 'r+');
        try {
          await fh.truncate(decoded.validEnd);
          await fh.sync();
        } finally {
          await fh.close();
        }
      }
    }
    segments.push(seg);
  }
  return { segments, seen, lastSeq };
}
