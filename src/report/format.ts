/** Escapes text for HTML element content and attribute values. */
export function esc(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const INT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const DEC = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

export function fmtInt(n: number | null | undefined): string {
  return n === null || n === undefined ? '–' : INT.format(n);
}

/** A signed change: +12, −3, 0. */
export function fmtChange(n: number | null | undefined): string {
  if (n === null || n === undefined) return '–';
  return n > 0 ? `+${INT.format(n)}` : n < 0 ? `−${INT.format(-n)}` : '0';
}

/** A fraction (0.1234) as a percentage with one decimal (12.3%). */
export function fmtRate(f: number | null | undefined): string {
  return f === null || f === undefined ? '–' : `${(f * 100).toFixed(1)}%`;
}

/** A value that is a percentage already (12.34) as 12.3%. */
export function fmtPercent(p: number | null | undefined): string {
  return p === null || p === undefined ? '–' : `${p.toFixed(1)}%`;
}

export function fmtNumber(n: number | null | undefined): string {
  return n === null || n === undefined ? '–' : DEC.format(n);
}

export function fmtSeconds(s: number | null | undefined): string {
  if (s === null || s === undefined) return '–';
  return s < 100 ? `${s.toFixed(1)} s` : `${INT.format(Math.round(s))} s`;
}

/** UTC, to the minute: 2026-11-25 18:47. */
export function fmtTime(d: Date | null | undefined): string {
  return d ? d.toISOString().slice(0, 16).replace('T', ' ') : '–';
}

/** How long ago, in the largest sensible unit: 42 s, 17 min, 5.2 h, 3.1 d. */
export function fmtAge(seconds: number | null): string {
  if (seconds === null) return 'never';
  if (seconds < 60) return `${Math.max(0, Math.round(seconds))} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 86_400) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} d`;
}
