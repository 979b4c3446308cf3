import type { RunningSimulator } from '../../../src/simulator/index.js';
import type { WarehouseSession } from '../../../src/sync/warehouse-port.js';

export interface EditCounts {
  fields: number[];
  customValues: number[];
  tagOnly: number[];
  listOnly: number[];
}

/**
 * Edits existing contacts, no inserts or deletes: 15 field edits, 10 custom-value edits, 10 tag-only
 * and 10 list-only changes, each on its own contact. Tag changes go to subscribed contacts, since
 * the real CRM's tag counts count subscribed members only (a tag change of an unsubscribed contact
 * is left to the rolling sweep). Returns the ids edited by kind.
 */
export function editContacts(sim: RunningSimulator, seed = 1): EditCounts {
  const contacts = sim.truth().contacts;
  const tags = sim.truth().tags.map((t) => Number(t.id));
  const lists = sim.truth().lists.map((l) => Number(l.id));
  const pick = (n: number, ok: (c: (typeof contacts)[number]) => boolean, used: Set<number>): (typeof contacts)[number][] => {
    const out: (typeof contacts)[number][] = [];
    for (let i = 0; out.length < n && i < contacts.length; i++) {
      const c = contacts[(i * 37 + seed * 11) % contacts.length]!;
      if (!used.has(c.id) && ok(c)) {
        used.add(c.id);
        out.push(c);
      }
    }
    if (out.length < n) throw new Error(`not enough contacts to edit (${out.length} of ${n})`);
    return out;
  };
  const used = new Set<number>();
  const edits: EditCounts = { fields: [], customValues: [], tagOnly: [], listOnly: [] };
  for (const c of pick(15, () => true, used)) {
    sim.mutate.updateContact(c.id, { first_name: `Edited${seed}-${c.id}`, city: `City ${seed}` });
    edits.fields.push(c.id);
  }
  for (const c of pick(10, () => true, used)) {
    sim.mutate.updateContact(c.id, { custom_values: { job_title: `Title ${seed}-${c.id}` } });
    edits.customValues.push(c.id);
  }
  // On the smallest tag and list: re-reading their members costs less than a sweep, so the run
  // repairs by membership (with many large tags differing it would sweep instead).
  const smallest = (ids: number[], has: (c: (typeof contacts)[number], id: number) => boolean): number =>
    ids.map((id) => ({ id, n: contacts.filter((c) => has(c, id)).length })).sort((a, b) => a.n - b.n)[0]!.id;
  const tag = smallest(tags, (c, id) => c.tags.includes(id));
  const list = smallest(lists, (c, id) => c.lists.includes(id));
  // Seven adds and three removals each: the counts move (by 4), and removals exercise the held
  // members a re-read no longer returns.
  for (const [i, c] of [...pick(7, (x) => x.status === 'subscribed' && !x.tags.includes(tag), used), ...pick(3, (x) => x.status === 'subscribed' && x.tags.includes(tag), used)].entries()) {
    if (i < 7) sim.mutate.addTag(c.id, tag);
    else sim.mutate.removeTag(c.id, tag);
    edits.tagOnly.push(c.id);
  }
  for (const [i, c] of [...pick(7, (x) => !x.lists.includes(list), used), ...pick(3, (x) => x.lists.includes(list), used)].entries()) {
    if (i < 7) sim.mutate.addToList(c.id, list);
    else sim.mutate.removeFromList(c.id, list);
    edits.listOnly.push(c.id);
  }
  return edits;
}

/** Contacts whose custom values in the warehouse differ from the simulator's (values compared as text). */
export async function customValueDiffs(w: WarehouseSession, sim: RunningSimulator): Promise<number[]> {
  const rows = await w.query(`SELECT id, custom_values::VARCHAR AS cv FROM contacts WHERE _deleted_at IS NULL`);
  const held = new Map(rows.map((r) => [Number(r.id), normalize(JSON.parse(String(r.cv ?? '{}')) as Record<string, unknown>)]));
  const out: number[] = [];
  for (const c of sim.truth().contacts) if (held.get(c.id) !== normalize(c.custom_values)) out.push(c.id);
  return out;
}

function normalize(values: Record<string, unknown> | null): string {
  const entries = Object.entries(values ?? {})
    .filter(([, v]) => v !== null && v !== '' && !(Array.isArray(v) && v.length === 0))
    .map(([k, v]) => [k, Array.isArray(v) ? v.map(String) : String(v)] as const)
    .sort(([a], [b]) => a.localeCompare(b));
  return JSON.stringify(entries);
}
