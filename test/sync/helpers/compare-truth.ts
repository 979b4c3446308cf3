import type { SimulatorTruth } from '../../../src/simulator/index.js';
import type { WarehouseSession } from '../../../src/sync/warehouse-port.js';

/**
 * Every difference between the warehouse and the simulator's ground truth (read from the
 * simulator's own state, not through the client), as readable lines; empty when equal.
 */
export async function differencesFromTruth(w: WarehouseSession, truth: SimulatorTruth, streams: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  if (streams.includes('contacts')) out.push(...(await contactDiffs(w, truth)));
  const entity = async (table: string, rows: Record<string, unknown>[], key = 'id') => {
    const held = await w.query(`SELECT ${key} AS k FROM ${table} WHERE _deleted_at IS NULL`);
    diffSets(out, table, new Set(held.map((r) => String(r.k))), new Set(rows.map((r) => String(r[key]))));
  };
  if (streams.includes('tags')) await entity('tags', truth.tags);
  if (streams.includes('lists')) await entity('lists', truth.lists);
  if (streams.includes('companies')) await entity('companies', truth.companies);
  if (streams.includes('campaigns')) await entity('campaigns', truth.campaigns);
  if (streams.includes('funnels')) await entity('funnels', truth.funnels);
  if (streams.includes('custom_fields')) await entity('custom_fields', truth.customFields, 'slug');
  if (streams.includes('funnel_subscribers')) {
    const held = await w.query(`SELECT funnel_id, subscriber_id, status FROM funnel_subscribers`);
    diffSets(
      out,
      'funnel_subscribers',
      new Set(held.map((r) => `${String(r.funnel_id)}/${String(r.subscriber_id)}/${String(r.status)}`)),
      // The truth lists records as the simulator keeps them (camelCase).
      new Set(truth.funnelSubscribers.map((r) => `${String(r.funnel_id ?? r.funnelId)}/${String(r.subscriber_id ?? r.subscriberId)}/${String(r.status)}`)),
    );
  }
  return out;
}

function diffSets(out: string[], what: string, held: Set<string>, truth: Set<string>): void {
  const missing = [...truth].filter((k) => !held.has(k));
  const extra = [...held].filter((k) => !truth.has(k));
  if (missing.length) out.push(`${what}: ${missing.length} missing, e.g. ${missing.slice(0, 5).join(', ')}`);
  if (extra.length) out.push(`${what}: ${extra.length} extra, e.g. ${extra.slice(0, 5).join(', ')}`);
}

async function contactDiffs(w: WarehouseSession, truth: SimulatorTruth): Promise<string[]> {
  const out: string[] = [];
  const rows = await w.query(
    `SELECT id, email, first_name, last_name, status, phone, city, country,
            list_sort(coalesce(tag_ids, [])) AS tags, list_sort(coalesce(list_ids, [])) AS lists,
            epoch_ms(updated_at) AS updated_ms, custom_values::VARCHAR AS cv
       FROM contacts WHERE _deleted_at IS NULL`,
  );
  const held = new Map(rows.map((r) => [Number(r.id), r]));
  const want = new Map(truth.contacts.map((c) => [c.id, c]));
  diffSets(out, 'contacts', new Set([...held.keys()].map(String)), new Set([...want.keys()].map(String)));
  let changed = 0;
  const examples: string[] = [];
  for (const [id, t] of want) {
    const r = held.get(id);
    if (!r) continue;
    const fields: [string, unknown, unknown][] = [
      ['email', r.email, t.email],
      ['first_name', r.first_name, t.first_name],
      ['last_name', r.last_name, t.last_name],
      ['status', r.status, t.status],
      ['phone', r.phone, t.phone],
      ['city', r.city, t.city],
      ['tags', JSON.stringify((r.tags as unknown[]).map(Number)), JSON.stringify([...t.tags].sort((a, b) => a - b))],
      ['lists', JSON.stringify((r.lists as unknown[]).map(Number)), JSON.stringify([...t.lists].sort((a, b) => a - b))],
      ['updated_at', Number(r.updated_ms), Date.parse(t.updated_at_iso)],
      ['custom_values', canonical(r.cv === null || r.cv === undefined ? {} : JSON.parse(String(r.cv))), canonical(t.custom_values)],
    ];
    const bad = fields.filter(([, a, b]) => (a ?? null) !== (b ?? null));
    if (bad.length > 0) {
      changed++;
      if (examples.length < 5) examples.push(`#${id} ${bad.map(([f, a, b]) => `${f}: ${JSON.stringify(a)} != ${JSON.stringify(b)}`).join(', ')}`);
    }
  }
  if (changed) out.push(`contacts: ${changed} differ, e.g. ${examples.join('; ')}`);
  return out;
}

/** JSON with object keys sorted, so equal custom values compare equal whatever their key order. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return v.length === 0 ? '{}' : `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}
