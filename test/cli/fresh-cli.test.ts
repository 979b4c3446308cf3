import { describe, expect, it } from 'vitest';
import { differencesFromTruth } from '../sync/helpers/compare-truth.js';
import { customValueDiffs, editContacts } from '../sync/helpers/edit-contacts.js';
import { withSyncEnv } from '../sync/helpers/sync-env.js';
import { runCli } from './run-cli.js';

describe('crmsync sync without webhooks, as a user runs it', () => {
  it('a plain `crmsync sync` picks up edits, says which checks ran and what each found; status shows the staleness bound', { timeout: 240_000 }, async () => {
    await withSyncEnv({ sim: { contacts: 300, seed: 41, mode: 'real' } }, async (env) => {
      const first = await runCli(['sync', '--sweep-runs', '6'], env.env, 200_000);
      expect(first.code, first.stderr).toBe(0);
      editContacts(env.sim, 4);
      const second = await runCli(['sync', '--sweep-runs', '6'], env.env, 200_000);
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout).toMatch(/contacts\s+incremental/);
      expect(second.stdout).toMatch(/updated-first scan: \d+ recently updated read, 25 changed/);
      expect(second.stdout).toMatch(/membership repair: \d+ tags and lists compared, [1-9]\d* differed .*20 changed, 0 deleted/);
      expect(second.stdout).toMatch(/rolling sweep: ids 1–250, 250 re-read, 0 changed/);
      expect(await env.read((w) => differencesFromTruth(w, env.sim.truth(), ['contacts', 'tags', 'lists']))).toEqual([]);
      expect(await env.read((w) => customValueDiffs(w, env.sim))).toEqual([]);

      const status = await runCli(['status'], env.env);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toMatch(/staleness: every contact read .* or later; new contacts, edits that change updated_at, .* within 6 incremental runs \(rolling sweep at run 2 of its cycle\)/);
      const json = JSON.parse((await runCli(['status', '--json'], env.env)).stdout) as { streams: { stream: string; staleness: { bound: string } }[] };
      expect(json.streams.find((s) => s.stream === 'tags')?.staleness.bound).toMatch(/re-read whole each run/);
    });
  });
});
