import type { Warehouse } from './types.js';

export interface MembershipCount {
  id: number;
  /** Live contacts holding it, whatever their status. */
  total: number;
  /** Of those, the subscribed ones (what the CRM's `subscribersCount` counts). */
  subscribed: number;
}

type Reader = Pick<Warehouse, 'query'>;

/** Per-tag or per-list member counts of the live contacts held, to compare with the CRM's listings. */
export async function membershipCounts(w: Reader, kind: 'tags' | 'lists'): Promise<Map<number, MembershipCount>> {
  const column = kind === 'tags' ? 'tag_ids' : 'list_ids';
  const rows = await w.query(
    `SELECT m.id AS id, count(*) AS total, count(*) FILTER (WHERE c.status = 'subscribed') AS subscribed
       FROM contacts c, unnest(c.${column}) AS m(id)
      WHERE c._deleted_at IS NULL
      GROUP BY m.id`,
  );
  return new Map(rows.map((r) => [Number(r.id), { id: Number(r.id), total: Number(r.total), subscribed: Number(r.subscribed) }]));
}

/** Live contacts held as members of the tag or list: those a re-read of its members does not return lost it (or are gone). */
export async function heldMembers(w: Reader, kind: 'tags' | 'lists', id: number): Promise<number[]> {
  const column = kind === 'tags' ? 'tag_ids' : 'list_ids';
  const rows = await w.query(`SELECT id FROM contacts WHERE _deleted_at IS NULL AND list_contains(${column}, $1) ORDER BY id`, [id]);
  return rows.map((r) => Number(r.id));
}
