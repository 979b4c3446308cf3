import { ConfigError } from '../errors.js';

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses "90s", "15m", "24h", "7d" (or combinations like "1h30m") into milliseconds. */
export function parseDuration(value: string, flag: string): number {
  const text = value.trim().toLowerCase();
  const re = /(\d+)\s*([smhd])/g;
  let total = 0;
  let consumed = 0;
  for (const m of text.matchAll(re)) {
    total += Number(m[1]) * (UNITS[m[2] as string] ?? 0);
    consumed += m[0].length;
  }
  if (text.length === 0 || consumed !== text.replace(/\s+/g, '').length) {
    throw new ConfigError(`${flag} "${value}" is not a duration; use a number and a unit, for example 15m, 24h or 1h30m.`);
  }
  if (total <= 0) throw new ConfigError(`${flag} "${value}" is zero; give a positive duration, for example 15m, 24h or 1h30m.`);
  return total;
}

/** The shortest text parseDuration reads back as `ms`: 900000 is "15m", 5400000 "1h30m". */
export function formatDuration(ms: number): string {
  let left = Math.round(ms);
  let out = '';
  for (const [unit, size] of Object.entries(UNITS).sort((a, b) => b[1] - a[1])) {
    if (left >= size) {
      out += `${Math.floor(left / size)}${unit}`;
      left %= size;
    }
  }
  return out || `${ms}ms`;
}
