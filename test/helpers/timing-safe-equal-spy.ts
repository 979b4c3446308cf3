import type * as Crypto from 'node:crypto';
import { createRequire, syncBuiltinESMExports } from 'node:module';

const require = createRequire(import.meta.url);
// The CommonJS exports object, which the ES module's bindings follow after syncBuiltinESMExports.
const crypto = require('node:crypto') as typeof Crypto;

/** Each call of `crypto.timingSafeEqual` while the spy is on: copies of both buffers. */
export type TimingSafeEqualCalls = [Buffer, Buffer][];

/**
 * Runs `fn` with node's `crypto.timingSafeEqual` replaced by a spy that records each call and
 * answers `verdict(a, b)` (default: the real comparison). Modules that imported it by name see
 * the spy too: `syncBuiltinESMExports` updates the live bindings of node's ES modules. With a
 * verdict of its own, a test proves that a check decides by this comparison and no other.
 */
export async function withTimingSafeEqualSpy<T>(fn: (calls: TimingSafeEqualCalls) => T | Promise<T>, verdict?: (a: Buffer, b: Buffer) => boolean): Promise<T> {
  const original = crypto.timingSafeEqual;
  const calls: TimingSafeEqualCalls = [];
  crypto.timingSafeEqual = (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView): boolean => {
    const x = Buffer.from(a.buffer, a.byteOffset, a.byteLength);
    const y = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    calls.push([Buffer.from(x), Buffer.from(y)]);
    return verdict ? verdict(x, y) : original(a, b);
  };
  syncBuiltinESMExports();
  try {
    return await fn(calls);
  } finally {
    crypto.timingSafeEqual = original;
    syncBuiltinESMExports();
  }
}
