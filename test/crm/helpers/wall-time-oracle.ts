const HOUR = 3_600_000;

/**
 * The UTC instant (ISO 8601 with `Z`) of a zone-less `YYYY-MM-DD HH:MM:SS` wall time in `zone`,
 * found another way than the client's normalizer: every offset the zone has within a day of the
 * wall time is tried, and an instant counts when the zone shows it as that wall time. A repeated
 * wall time (the hour when clocks go back) gives the earlier instant, as PHP reads it; a wall time
 * that never happened (clocks going forward) throws, so a test cannot pass on one by accident.
 */
export function wallTimeToUtc(wall: string, zone: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/.exec(wall);
  if (!m) throw new Error(`not a zone-less YYYY-MM-DD HH:MM:SS wall time: ${JSON.stringify(wall)}`);
  const asUtc = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  // Its own formatter, not the client's (src/crm/site-time.ts): the oracle shares no code with what it checks.
  const fmt = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
  const shown = (ms: number): string => {
    const p: Record<string, string> = {};
    for (const x of fmt.formatToParts(new Date(ms))) p[x.type] = x.value;
    return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
  };
  const offsets = new Set<number>();
  for (let h = -30; h <= 30; h++) {
    const at = asUtc + h * HOUR;
    offsets.add(Date.parse(`${shown(at).replace(' ', 'T')}Z`) - at);
  }
  const instants = [...offsets].map((o) => asUtc - o).filter((at) => shown(at) === wall);
  if (instants.length === 0) throw new Error(`${wall} never happened in ${zone} (clocks went forward over it)`);
  return new Date(Math.min(...instants)).toISOString();
}
