import { closeSync, copyFileSync, fstatSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { Writable } from 'node:stream';

/** The background worker's log stays under this size, plus one previous file (`.1`). */
export const WORKER_LOG_MAX_BYTES = 10 * 1024 * 1024;

/**
 * An append-only log file that never grows past `maxBytes`: when a write would pass it, the file
 * is copied to `<path>.1` and truncated. Truncated in place rather than renamed, so the worker's
 * own stdout and stderr (opened on the same file by the command that started it, in append mode)
 * keep landing in the current file.
 */
export function sizeBoundedLog(path: string, maxBytes = WORKER_LOG_MAX_BYTES): Writable {
  const fd = openSync(path, 'a', 0o600);
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      try {
        if (fstatSync(fd).size + chunk.length > maxBytes) {
          copyFileSync(path, `${path}.1`);
          ftruncateSync(fd, 0);
        }
        writeSync(fd, chunk);
        done();
      } catch (err) {
        done(err as Error);
      }
    },
    final(done) {
      closeSync(fd);
      done();
    },
  });
}
