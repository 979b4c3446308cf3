import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { printSummary } from '../../src/cli/sync.js';
import type { StreamResult } from '../../workflows/sync-types.js';

function summary(stream: Partial<StreamResult>): string {
  const out = new PassThrough();
  let text = '';
  out.on('data', (d: Buffer) => (text += d.toString()));
  const base: StreamResult = { stream: 'contacts', mode: 'backfill', drift: false, rows: 10, pages: 1, requests: 2, inserted: 10, updated: 0, unchanged: 0, deleted: 0 };
  printSummary({ runId: 'r1', streams: [{ ...base, ...stream }], failed: [] } as unknown as Parameters<typeof printSummary>[0], out);
  return text;
}

describe('the sync summary', () => {
  it('says the next run reconciles only when the run left that to it', () => {
    expect(summary({ drift: true })).toContain('(CRM changed during the run; this run caught up with it)');
    expect(summary({ drift: true, reconcileNext: true })).toContain('(CRM changed during the run; the next run reconciles)');
    expect(summary({})).not.toContain('CRM changed');
  });
});
