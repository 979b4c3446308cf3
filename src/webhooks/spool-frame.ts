import { crc32 } from 'node:zlib';

/** One delivery as the spool keeps it: the raw body byte for byte, plus what the receiver checked. */
export interface SpoolEntry {
  deliveryId: string;
  webhookId: number;
  event: string;
  /** False for a correctly signed event whose name the spec does not list: kept and flagged. */
  known: boolean;
  /** Milliseconds since the epoch when the receiver accepted it. */
  receivedAt: number;
  body: Buffer;
}

export interface SpoolRecord extends SpoolEntry {
  /** Position in the log, increasing; the applier's durable offset is the last seq it applied. */
  seq: number;
}

interface FrameMeta {
  s: number;
  d: string;
  w: number;
  e: string;
  k: 0 | 1;
  t: number;
}

const HEADER = 12;
/** A frame larger than this is corruption, not data (bodies are capped far below). */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;

/**
 * Frame layout: u32 payload length, u32 CRC-32 of the payload, then the payload: u32 meta length,
 * meta JSON, raw body. The CRC detects a torn tail after a crash, which recovery cuts off.
 */
export function encodeFrame(record: SpoolRecord): Buffer {
  const meta: FrameMeta = { s: record.seq, d: record.deliveryId, w: record.webhookId, e: record.event, k: record.known ? 1 : 0, t: record.receivedAt };
  const metaBuf = Buffer.from(JSON.stringify(meta), 'utf8');
  const payloadLen = 4 + metaBuf.length + record.body.length;
  const frame = Buffer.allocUnsafe(8 + payloadLen);
  frame.writeUInt32LE(payloadLen, 0);
  frame.writeUInt32LE(metaBuf.length, 8);
  metaBuf.copy(frame, HEADER);
  record.body.copy(frame, HEADER + metaBuf.length);
  frame.writeUInt32LE(crc32(frame.subarray(8)), 4);
  return frame;
}

export interface DecodedFrames {
  records: { record: SpoolRecord; end: number }[];
  /** Offset just past the last whole, valid frame. */
  validEnd: number;
  /** True when bytes after validEnd are not a whole valid frame (a torn write or corruption). */
  damaged: boolean;
  /** True when the buffer ends inside a frame that may be complete once more bytes are read. */
  truncated: boolean;
}

/** Decodes whole frames from `buf` starting at `start`; stops at the first incomplete or invalid one. */
export function decodeFrames(buf: Buffer, start = 0, limit = Infinity): DecodedFrames {
  const records: DecodedFrames['records'] = [];
  let pos = start;
  while (records.length < limit) {
    if (pos === buf.length) return { records, validEnd: pos, damaged: false, truncated: false };
    if (buf.length - pos < 8) return { records, validEnd: pos, damaged: false, truncated: true };
    const len = buf.readUInt32LE(pos);
    if (len < 4 || len > MAX_FRAME_BYTES) return { records, validEnd: pos, damaged: true, truncated: false };
    if (buf.length - pos - 8 < len) return { records, validEnd: pos, damaged: false, truncated: true };
    const payload = buf.subarray(pos + 8, pos + 8 + len);
    if (crc32(payload) !== buf.readUInt32LE(pos + 4)) return { records, validEnd: pos, damaged: true, truncated: false };
    const metaLen = payload.readUInt32LE(0);
    let meta: FrameMeta;
    try {
      if (metaLen > len - 4) throw new Error('meta length');
      meta = JSON.parse(payload.subarray(4, 4 + metaLen).toString('utf8')) as FrameMeta;
    } catch {
      return { records, validEnd: pos, damaged: true, truncated: false };
    }
    const end = pos + 8 + len;
    records.push({
      record: { seq: meta.s, deliveryId: meta.d, webhookId: meta.w, event: meta.e, known: meta.k === 1, receivedAt: meta.t, body: Buffer.from(payload.subarray(4 + metaLen)) },
      end,
    });
    pos = end;
  }
  return { records, validEnd: pos, damaged: false, truncated: false };
}
