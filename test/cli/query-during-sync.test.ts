import { describe, expect, it } from 'vitest';
import { withSyncEnv } from '../sync/helpers/sync-env.js';
import { runCli } from './run-cli.js';

// Issue 18, done when: "A query against the catalog, started during a long sync, answers".
// bench/catalog-query.ts records how fast; this shows that it answers, with what was published,
// while the sync is still running (no timing asserted).
describe('crmsync query during a long sync', () => {
  it('answers from the catalog with the last published data before the sync ends', { timeout: 240_000 }, async () => {
    await withSyncEnv({ sim: { contacts: 400, seed: 18 } }, async (env) => {
      const first = await env.sync({ streams: ['contacts', 'tags'] });
      expect(first.failed).toEqual([]);

      // A second, full sync against a CRM that now takes 15 s per request: its 8 pages in 3 lanes
      // take 45 s or more, far longer than starting two CLIs; at full speed again after them.
      env.sim.setFaults({ latencyMs: { min: 15_000, max: 15_000 } });
      const requestsBefore = env.sim.stats().byRoute['GET /subscribers'] ?? 0;
      let ended = false;
      const running = env.sync({ streams: ['contacts', 'tags'], full: true }).finally(() => (ended = true));
      try {
        while ((env.sim.stats().byRoute['GET /subscribers'] ?? 0) <= requestsBefore) await new Promise((r) => setTimeout(r, 50));
        const [q, tags] = await Promise.all([
          runCli(['query', '-f', 'json', 'SELECT count(*) AS n, count(DISTINCT email) AS emails FROM contacts_current'], env.env),
          runCli(['query', '-f', 'json', 'SELECT count(*) AS n FROM tags'], env.env),
        ]);
        expect(ended).toBe(false);
        expect(q.code, q.stderr).toBe(0);
        expect(JSON.parse(q.stdout)).toEqual([{ n: 400, emails: 400 }]);
        expect(q.stderr).toMatch(/reading the lake through .*catalog\.duckdb \(published \d{4}-/);
        expect(tags.code, tags.stderr).toBe(0);
        expect(JSON.parse(tags.stdout)).toEqual([{ n: env.sim.truth().tags.length }]);
      } finally {
        env.sim.setFaults({});
        await running;
      }
    });
  });
});
