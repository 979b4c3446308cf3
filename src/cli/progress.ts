import type { StreamProgress } from '../../workflows/sync-types.js';

export interface ProgressRenderer {
  update(streams: readonly StreamProgress[]): void;
  /** Leaves the last frame on screen (TTY) or prints a final line per stream. */
  finish(streams: readonly StreamProgress[]): void;
}

const BAR_WIDTH = 24;
const PLAIN_INTERVAL_MS = 5_000;

export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '--:--';
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

/** One line for a stream: bar of pages done/total, rows/s and ETA (when the total is known). */
export function formatProgressLine(p: StreamProgress, nowMs: number, bar: boolean): string {
  const elapsed = Math.max(1, nowMs - p.startedAtMs);
  const rate = Math.round((p.rows * 1000) / elapsed);
  const name = p.stream.padEnd(18);
  const parts: string[] = [];
  if (p.pagesTotal !== undefined && p.pagesTotal > 0) {
    const frac = Math.min(1, p.pagesDone / p.pagesTotal);
    if (bar) parts.push(`[${'#'.repeat(Math.round(frac * BAR_WIDTH)).padEnd(BAR_WIDTH, '-')}]`);
    parts.push(`${p.pagesDone}/${p.pagesTotal} pages`);
    if (p.pagesDone > 0 && p.pagesDone < p.pagesTotal && !isFinal(p)) {
      parts.push(`ETA ${formatDuration(((p.pagesTotal - p.pagesDone) * elapsed) / p.pagesDone)}`);
    }
  }
  parts.push(`${p.rows.toLocaleString('en-US')} rows`, `${rate.toLocaleString('en-US')} rows/s`, `${p.requests} requests`);
  if (p.drift) parts.push('(changed during scan)');
  const tail = p.error ? ` ${p.error}` : '';
  return `${name} ${p.phase.padEnd(11)} ${parts.join('  ')}${tail}`;
}

function isFinal(p: StreamProgress): boolean {
  return p.phase === 'done' || p.phase === 'failed' || p.phase === 'cancelled';
}

/**
 * Progress bars redrawn in place when `out` is a terminal; otherwise plain log lines, one per
 * stream when its phase changes and at most every few seconds while it runs.
 */
export function createProgressRenderer(out: NodeJS.WritableStream & { isTTY?: boolean }, now: () => number = Date.now): ProgressRenderer {
  const tty = out.isTTY === true;
  let drawn = 0;
  const lastPlain = new Map<string, { at: number; phase: string }>();

  function draw(streams: readonly StreamProgress[]): void {
    const t = now();
    let frame = drawn > 0 ? `\x1b[${drawn}A` : '';
    for (const p of streams) frame += `\x1b[2K${formatProgressLine(p, t, true)}\n`;
    out.write(frame);
    drawn = streams.length;
  }

  function plain(streams: readonly StreamProgress[], force: boolean): void {
    const t = now();
    for (const p of streams) {
      const prev = lastPlain.get(p.stream);
      if (!force && prev && prev.phase === p.phase && t - prev.at < PLAIN_INTERVAL_MS) continue;
      if (force && prev && prev.phase === p.phase && isFinal(p)) continue;
      lastPlain.set(p.stream, { at: t, phase: p.phase });
      out.write(`${new Date(t).toISOString()} ${formatProgressLine(p, t, false)}\n`);
    }
  }

  return {
    update: (streams) => (tty ? draw(streams) : plain(streams, false)),
    finish: (streams) => (tty ? draw(streams) : plain(streams, true)),
  };
}
