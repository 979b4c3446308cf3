import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/**
 * The bytes of a small file (a configuration or secrets file), or null when it holds more than
 * `maxBytes`. Reads at most `maxBytes + 1` bytes whatever the file's size, also when it grows
 * while being read (a stat beforehand would not bound that read).
 */
export function readFileUpTo(path: string, maxBytes: number): Buffer | null {
  const fd = openSync(path, 'r');
  try {
    // The stat only sizes the buffer; the read loop enforces the limit.
    let buf = Buffer.allocUnsafe(Math.min(fstatSync(fd).size, maxBytes) + 1);
    let length = 0;
    for (;;) {
      if (length === buf.length) {
        if (length > maxBytes) return null;
        const bigger = Buffer.allocUnsafe(Math.min(buf.length * 2, maxBytes + 1));
        buf.copy(bigger, 0, 0, length);
        buf = bigger;
      }
      const n = readSync(fd, buf, length, buf.length - length, null);
      if (n === 0) break;
      length += n;
    }
    return length > maxBytes ? null : buf.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}
