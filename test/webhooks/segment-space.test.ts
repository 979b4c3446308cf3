import { open, type FileHandle } from 'node:fs/promises';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSegmentSpace, ZERO_WRITE_BYTES } from '../../src/webhooks/segment-space.js';
import { withTempDir } from './helpers.js';

describe('the spool segment space', () => {
  it('writes its zeros in pieces of ZERO_WRITE_BYTES, so the page cache keeps small folios for the appends', async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, 'segment');
      const fh = await open(path, 'w');
      const writes: number[] = [];
      // The real handle, with each write's length recorded.
      const recorded = new Proxy(fh, {
        get(target, prop, receiver) {
          if (prop === 'write')
            return (buf: Buffer, offset: number, length: number, position: number) => {
              writes.push(length);
              return target.write(buf, offset, length, position);
            };
          const v = Reflect.get(target, prop, receiver) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      }) as FileHandle;
      try {
        const space = createSegmentSpace({ fh: recorded, allocated: 0, maxSegmentBytes: 64 * 1024 * 1024, onExtended: () => undefined });
        const step = 4 * 1024 * 1024;
        await space.grow(1);
        // A batch larger than a step gets that much, in the same pieces.
        await space.grow(step + 3 * step + 100);
        expect(space.allocated).toBe(4 * step + 100);
        expect(Math.max(...writes)).toBe(ZERO_WRITE_BYTES);
        expect(writes.reduce((a, b) => a + b, 0)).toBe(4 * step + 100);
        expect(statSync(path).size).toBe(4 * step + 100);
        expect(readFileSync(path).every((b) => b === 0)).toBe(true);
      } finally {
        await fh.close();
      }
    });
  });
});
