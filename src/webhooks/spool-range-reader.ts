import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeFrames, type SpoolRecord } from './spool-frame.js';

const SEGMENT = /^segment-(\d{12})\.log$/;

export interface SpoolRangeReader {
  /** The spool's id (its SPOOL_ID file), or null while no receiver has created the spool. */
  id(): Promise<string | null>;
  /** Up to `max` whole records after `afterSeq` (and about `maxBytes` of bodies, at least one), in order. */
  read(afterSeq: number, max: number, maxBytes?: number): Promise<SpoolRecord[]>;
}

/**
 * Reads a spool directory from another process than the receiver that appends to it (the
 * warehouse worker, which applies): it never writes, takes no lock and reads only whole frames,
 * so a frame being appended is simply not there yet. Segments whose records are all at or before
 * the asked seq, and that have not changed since, are skipped without reading.
 */
export function createSpoolRangeReader(dir: string): SpoolRangeReader {
  const seen = new Map<string, { mtimeMs: number; size: number; lastSeq: number }>();
  return {
    async id() {
      try {
        const text = (await readFile(join(dir, 'SPOOL_ID'), 'utf8')).trim();
        return /^[0-9a-f-]{36}$/.test(text) ? text : null;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw err;
      }
    },
    async read(afterSeq, max, maxBytes = Infinity) {
      let names: string[];
      try {
        names = (await readdir(dir)).filter((n) => SEGMENT.test(n)).sort();
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw err;
      }
      const out: SpoolRecord[] = [];
      let bytes = 0;
      for (const name of names) {
        if (out.length >= max || bytes >= maxBytes) break;
        const path = join(dir, name);
        let info;
        try {
          info = await stat(path);
        } catch {
          continue; // pruned meanwhile: everything in it was applied
        }
        const known = seen.get(name);
        if (known && known.mtimeMs === info.mtimeMs && known.size === info.size && known.lastSeq <= afterSeq) continue;
        const decoded = decodeFrames(await readFile(path).catch(() => Buffer.alloc(0)));
        let lastSeq = 0;
        for (const { record } of decoded.records) {
          lastSeq = Math.max(lastSeq, record.seq);
          if (record.seq <= afterSeq || record.seq <= (out.at(-1)?.seq ?? 0) || out.length >= max || bytes >= maxBytes) continue;
          out.push(record);
          bytes += record.body.length;
        }
        seen.set(name, { mtimeMs: info.mtimeMs, size: info.size, lastSeq });
      }
      return out;
    },
  };
}
