import type { Warehouse } from './types.js';

/** Funnels the warehouse holds subscribers of, to prune those gone from the CRM. */
export async function heldFunnelIds(w: Pick<Warehouse, 'query'>): Promise<number[]> {
  const rows = await w.query(`SELECT DISTINCT funnel_id FROM funnel_subscribers ORDER BY funnel_id`);
  return rows.map((r) => Number(r.funnel_id));
}
