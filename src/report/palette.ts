/** Colours that stay apart in print and for common colour blindness (Okabe-Ito). */
export const SERIES_COLORS = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#000000'] as const;

const STATUS_COLORS: Record<string, string> = {
  subscribed: '#009E73',
  pending: '#E69F00',
  unsubscribed: '#8a8a8a',
  bounced: '#D55E00',
  complained: '#CC79A7',
  spammed: '#CC79A7',
  transactional: '#0072B2',
};

export function statusColor(status: string, index: number): string {
  return STATUS_COLORS[status] ?? SERIES_COLORS[index % SERIES_COLORS.length]!;
}

export function seriesColor(index: number): string {
  return SERIES_COLORS[index % SERIES_COLORS.length]!;
}

export const FAILED_COLOR = '#D55E00';
