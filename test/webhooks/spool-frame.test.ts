import { describe, expect, it } from 'vitest';
import { decodeFrames, encodeFrame, encodeFrameInto, frameLength, type SpoolRecord } from '../../src/webhooks/spool-frame.js';

const record = (seq: number, body: string, deliveryId = `d-${seq}`): SpoolRecord => ({
  seq,
  deliveryId,
  webhookId: 7,
  event: 'contact.updated',
  known: seq % 2 === 0,
  receivedAt: 1_700_000_000_000 + seq,
  body: Buffer.from(body),
});

describe('spool frames', () => {
  it('encodes a batch into one buffer, frame after frame, as the frames encoded one by one', () => {
    const batch = [record(1, '{"a":1}'), record(2, `{"b":"${'é'.repeat(300)}"}`, 'délivery-ü'), record(3, '')];
    const size = batch.reduce((n, r) => n + frameLength(r), 0);
    const buf = Buffer.alloc(size + 5, 0xaa);
    let at = 0;
    for (const r of batch) at = encodeFrameInto(r, buf, at);
    expect(at).toBe(size);
    expect(buf.subarray(0, size).equals(Buffer.concat(batch.map(encodeFrame)))).toBe(true);
    // Nothing past the frames is touched.
    expect([...buf.subarray(size)]).toEqual([0xaa, 0xaa, 0xaa, 0xaa, 0xaa]);
    const decoded = decodeFrames(buf.subarray(0, size));
    expect(decoded.damaged).toBe(false);
    expect(decoded.records.map((d) => d.record)).toEqual(batch);
  });

  it('refuses a buffer shorter than the frame instead of writing a torn one', () => {
    const r = record(1, '{"a":1}');
    expect(() => encodeFrameInto(r, Buffer.alloc(frameLength(r) - 1), 0)).toThrow(RangeError);
  });
});
