import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withSyncEnv } from './helpers/sync-env.js';
import type { StreamName } from '../../workflows/streams.js';

const STREAMS: StreamName[] = ['contacts', 'tags', 'lists'];

type Counts = Record<string, number>;
const toCounts = (rows: Record<string, unknown>[]): Counts => Object.fromEntries(rows.map((r) => [String(r.k), Number(r.n)]));

/** Issue 14 item 7: memberships of deleted contacts stayed in contact_tags and contact_lists. */
describe('a tombstoned contact has no memberships', () => {
  it('after deletes in the CRM, counts per tag and list are right in the tables, the views and the lake', async () => {
    await withSyncEnv({ sim: { contacts: 240, seed: 31, mode: 'real' } }, async (env) => {
      await env.sync({ streams: STREAMS });
      const members = env.sim.truth().contacts.filter((c) => c.tags.length > 0 && c.lists.length > 0);
      const deleted = members.slice(0, 10).map((c) => c.id);
      expect(deleted).toHaveLength(10);
      for (const id of deleted) env.sim.mutate.deleteContact(id);

      const run = await env.sync({ streams: ['contacts'], reconcile: 'always' });
      expect(run.failed).toEqual([]);
      expect(run.streams[0]).toMatchObject({ deleted: 10 });

      const live = env.sim.truth().contacts;
      const expectTags: Counts = {};
      const expectLists: Counts = {};
      for (const c of live) {
        for (const t of c.tags) expectTags[String(t)] = (expectTags[String(t)] ?? 0) + 1;
        for (const l of c.lists) expectLists[String(l)] = (expectLists[String(l)] ?? 0) + 1;
      }
      const idList = deleted.join(', ');
      const lake = env.config.lakePath;
      expect(existsSync(join(lake, 'contact_tags'))).toBe(true);
      const got = await env.read(async (w) => ({
        leftTags: await w.query(`SELECT count(*) AS n FROM contact_tags WHERE contact_id IN (${idList})`),
        leftLists: await w.query(`SELECT count(*) AS n FROM contact_lists WHERE contact_id IN (${idList})`),
        tags: toCounts(await w.query('SELECT tag_id AS k, count(*) AS n FROM contact_tags GROUP BY ALL')),
        lists: toCounts(await w.query('SELECT list_id AS k, count(*) AS n FROM contact_lists GROUP BY ALL')),
        named: toCounts(await w.query('SELECT tag_id AS k, count(*) AS n FROM contact_tags_named GROUP BY ALL')),
        lakeTags: toCounts(await w.query(`SELECT tag_id AS k, count(*) AS n FROM read_parquet('${join(lake, 'contact_tags')}/**/*.parquet', hive_partitioning = true) GROUP BY ALL`)),
        lakeLists: toCounts(await w.query(`SELECT list_id AS k, count(*) AS n FROM read_parquet('${join(lake, 'contact_lists')}/**/*.parquet', hive_partitioning = true) GROUP BY ALL`)),
        kept: await w.query(`SELECT count(*) AS n FROM contacts WHERE id IN (${idList}) AND _deleted_at IS NOT NULL AND len(tag_ids) > 0`),
      }));
      expect(Number(got.leftTags[0]?.n)).toBe(0);
      expect(Number(got.leftLists[0]?.n)).toBe(0);
      expect(got.tags).toEqual(expectTags);
      expect(got.lists).toEqual(expectLists);
      expect(got.named).toEqual(expectTags);
      expect(got.lakeTags).toEqual(expectTags);
      expect(got.lakeLists).toEqual(expectLists);
      expect(Number(got.kept[0]?.n)).toBe(10); // the tombstoned row still says what it had
    });
  });

  it('a tag deleted in the CRM leaves its members in the next incremental run, though no updated_at moved', { timeout: 120_000 }, async () => {
    await withSyncEnv({ sim: { contacts: 400, seed: 32, mode: 'real' } }, async (env) => {
      // A small tag: reading its members by id costs fewer requests than a sweep (a big one sweeps).
      const { id: tag } = env.sim.mutate.createTag('Short-lived');
      for (const c of env.sim.truth().contacts.slice(10, 14)) env.sim.mutate.addTag(c.id, tag);
      await env.sync({ streams: STREAMS });
      expect(Number((await env.read((w) => w.query(`SELECT count(*) AS n FROM contact_tags WHERE tag_id = ${tag}`)))[0]?.n)).toBe(4);
      env.sim.mutate.deleteTag(tag);

      const run = await env.sync({ streams: ['contacts', 'tags'] });
      expect(run.failed).toEqual([]);
      const contacts = run.streams.find((s) => s.stream === 'contacts')!;
      expect(contacts.mode).toBe('incremental');
      expect(contacts.fresh?.memberships?.differing).toContain(`tag ${tag} (deleted)`);
      const left = await env.read(async (w) => ({
        pivot: Number((await w.query(`SELECT count(*) AS n FROM contact_tags WHERE tag_id = ${tag}`))[0]?.n),
        ids: Number((await w.query(`SELECT count(*) AS n FROM contacts WHERE _deleted_at IS NULL AND list_contains(tag_ids, ${tag})`))[0]?.n),
      }));
      expect(left).toEqual({ pivot: 0, ids: 0 });
    });
  });
});
