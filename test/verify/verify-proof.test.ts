import { describe, expect, it } from 'vitest';
import type { DifferenceGroup, VerifySummary } from '../../src/verify/summarize-differences.js';
import { runCli } from '../cli/run-cli.js';
import { SMALL_TUNING, withSyncEnv, type SyncEnv } from '../sync/helpers/sync-env.js';

const STREAMS = ['contacts', 'tags', 'lists', 'custom_fields', 'companies', 'campaigns', 'funnels', 'funnel_subscribers'];

type VerifyJson = VerifySummary & { streams: string[]; skipped: string[] };

async function verifyJson(env: SyncEnv, extra: Record<string, string> = {}): Promise<{ code: number | null; out: VerifyJson; stderr: string }> {
  const r = await runCli(['verify', '--json'], { ...env.env, ...extra });
  let out: VerifyJson;
  try {
    out = JSON.parse(r.stdout) as VerifyJson;
  } catch {
    throw new Error(`verify --json printed no JSON (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  }
  return { code: r.code, out, stderr: r.stderr };
}

const group = (out: VerifyJson, stream: string, kind: string): DifferenceGroup | undefined => out.groups.find((g) => g.stream === stream && g.kind === kind);

describe('crmsync verify: a complete proof (real Temporal, simulator, DuckDB, the CLI)', () => {
  it('is clean after a clean sync, then names one planted difference of each kind and exits 1', { timeout: 240_000 }, async () => {
    await withSyncEnv({ sim: { contacts: 320, seed: 11 } }, async (env) => {
      const run = await env.sync({ streams: STREAMS as never, tuning: SMALL_TUNING });
      expect(run.failed).toEqual([]);
      const clean = await verifyJson(env);
      expect(clean.out.groups, JSON.stringify(clean.out.groups, null, 1)).toEqual([]);
      expect(clean.code).toBe(0);
      expect(clean.out.streams).toEqual(STREAMS);

      const truth = env.sim.truth();
      const contacts = truth.contacts;
      const withCustom = contacts.find((c) => Object.keys(c.custom_values).length > 0)!;
      const slug = Object.keys(withCustom.custom_values)[0]!;
      const tagged = contacts.find((c) => c.tags.length > 0 && c.id !== withCustom.id)!;
      const tagId = tagged.tags[0]!;
      const listIds = truth.lists.map((l) => Number(l.id));
      const listless = contacts.find((c) => c.lists.length < listIds.length && c.id !== tagged.id && c.id !== withCustom.id)!;
      const extraList = listIds.find((l) => !listless.lists.includes(l))!;
      const fieldContact = contacts.find((c) => ![withCustom.id, tagged.id, listless.id].includes(c.id))!;
      const subs = truth.funnelSubscribers as unknown as { id: number; funnelId: number; subscriberId: number }[];
      // A victim with no memberships or enrolments: deleting one that has them also (rightly)
      // changes tag and list counts and removes its funnel subscribers in the CRM.
      const victim = contacts.find(
        (c) => ![withCustom.id, tagged.id, listless.id, fieldContact.id].includes(c.id) && c.tags.length === 0 && c.lists.length === 0 && !subs.some((s) => s.subscriberId === c.id),
      )!;
      const sub = subs[0]!;
      const campaign = truth.campaigns[0] as { id: number };
      expect(sub && campaign && withCustom && tagged && listless && victim).toBeTruthy();

      await env.read(async (w) => {
        await w.query('UPDATE contacts SET city = ? WHERE id = ?', ['Planted City', fieldContact.id]);
        const [row] = await w.query('SELECT CAST(custom_values AS VARCHAR) AS cv FROM contacts WHERE id = ?', [withCustom.id]);
        const values = JSON.parse(String(row!.cv)) as Record<string, unknown>;
        values[slug] = 'planted value';
        await w.query('UPDATE contacts SET custom_values = CAST(? AS JSON) WHERE id = ?', [JSON.stringify(values), withCustom.id]);
        await w.query('DELETE FROM contact_tags WHERE contact_id = ? AND tag_id = ?', [tagged.id, tagId]);
        await w.query("INSERT INTO contact_lists VALUES (?, ?, 'planted', now())", [listless.id, extraList]);
        await w.query('DELETE FROM funnel_subscribers WHERE funnel_id = ? AND id = ?', [sub.funnelId, sub.id]);
        await w.query('UPDATE campaigns SET title = ? WHERE id = ?', ['Planted title', campaign.id]);
        // verify reads the lake's catalog: publish the planted rows, as a load would mark them.
        const ids = [fieldContact.id, withCustom.id, tagged.id, listless.id].map((id) => `(${Math.trunc(Number(id))})`).join(', ');
        await w.query(`INSERT OR IGNORE INTO _lake_dirty SELECT t, CAST(id // 50000 AS VARCHAR) FROM (VALUES ('contacts'), ('contact_tags'), ('contact_lists')) v(t), (VALUES ${ids}) i(id)`);
        await w.publishLake();
      });
      env.sim.mutate.deleteContact(victim.id);

      const dirty = await verifyJson(env);
      expect(dirty.code).toBe(1);
      const expected: [string, string, string, string?][] = [
        ['contacts', 'contact_field_mismatch', String(fieldContact.id), 'city'],
        ['contacts', 'custom_value_mismatch', String(withCustom.id), slug],
        ['contacts', 'missing_membership', String(tagged.id), `tag ${tagId}`],
        ['contacts', 'extra_membership', String(listless.id), `list ${extraList}`],
        ['contacts', 'deleted_in_crm', String(victim.id)],
        ['funnel_subscribers', 'missing_in_warehouse', `${sub.funnelId}/${sub.id}`],
        ['campaigns', 'title_mismatch', String(campaign.id), 'title'],
      ];
      for (const [stream, kind, id, field] of expected) {
        const g = group(dirty.out, stream, kind);
        expect(g, `${stream} ${kind} in ${JSON.stringify(dirty.out.groups)}`).toMatchObject({ count: 1, examples: [expect.objectContaining({ id, ...(field ? { field } : {}) })] });
      }
      expect(dirty.out.total, JSON.stringify(dirty.out.groups, null, 1)).toBe(expected.length);
      expect(dirty.stderr).toMatch(/differs from the CRM in 7 place\(s\).*\[VERIFY_MISMATCH\]/);
      expect(group(dirty.out, 'contacts', 'contact_field_mismatch')!.examples[0]).toMatchObject({ warehouse: 'Planted City', crm: fieldContact.city });

      // The same in the terminal form: one line per kind with its count and ids.
      const text = await runCli(['verify'], env.env);
      expect(text.code).toBe(1);
      expect(text.stdout).toMatch(new RegExp(`campaigns +title mismatch +1  ids ${campaign.id}\\n`));
      expect(text.stdout).toContain(`campaign ${campaign.id}: title warehouse "Planted title" vs CRM`);
      expect(text.stdout).toMatch(new RegExp(`funnel_subscribers +missing in warehouse +1  ids ${sub.funnelId}/${sub.id}\\n`));
    });
  });

  it('after a clean sync against a server capping per_page at 250 (real mode, New York time), exits 0', { timeout: 240_000 }, async () => {
    const tz = 'America/New_York';
    await withSyncEnv({ sim: { contacts: 760, seed: 5, mode: 'real', timezone: tz, perPageCap: 250 }, env: { CRM_TIMEZONE: tz } }, async (env) => {
      const streams = STREAMS;
      const run = await env.sync({ streams: streams as never, tuning: { ...SMALL_TUNING, perPage: 200 } });
      expect(run.failed).toEqual([]);
      const streamArgs = streams.flatMap((s) => ['--stream', s]);
      const r = await runCli(['verify', '--json', ...streamArgs], env.env);
      const out = JSON.parse(r.stdout) as VerifyJson;
      // The old verify read one page of 250 and reported every contact past it as deleted in the CRM.
      expect(out.groups, JSON.stringify(out.groups, null, 1)).toEqual([]);
      expect(r.code).toBe(0);
      // Progress showed every page the capped server served (asked 500, served 250: 4 pages).
      expect(r.stderr).toMatch(/verify contacts: page 1\/4/);

      // Times are compared as instants in the site zone: read in the wrong zone, every contact's
      // created_at is off by the New York offset, and the difference prints as ISO 8601 UTC.
      const utc = await runCli(['verify', '--json', '--stream', 'contacts'], { ...env.env, CRM_TIMEZONE: 'UTC' });
      expect(utc.code).toBe(1);
      const wrong = (JSON.parse(utc.stdout) as VerifyJson).groups.find((g) => g.kind === 'contact_field_mismatch')!;
      expect(wrong.count).toBeGreaterThanOrEqual(760);
      const created = wrong.examples.find((e) => e.field === 'created_at')!;
      expect(created.warehouse).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const offsetHours = (Date.parse(created.crm!) - Date.parse(created.warehouse!)) / 3_600_000;
      expect([-4, -5]).toContain(offsetHours);
    });
  });
});
