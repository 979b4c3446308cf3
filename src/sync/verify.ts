import type { Contact } from '../crm/types.js';
import { readAllPages } from './read-all-pages.js';
import type { SyncCrmClient } from './crm-port.js';
import type { WarehouseSession } from './warehouse-port.js';

export interface Difference {
  stream: string;
  kind: 'count' | 'missing' | 'extra' | 'changed';
  id?: string;
  detail: string;
}

/** The contact fields verify compares, as comparable strings. */
const CONTACT_FIELDS = [
  'email',
  'first_name',
  'last_name',
  'status',
  'phone',
  'address_line_1',
  'address_line_2',
  'city',
  'state',
  'postal_code',
  'country',
  'date_of_birth',
  'company_id',
  'tags',
  'lists',
  'custom_values',
  'updated_at',
] as const;
type ContactField = (typeof CONTACT_FIELDS)[number];
type Comparable = Record<ContactField, string>;

/** JSON with sorted keys, so that key order never shows as a difference. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

const str = (v: unknown): string => (v === null || v === undefined || v === '' ? '' : String(v));
const ids = (v: readonly unknown[] | null | undefined): string => [...(v ?? [])].map(Number).sort((a, b) => a - b).join(',');
const ms = (v: unknown): string => (v === null || v === undefined ? '' : String(typeof v === 'number' ? v : Date.parse(String(v))));

export function comparableFromCrm(c: Contact): Comparable {
  return {
    email: str(c.email),
    first_name: str(c.first_name),
    last_name: str(c.last_name),
    status: str(c.status),
    phone: str(c.phone),
    address_line_1: str(c.address_line_1),
    address_line_2: str(c.address_line_2),
    city: str(c.city),
    state: str(c.state),
    postal_code: str(c.postal_code),
    country: str(c.country),
    date_of_birth: str(c.date_of_birth),
    company_id: str(c.company_id),
    tags: ids(c.tags.map((t) => t.id)),
    lists: ids(c.lists.map((l) => l.id)),
    custom_values: canonicalJson(c.custom_values ?? {}),
    updated_at: ms(c.updated_at),
  };
}

function comparableFromRow(r: Record<string, unknown>): Comparable {
  let custom: unknown = {};
  try {
    custom = typeof r.custom_values === 'string' ? JSON.parse(r.custom_values) : (r.custom_values ?? {});
  } catch {
    custom = r.custom_values;
  }
  if (Array.isArray(custom) && custom.length === 0) custom = {};
  return {
    email: str(r.email),
    first_name: str(r.first_name),
    last_name: str(r.last_name),
    status: str(r.status),
    phone: str(r.phone),
    address_line_1: str(r.address_line_1),
    address_line_2: str(r.address_line_2),
    city: str(r.city),
    state: str(r.state),
    postal_code: str(r.postal_code),
    country: str(r.country),
    date_of_birth: str(r.dob),
    company_id: str(r.company_id),
    tags: ids(r.tag_ids as unknown[] | null),
    lists: ids(r.list_ids as unknown[] | null),
    custom_values: canonicalJson(custom ?? {}),
    updated_at: ms(r.updated_ms),
  };
}

/** Contacts: count, id sets and every field verify compares. */
export async function verifyContacts(client: SyncCrmClient, read: <T>(fn: (w: WarehouseSession) => Promise<T>) => Promise<T>, perPage = 500): Promise<Difference[]> {
  const crm = new Map<number, Comparable>();
  let total: number | undefined;
  for (let page = 1; ; page++) {
    const p = await client.contacts.listPage({ page, perPage, order: 'asc', orderBy: 'id', customFields: true });
    total ??= p.total;
    for (const c of p.items) crm.set(c.id, comparableFromCrm(c));
    if (p.items.length < perPage || (p.lastPage !== undefined && page >= p.lastPage)) break;
  }
  const rows = await read((w) =>
    w.query(
      `SELECT id, email, first_name, last_name, status, phone, address_line_1, address_line_2, city, state, postal_code, country,
              strftime(date_of_birth, '%Y-%m-%d') AS dob, company_id, tag_ids, list_ids, custom_values::VARCHAR AS custom_values,
              epoch_ms(updated_at) AS updated_ms
         FROM contacts WHERE _deleted_at IS NULL ORDER BY id`,
    ),
  );
  const diffs: Difference[] = [];
  if (total !== undefined && total !== rows.length) {
    diffs.push({ stream: 'contacts', kind: 'count', detail: `CRM reports ${total} contacts, the warehouse holds ${rows.length} live` });
  }
  const held = new Map(rows.map((r) => [Number(r.id), comparableFromRow(r)]));
  for (const [id, want] of crm) {
    const have = held.get(id);
    if (!have) {
      diffs.push({ stream: 'contacts', kind: 'missing', id: String(id), detail: `contact ${id} (${want.email}) is in the CRM but not live in the warehouse` });
      continue;
    }
    const changed = CONTACT_FIELDS.filter((f) => have[f] !== want[f]);
    if (changed.length > 0) {
      diffs.push({
        stream: 'contacts',
        kind: 'changed',
        id: String(id),
        detail: `contact ${id}: ${changed.map((f) => `${f} warehouse ${JSON.stringify(have[f])} vs CRM ${JSON.stringify(want[f])}`).join('; ')}`,
      });
    }
  }
  for (const id of held.keys()) {
    if (!crm.has(id)) diffs.push({ stream: 'contacts', kind: 'extra', id: String(id), detail: `contact ${id} is live in the warehouse but not in the CRM` });
  }
  return diffs;
}

