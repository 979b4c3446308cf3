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
});
