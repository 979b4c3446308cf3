import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { innermostMessage } from '../../src/sync/running-runs.js';

describe('the message a failed run shows', () => {
  it("is the first crmsync failure's down the cause chain, not the error it was made from", () => {
    const duckdb = ApplicationFailure.create({ type: 'Error', message: "Out of Memory Error: failed to pin block\n\nPossible solutions:\n* Increasing the memory limit (SET memory_limit='...GB')" });
    const ours = ApplicationFailure.create({ type: 'SYNC_MEMORY_LIMIT', message: 'DuckDB ran out of the sync memory limit; raise CRMSYNC_SYNC_MEMORY_LIMIT', cause: duckdb });
    const activity = new Error('Activity task failed', { cause: ours });
    expect(innermostMessage(new Error('Workflow execution failed', { cause: activity }))).toBe(ours.message);
  });

  it('is the innermost error when no crmsync failure names a fix', () => {
    const inner = ApplicationFailure.create({ type: 'TypeError', message: 'x is undefined' });
    expect(innermostMessage(new Error('Workflow execution failed', { cause: new Error('Activity task failed', { cause: inner }) }))).toBe('x is undefined');
  });
});
