import type { Marketing } from './marketing.js';
import type { FunnelRec } from './model.js';
import { round2 } from './report-math.js';

/**
 * Per-step counts of a funnel as both report routes give them: the interface's
 * `/reports/automations/{id}/steps` (`stats`) and the real plugin's `/funnels/{id}/report`
 * (`stats.metrics`). A root "Entrance" row first; steps no contact reached are left out.
 */
export function stepReportRows(marketing: Marketing, f: FunnelRec): Record<string, unknown>[] {
  if (f.steps.length === 0) return [];
  const entrants = new Set<number>();
  const runs = new Map<number, number>();
  for (const s of marketing.funnelSubscribers.values()) {
    if (s.funnelId !== f.id) continue;
    entrants.add(s.subscriberId);
    for (const m of s.metrics) runs.set(m.sequenceId, (runs.get(m.sequenceId) ?? 0) + 1);
  }
  const root = entrants.size;
  const rows: Record<string, unknown>[] = [
    { label: 'Entrance', count: root, sequence_id: 0, type: 'root', percent: 100, percent_text: 100, previous_step_count: root, drop_count: 0, drop_percent: 0 },
  ];
  let previous = root;
  for (const st of f.steps) {
    const count = runs.get(st.id) ?? 0;
    if (count === 0) continue;
    const raw = root ? round2((count / root) * 100) : 0;
    const drop = previous - count;
    rows.push({
      label: st.title,
      count,
      sequence_id: st.id,
      type: st.type,
      percent: Math.min(100, raw),
      percent_text: raw,
      previous_step_count: previous,
      drop_count: drop,
      drop_percent: previous ? round2((drop / previous) * 100) : 0,
    });
    previous = count;
  }
  return rows;
}
