import type { Difference } from './difference.js';
import { verifyContacts } from './verify-contacts.js';
import type { VerifyDeps } from './verify-deps.js';
import { verifyEntities } from './verify-entities.js';

/** Streams verify compares; reports are dated snapshots of moving figures, not state to match. */
export const VERIFY_STREAMS = ['contacts', 'tags', 'lists', 'custom_fields', 'companies', 'campaigns', 'funnels', 'funnel_subscribers'] as const;

export interface VerifyResult {
  streams: string[];
  differences: Difference[];
  skipped: string[];
}

/** Every difference between the warehouse and the CRM for the chosen streams. */
export async function runVerify(deps: VerifyDeps, streams: readonly string[]): Promise<VerifyResult> {
  const chosen = VERIFY_STREAMS.filter((s) => streams.includes(s));
  const differences: Difference[] = [];
  if (chosen.includes('contacts')) differences.push(...(await verifyContacts(deps)));
  const entities = await verifyEntities(deps, chosen);
  differences.push(...entities.diffs);
  const skipped = [...entities.skipped];
  if (streams.includes('reports')) skipped.push('reports: dated snapshots of figures that move between reads, not state to match (`crmsync status` shows the last one)');
  return { streams: [...chosen], differences, skipped };
}
