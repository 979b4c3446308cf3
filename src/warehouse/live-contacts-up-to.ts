import type { Warehouse } from './types.js';

/**
 * Live contacts held with an id at or below `id`: where that id sits in the CRM's id-ascending
 * listing (its offset), as far as the warehouse knows.
 */
export async function liveContactsUpTo(w: Pick<Warehouse, 'query'>, id: number): Promise<number> {
  const rows = await w.query(`SELECT count(*) AS n FROM contacts WHERE _deleted_at IS NULL AND id <= $1`, [id]);
  return Number(rows[0]?.n ?? 0);
}
