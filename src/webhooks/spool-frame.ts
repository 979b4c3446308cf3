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

/** The metadata of frames written before the binary layout (still read). */
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
 * The binary metadata: a version byte (JSON metadata, the older layout, starts with `{`), the
 * known flag, u16 lengths of the delivery id and event, f64 seq, webhook id and receive time, then
 * the delivery id and event in UTF-8. Binary, because serializing JSON for every delivery cost
 * the receiver's thread more than the rest of the frame.
 */
const BINARY_META = 1;
const FIXED_META = 30;

/** The bytes `encodeFrame` takes for `record`. */
export function frameLength(record: SpoolRecord): number {
  return HEADER + FIXED_META + Buffer.byteLength(record.deliveryId, 'utf8') + Buffer.byteLength(record.event, 'utf8') + record.body.length;
}

/**
 * Frame layout: u32 payload length, u32 CRC-32 of the payload, then the payload: u32 meta length,
 * metadata, raw body. The CRC detects a torn tail after a crash, which recovery cuts off.
 */
export function encodeFrame(record: SpoolRecord): Buffer {
  const frame = Buffer.allocUnsafe(frameLength(record));
  encodeFrameInto(record, frame, 0);
  return frame;
}

/**
 * Encodes `record` into `buf` at `at` (`frameLength(record)` bytes) and returns where it ends: a
 * batch of frames goes into one buffer, written as it is.
 */
export function encodeFrameInto(record: SpoolRecord, buf: Buffer, at: number): number {
  const idLen = Buffer.byteLength(record.deliveryId, 'utf8');
  const eventLen = Buffer.byteLength(record.event, 'utf8');
  const metaLen = FIXED_META + idLen + eventLen;
  const payloadLen = 4 + metaLen + record.body.length;
  const end = at + 8 + payloadLen;
  if (end > buf.length) throw new RangeError('spool frame: the buffer is shorter than the frame');
  buf.writeUInt32LE(payloadLen, at);
  buf.writeUInt32LE(metaLen, at + 8);
  const m = at + HEADER;
  buf[m] = BINARY_META;
  buf[m + 1] = record.known ? 1 : 0;
  buf.writeUInt16LE(idLen, m + 2);
  buf.writeUInt16LE(eventLen, m + 4);
  buf.writeDoubleLE(record.seq, m + 6);
  buf.writeDoubleLE(record.webhookId, m + 14);
  buf.writeDoubleLE(record.receivedAt, m + 22);
  buf.write(record.deliveryId, m + FIXED_META, idLen, 'utf8');
  buf.write(record.event, m + FIXED_META + idLen, eventLen, 'utf8');
  record.body.copy(buf, m + metaLen);
  buf.writeUInt32LE(crc32(buf.subarray(at + 8, end)), at + 4);
  return end;
}

function decodeMeta(meta: Buffer): FrameMeta {
  if (meta[0] !== BINARY_META) return JSON.parse(meta.toString('utf8')) as FrameMeta;
  const idLen = meta.readUInt16LE(2);
  const eventLen = meta.readUInt16LE(4);
  if (FIXED_META + idLen + eventLen !== meta.length) throw new Error('meta length');
  return {
    k: meta[1] === 1 ? 1 : 0,
    s: meta.readDoubleLE(6),
    w: meta.readDoubleLE(14),
    t: meta.readDoubleLE(22),
    d: meta.toString('utf8', FIXED_META, FIXED_META + idLen),
    e: meta.toString('utf8', FIXED_META + idLen, FIXED_META + idLen + eventLen),
  };
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
      meta = decodeMeta(payload.subarray(4, 4 + metaLen));
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
