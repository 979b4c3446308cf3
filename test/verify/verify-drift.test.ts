import { describe, expect, it } from 'vitest';
import { crmClientFromConfig } from '../../src/crm/index.js';
import { runVerify } from '../../src/verify/run-verify.js';
import type { VerifyCrmClient } from '../../src/verify/verify-deps.js';
import { withSyncEnv } from '../sync/helpers/sync-env.js';

describe('verify while the CRM changes', () => {
  it('confirms contacts the listing skipped before calling them deleted', { timeout: 120_000 }, async () => {
    await withSyncEnv({ sim: { contacts: 180, seed: 21 } }, async (env) => {
      expect((await env.sync({ streams: ['contacts'] })).failed).toEqual([]);
      const ids = env.sim
        .truth()
        .contacts.map((c) => c.id)
        .sort((a, b) => a - b);
      const behind = ids[10]!; // read on page 1, then deleted
      const ahead = ids[120]!; // deleted before its page is read: a true difference
      const slid = ids[50]!; // first row of page 2: slides back onto page 1 when `behind` goes
      const base = crmClientFromConfig(env.config);
      const listed = new Set<number>();
      let deleted = false;
      // The real client and simulator; two contacts are deleted in the CRM right after page 1 is read.
      const client: VerifyCrmClient = {
        ...base,
        contacts: {
          ...base.contacts,
          listPage: async (q) => {
            const p = await base.contacts.listPage(q);
            for (const c of p.items) listed.add(c.id);
            if (q.page === 1 && !deleted) {
              deleted = true;
              env.sim.mutate.deleteContact(behind);
              env.sim.mutate.deleteContact(ahead);
            }
            return p;
          },
        },
      };
      try {
        const result = await runVerify({ client, read: (fn) => env.read(fn), perPage: 50, concurrency: 1 }, ['contacts']);
        expect(listed.has(slid)).toBe(false); // the scan did skip it
        // Only the contact gone before its page was read; the skipped ones were confirmed by a read.
        expect(result.differences.map((d) => [d.kind, d.id])).toEqual([['deleted_in_crm', String(ahead)]]);
      } finally {
        await base.close();
      }
    });
  });
});
