import type { PushProgress, PushWorkflowResult } from '../../workflows/push-types.js';
import type { PushPlanSummary } from './plan-push.js';
import type { PushCounts } from './push-types.js';
import { pushDeadLettersQuery } from '../warehouse/push-dead-letters-query.js';

const ACTIONS: (keyof PushCounts)[] = ['new', 'changed', 'retry', 'unchanged', 'invalid'];

export function formatCounts(counts: PushCounts): string {
  return ACTIONS.map((a) => `${a} ${counts[a]}`).join('  ');
}

/** The dry-run report: counts by action, what would be created, and a sample of each kind. */
export function formatDryRun(plan: PushPlanSummary): string {
  const lines = [`push dry run: ${plan.rowsRead} source rows from ${plan.source}`, `  ${formatCounts(plan.counts)}`, `  would send ${plan.toSend}`];
  if (plan.ignoredColumns.length > 0) lines.push(`  ignored columns (not contact fields): ${plan.ignoredColumns.join(', ')}`);
  if (plan.createdTags.length > 0) lines.push(`  would create tags: ${plan.createdTags.join(', ')}`);
  if (plan.createdLists.length > 0) lines.push(`  would create lists: ${plan.createdLists.join(', ')}`);
  if (plan.sample.length > 0) {
    lines.push('  sample of rows to send:');
    for (const s of plan.sample) lines.push(`    ${s.action.padEnd(8)} row ${s.rowNumber}: ${JSON.stringify(s.body)}`);
  }
  if (plan.rejectedSample.length > 0) {
    lines.push('  sample of invalid rows (never sent):');
    for (const r of plan.rejectedSample) lines.push(`    row ${r.rowNumber} ${r.email || '(no email)'}: ${r.reason}`);
  }
  return `${lines.join('\n')}\n`;
}

export function formatPushResult(r: PushWorkflowResult): string {
  const lines = [
    `push ${r.runId} finished: ${r.rowsRead} source rows from ${r.source}`,
    `  plan: ${formatCounts(r.counts)}`,
    `  sent ${r.sent}  succeeded ${r.succeeded}  failed ${r.failed}  already pushed ${r.skipped}`,
  ];
  if (r.counts.invalid > 0 || r.failed > 0) {
    lines.push(`  see why: crmsync query "${pushDeadLettersQuery(r.source)}"`);
  }
  return `${lines.join('\n')}\n`;
}

export function formatProgress(p: PushProgress, elapsedMs: number): string {
  if (p.phase === 'planning') return 'push: reading and checking the source...';
  const rate = (p.succeeded * 1000) / Math.max(1, elapsedMs);
  return `push: ${p.cursor}/${p.toSend} rows  succeeded ${p.succeeded}  failed ${p.failed}  ${rate.toFixed(1)} rows/s`;
}