/** Small streams and funnel subscribers: id sets (and titles where they have one). */
export async function verifyEntities(client: SyncCrmClient, read: <T>(fn: (w: WarehouseSession) => Promise<T>) => Promise<T>, streams: readonly string[]): Promise<Difference[]> {
  const diffs: Difference[] = [];
  const compare = async (stream: string, table: string, crmRows: { key: string; label: string }[], keyCol = 'id', labelCol = 'title') => {
    const held = await read((w) => w.query(`SELECT ${keyCol}::VARCHAR AS k, ${labelCol}::VARCHAR AS l FROM ${table} WHERE _deleted_at IS NULL`));
    const heldMap = new Map(held.map((r) => [String(r.k), str(r.l)]));
    const crmMap = new Map(crmRows.map((r) => [r.key, r.label]));
    for (const [k, label] of crmMap) {
      if (!heldMap.has(k)) diffs.push({ stream, kind: 'missing', id: k, detail: `${stream} ${k} (${label}) is in the CRM but not in the warehouse` });
      else if (heldMap.get(k) !== label) diffs.push({ stream, kind: 'changed', id: k, detail: `${stream} ${k}: ${labelCol} warehouse ${JSON.stringify(heldMap.get(k))} vs CRM ${JSON.stringify(label)}` });
    }
    for (const k of heldMap.keys()) if (!crmMap.has(k)) diffs.push({ stream, kind: 'extra', id: k, detail: `${stream} ${k} is in the warehouse but not in the CRM` });
  };
  if (streams.includes('tags')) await compare('tags', 'tags', (await client.tags.list()).map((t) => ({ key: String(t.id), label: t.title })));
  if (streams.includes('lists')) await compare('lists', 'lists', (await client.lists.list()).map((t) => ({ key: String(t.id), label: t.title })));
  if (streams.includes('custom_fields')) {
    await compare('custom_fields', 'custom_fields', (await client.customFields.list()).map((f) => ({ key: f.slug, label: f.label })), 'slug', 'label');
  }
  if (streams.includes('companies')) {
    try {
      const rows = await readAllPages((page, perPage) => client.companies.listPage({ page, perPage }));
      await compare('companies', 'companies', rows.rows.map((c) => ({ key: String(c.id), label: c.name })), 'id', 'name');
    } catch (err) {
      if (!(err instanceof Error && 'code' in err && err.code === 'CRM_FORBIDDEN')) throw err;
    }
  }
  if (streams.includes('campaigns')) {
    const rows = await readAllPages((page, perPage) => client.campaigns.listPage({ page, perPage, withStats: false }));
    await compare('campaigns', 'campaigns', rows.rows.map((c) => ({ key: String(c.id), label: c.title })));
  }
  let funnelIds: number[] = [];
  if (streams.includes('funnels') || streams.includes('funnel_subscribers')) {
    const rows = await readAllPages((page, perPage) => client.funnels.listPage({ page, perPage }));
    funnelIds = rows.rows.map((f) => f.id);
    if (streams.includes('funnels')) await compare('funnels', 'funnels', rows.rows.map((f) => ({ key: String(f.id), label: f.title })));
  }
  if (streams.includes('funnel_subscribers')) {
    const crmRows: { key: string; label: string }[] = [];
    for (const id of funnelIds) {
      const subs = await readAllPages((page, perPage) => client.funnels.subscribersPage(id, { status: 'all', page, perPage }));
      crmRows.push(...subs.rows.map((s) => ({ key: `${s.funnel_id}/${s.id}`, label: s.status })));
    }
    const held = await read((w) => w.query(`SELECT funnel_id::VARCHAR || '/' || id::VARCHAR AS k, status AS l FROM funnel_subscribers`));
    const heldMap = new Map(held.map((r) => [String(r.k), str(r.l)]));
    const crmMap = new Map(crmRows.map((r) => [r.key, r.label]));
    for (const [k, label] of crmMap) {
      if (!heldMap.has(k)) diffs.push({ stream: 'funnel_subscribers', kind: 'missing', id: k, detail: `funnel subscriber ${k} is in the CRM but not in the warehouse` });
      else if (heldMap.get(k) !== label) diffs.push({ stream: 'funnel_subscribers', kind: 'changed', id: k, detail: `funnel subscriber ${k}: status warehouse ${JSON.stringify(heldMap.get(k))} vs CRM ${JSON.stringify(label)}` });
    }
    for (const k of heldMap.keys()) if (!crmMap.has(k)) diffs.push({ stream: 'funnel_subscribers', kind: 'extra', id: k, detail: `funnel subscriber ${k} is in the warehouse but not in the CRM` });
  }
  return diffs;
}
