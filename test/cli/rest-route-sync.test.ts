import { describe, expect, it } from 'vitest';
import { differencesFromTruth } from '../sync/helpers/compare-truth.js';
import { withSyncEnv } from '../sync/helpers/sync-env.js';
import { runCli } from './run-cli.js';

/** Issue 14 item 8, end to end: a site without pretty permalinks, as a user configures it. */
describe('crmsync sync with CRM_BASE_URL=https://site/?rest_route=/fluent-crm/v2', () => {
  it('syncs and verifies through the rest_route query parameter', { timeout: 150_000 }, async () => {
    await withSyncEnv({ sim: { contacts: 120, seed: 15, mode: 'real' } }, async (env) => {
      const pretty = new URL(env.sim.baseUrl);
      const plain = `${pretty.origin}/?rest_route=${pretty.pathname.replace('/wp-json', '')}`;
      const cli = { ...env.env, CRM_BASE_URL: plain };
      const sync = await runCli(['sync', '--stream', 'contacts', '--stream', 'tags', '--stream', 'lists', '--per-page', '25'], cli);
      expect(sync.code, sync.stderr + sync.stdout).toBe(0);
      expect(await env.read((w) => differencesFromTruth(w, env.sim.truth(), ['contacts', 'tags', 'lists']))).toEqual([]);
      const verify = await runCli(['verify', '--stream', 'contacts', '--stream', 'tags'], cli);
      expect(verify.code, verify.stderr + verify.stdout).toBe(0);
      // Every request was served by a route (none fell through to "no route").
      expect(env.sim.stats().byRoute['(no route)']).toBeUndefined();
      expect(env.sim.stats().byRoute['GET /subscribers']).toBeGreaterThan(0);
    });
  });
});
