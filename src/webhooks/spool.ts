import { randomUUID } from 'node:crypto';
import { mkdir, open, readFile, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../logger.js';
import { SpoolUnavailableError } from './errors.js';
import { decodeFrames, frameLength, type SpoolEntry, type SpoolRecord } from './spool-frame.js';
import type { SpoolIo } from './spool-io.js';
import { createSpoolWriter, type PendingAppend, type SpoolWriter, type SpoolWriterStats } from './spool-writer.js';
import { createDedupeIndex, type AppendDone, type AppendOutcome, type InflightAppend } from './spool-dedupe.js';
import { acquireSpoolLock } from './spool-lock.js';
import { bodyKey, fsyncDir, recoverSpool, segmentPath, type SegmentInfo } from './spool-recovery.js';

export interface SpoolOptions {
  dir: string;
  /** Start a new segment once the current one reaches this size. */
  maxSegmentBytes?: number;
  /** Keep delivery ids (and their segments) at least this long for dedup; the CRM retries for ~27 h. */
  retentionMs?: number;
  /** More unsynced deliveries than this are refused with 503 rather than queued without bound. */
  maxQueued?: number;
  /** fdatasyncs that may run at once on the sync threads. */
  syncThreads?: number;
  /** Batches written and not yet durable, at most (default: the writer's MAX_IN_FLIGHT). */
  syncsInFlight?: number;
  /** The write and sync calls (tests hold a sync back or fail it). */
  io?: SpoolIo;
  logger?: Logger;
  now?: () => number;
}

/** `replayed`: the same body is already stored (or being stored) under another delivery id. */
export type { AppendDone, AppendOutcome } from './spool-dedupe.js';

/** The writer's figures (batches, sync times and counts) and the log's. */
export interface SpoolStats extends SpoolWriterStats {
  committedSeq: number;
  appliedSeq: number;
  segments: number;
  /** Delivery ids kept for dedup, appends in flight included. */
  indexedDeliveries: number;
  queued: number;
  healthy: boolean;
}

/** An append-only, fsynced log of deliveries with dedup by delivery id and by body, over the retention. */
export interface Spool {
  /** Stable id of this spool directory; the applier's offset is recorded against it. */
  readonly id: string;
  /** Resolves once the delivery is on disk (fsynced) or known already; rejects with SpoolUnavailableError. */
  append(entry: SpoolEntry): Promise<AppendOutcome>;
  /**
   * `append` with a callback and no promise (the receiver's path): `done` is called once, at once
   * when the delivery is known already or refused, else when its batch is durable or failed.
   */
  appendThen(entry: SpoolEntry, done: AppendDone): void;
  /** Up to `max` durable records (and about `maxBytes` of bodies, at least one record) after `afterSeq`, in order. */
  read(afterSeq: number, max: number, maxBytes?: number): Promise<SpoolRecord[]>;
  /** Everything up to `seq` is applied: segments fully applied and past retention are deleted. */
  markApplied(seq: number): Promise<void>;
  stats(): SpoolStats;
  close(): Promise<void>;
}

export const DEFAULT_RETENTION_MS = 8 * 24 * 3600 * 1000;

export async function withSpool<T>(options: SpoolOptions, fn: (spool: Spool) => Promise<T>): Promise<T> {
  const spool = await openSpool(options);
  try {
    return await fn(spool);
  } finally {
    await spool.close();
  }
}

export async function openSpool(options: SpoolOptions): Promise<Spool> {
  const { dir, logger } = options;
  const maxSegmentBytes = options.maxSegmentBytes ?? 64 * 1024 * 1024;
  const retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
  const maxQueued = options.maxQueued ?? 20_000;
  const now = options.now ?? Date.now;

  // The lock comes first: recovery cuts torn tails, which must never touch a live receiver's file.
  try {
    await mkdir(dir, { recursive: true });
  } catch (cause) {
    throw new SpoolUnavailableError(`Cannot create the webhook spool directory ${dir}; check the path and its permissions.`, { cause });
  }
  const release = acquireSpoolLock(dir);
  let recovered;
  let id: string;
  try {
    recovered = await recoverSpool(dir, logger);
    // An empty log starts a new identity: an offset recorded for earlier records must not skip new ones.
    id = await spoolId(dir, recovered.lastSeq === 0);
  } catch (cause) {
    release();
    throw new SpoolUnavailableError(`Cannot read the webhook spool in ${dir}; check the directory and its permissions.`, { cause });
  }
  const { segments } = recovered;
  const seen = createDedupeIndex(recovered.seen, logger);
  let committedSeq = recovered.lastSeq;
  let nextSeq = committedSeq + 1;
  let appliedSeq = 0;

  let writer: SpoolWriter;
  try {
    const last = segments.at(-1);
    let active: SegmentInfo;
    let fh: FileHandle;
    let allocated = 0;
    if (last && last.size < maxSegmentBytes) {
      active = last;
      fh = await open(active.path, 'r+');
      allocated = (await fh.stat()).size;
    } else {
      active = { no: (last?.no ?? 0) + 1, path: segmentPath(dir, (last?.no ?? 0) + 1), size: 0, firstSeq: 0, lastSeq: 0, newestAt: 0 };
      fh = await open(active.path, 'w', 0o600);
      await fsyncDir(dir);
      segments.push(active);
    }
    writer = createSpoolWriter({
      dir,
      active,
      fh,
      allocated,
      maxSegmentBytes,
      ...(logger ? { logger } : {}),
      ...(options.syncsInFlight ? { syncsInFlight: options.syncsInFlight } : {}),
      ...(options.syncThreads ? { syncThreads: options.syncThreads } : {}),
      ...(options.io ? { io: options.io } : {}),
      onSegment: (seg) => segments.push(seg),
      onDurable: (batch, seg) => {
        for (const p of batch) {
          const r = p.record;
          if (seg.firstSeq === 0) seg.firstSeq = r.seq;
          seg.lastSeq = r.seq;
          seg.newestAt = Math.max(seg.newestAt, r.receivedAt);
          seen.durable(p, r.seq);
        }
        committedSeq = batch.at(-1)!.record.seq;
      },
    });
  } catch (cause) {
    release();
    throw new SpoolUnavailableError(`Cannot open a spool segment in ${dir}; check that the directory is writable.`, { cause });
  }

  let closed = false;
  // The reader remembers where the last read stopped so the applier does not rescan a segment.
  let cursor: { segNo: number; offset: number; seq: number } | undefined;

  const readSegment = async (seg: SegmentInfo, from: number, afterSeq: number, maxIn: number, out: SpoolRecord[], budget: { bytes: number }): Promise<void> => {
    let max = maxIn;
    const take = (record: SpoolRecord): void => {
      out.push(record);
      budget.bytes -= record.body.length;
      if (budget.bytes <= 0) max = out.length;
    };
    const end = seg.size;
    if (from >= end) return;
    const rh = await open(seg.path, 'r');
    try {
      let pos = from;
      while (pos < end && out.length < max) {
        const len = Math.min(end - pos, 4 * 1024 * 1024);
        const buf = Buffer.allocUnsafe(len);
        const { bytesRead } = await rh.read(buf, 0, len, pos);
        const chunk = buf.subarray(0, bytesRead);
        const decoded = decodeFrames(chunk, 0, max - out.length + 1_000_000);
        for (const { record, end: e } of decoded.records) {
          if (record.seq > afterSeq && out.length < max) {
            take(record);
            cursor = { segNo: seg.no, offset: pos + e, seq: record.seq };
          } else if (record.seq <= afterSeq) {
            cursor = { segNo: seg.no, offset: pos + e, seq: record.seq };
          }
          if (out.length >= max) break;
        }
        if (decoded.records.length === 0) {
          if (decoded.truncated && bytesRead === len && len < end - pos) {
            // A frame straddles the chunk edge: read it whole.
            const need = chunk.readUInt32LE(0) + 8;
            const big = Buffer.allocUnsafe(need);
            await rh.read(big, 0, need, pos);
            const one = decodeFrames(big, 0, 1);
            if (one.records.length === 0) return;
            const { record } = one.records[0]!;
            if (record.seq > afterSeq) take(record);
            cursor = { segNo: seg.no, offset: pos + need, seq: record.seq };
            pos += need;
            continue;
          }
          return;
        }
        pos += decoded.validEnd;
      }
    } finally {
      await rh.close();
    }
  };

  /**
   * One object per append: the record written, the writer's request and what later copies wait
   * on. A record, a request, an in-flight marker and two closures per delivery were garbage for
   * the GC's helper threads, which compete with the receiver's thread on a small machine
   * (bench/results/notes.md, issue 17).
   */
  class Append implements SpoolRecord, PendingAppend, InflightAppend {
    readonly record: SpoolRecord = this;
    readonly deliveryId: string;
    readonly webhookId: number;
    readonly event: string;
    readonly known: boolean;
    readonly receivedAt: number;
    readonly body: Buffer;
    readonly seq: number;
    readonly frameBytes: number;
    waiting: (() => void)[] | undefined = undefined;
    failed: Error | undefined = undefined;
    seenAt = 0;

    constructor(
      entry: SpoolEntry,
      private readonly done: AppendDone,
    ) {
      this.deliveryId = entry.deliveryId;
      this.webhookId = entry.webhookId;
      this.event = entry.event;
      this.known = entry.known;
      this.receivedAt = entry.receivedAt;
      this.body = entry.body;
      this.seq = nextSeq++;
      this.frameBytes = frameLength(this);
    }

    resolve(): void {
      seen.settle(this, this.done, null, 'accepted');
    }

    reject(err: Error): void {
      seen.forget(this);
      this.failed = err;
      seen.settle(this, this.done, err);
    }
  }

  const appendThen = (entry: SpoolEntry, done: AppendDone): void => {
    // Earlier deliveries whose sync has ended are answered first, before this one takes a seq.
    writer.collect();
    if (closed || writer.broken) return done(writer.broken ?? new SpoolUnavailableError('The webhook spool is closed; the receiver is shutting down.'));
    if (seen.answerDuplicate(entry.deliveryId, done)) return;
    // A replay: the signature covers only the body, so the same signed body under a new delivery id.
    const key = bodyKey(entry.body);
    if (seen.answerReplay(key, done)) return;
    if (writer.queued >= maxQueued) return done(new SpoolUnavailableError('The webhook spool is saturated; the CRM will retry.'));
    const append = new Append(entry, done);
    writer.enqueue(append);
    seen.enter(entry.deliveryId, key, append);
  };

  return {
    id,
    append(entry) {
      return new Promise((resolve, reject) => appendThen(entry, (err, outcome) => (err === null ? resolve(outcome!) : reject(err))));
    },

    appendThen,

    async read(afterSeq, max, maxBytes = Infinity) {
      const out: SpoolRecord[] = [];
      const budget = { bytes: maxBytes };
      for (const seg of segments) {
        if (out.length >= max || budget.bytes <= 0) break;
        if (seg.lastSeq <= afterSeq) continue;
        const from = cursor && cursor.segNo === seg.no && cursor.seq <= afterSeq ? cursor.offset : 0;
        await readSegment(seg, from, afterSeq, max, out, budget);
      }
      return out;
    },

    async markApplied(seq) {
      appliedSeq = Math.max(appliedSeq, seq);
      const cutoff = now() - retentionMs;
      while (segments.length > 1) {
        const seg = segments[0]!;
        if (seg === segments.at(-1) || seg.lastSeq > appliedSeq || seg.newestAt >= cutoff) break;
        await unlink(seg.path);
        segments.shift();
        seen.prune(seg.lastSeq);
        logger?.info({ segment: seg.no, lastSeq: seg.lastSeq }, 'spool: pruned an applied segment past retention');
      }
    },

    stats: () => ({
      committedSeq,
      appliedSeq,
      segments: segments.length,
      indexedDeliveries: seen.deliveries,
      queued: writer.queued,
      healthy: !writer.broken && !closed,
      ...writer.stats(),
    }),

    async close() {
      if (closed) return;
      closed = true;
      try {
        await writer.close();
      } finally {
        release();
      }
    },
  };
}

/** A new spool directory gets a fresh id, so an offset recorded for a wiped spool is not reused. */
async function spoolId(dir: string, fresh: boolean): Promise<string> {
  const path = join(dir, 'SPOOL_ID');
  if (!fresh) {
    try {
      const text = (await readFile(path, 'utf8')).trim();
      if (/^[0-9a-f-]{36}$/.test(text)) return text;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  const id = randomUUID();
  await writeFile(path, `${id}\n`, { mode: 0o600, flush: true });
  await fsyncDir(dir);
  return id;
}
