/** The contact tables a load writes, without the columns that differ by load (id, time). */
const CONTACT_TABLES = {
  contacts: 'SELECT * EXCLUDE (_load_id, _synced_at, raw), CAST(json(raw) AS VARCHAR) AS raw FROM contacts ORDER BY id',
  // Versions of one load share their valid_from (a contact on two pages of a batch): the rest orders them.
  history: 'SELECT * EXCLUDE (_load_id, _synced_at) FROM contacts_history ORDER BY id, valid_from, valid_to NULLS LAST, _fingerprint',
  tags: 'SELECT contact_id, tag_id FROM contact_tags ORDER BY ALL',
  lists: 'SELECT contact_id, list_id FROM contact_lists ORDER BY ALL',
};

/** Every row of the contact tables, for comparing two loads of the same pages. */
export async function contactTablesSnapshot(w: { query(sql: string): Promise<unknown> }): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [name, q] of Object.entries(CONTACT_TABLES)) out[name] = await w.query(q);
  return out;
}
