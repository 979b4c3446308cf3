import type { Contact, TaxonomyRef } from '../../src/crm/types.js';

const FIRST = ['Ada', 'Bo', 'Cyd', 'Dee', 'Eve', 'Fay', 'Gus', 'Hal'];

export function tagRef(id: number): TaxonomyRef {
  return { id, title: `Tag ${id}`, slug: `tag-${id}` };
}

export function listRef(id: number): TaxonomyRef {
  return { id, title: `List ${id}`, slug: `list-${id}` };
}

/** A realistic normalized contact; `i` picks deterministic field values. */
export function makeContact(i: number, overrides: Partial<Contact> = {}): Contact {
  const first = FIRST[i % FIRST.length]!;
  const last = `Smith${i % 977}`;
  const created = new Date(Date.UTC(2024, 0, 1) + i * 3_600_000).toISOString();
  const base: Contact = {
    id: i,
    user_id: i % 10 === 0 ? i * 3 : null,
    hash: `h${i.toString(16).padStart(30, '0')}`,
    email: `user${i}@example.com`,
    first_name: first,
    last_name: last,
    full_name: `${first} ${last}`,
    status: i % 7 === 0 ? 'unsubscribed' : 'subscribed',
    contact_type: i % 3 === 0 ? 'customer' : 'lead',
    phone: `+1555${String(i).padStart(7, '0')}`,
    address_line_1: `${i} Main St`,
    address_line_2: null,
    city: 'Springfield',
    state: 'IL',
    postal_code: '62701',
    country: 'US',
    date_of_birth: i % 4 === 0 ? null : `19${50 + (i % 50)}-0${1 + (i % 9)}-1${i % 10}`,
    photo: `https://img.example.com/${i}.png`,
    company_id: i % 5 === 0 ? 1 + (i % 13) : null,
    total_points: i % 100,
    life_time_value: (i % 17) * 12.5,
    tags: [tagRef(1 + (i % 20)), tagRef(30)],
    lists: [listRef(1 + (i % 5))],
    custom_values: { plan: i % 3 ? 'pro' : 'free', seats: String(i % 50), interests: ['a', 'b'] },
    created_at: created,
    updated_at: created,
    raw: {},
  };
  const c = { ...base, ...overrides };
  const sqlTime = (s: string | null) => (s ? s.slice(0, 19).replace('T', ' ') : null);
  // raw: the record as the CRM sent it (string ids, zone-less timestamps, nested refs).
  c.raw = { ...c, raw: undefined, id: String(c.id), created_at: sqlTime(c.created_at), updated_at: sqlTime(c.updated_at), last_activity: sqlTime(new Date().toISOString()) };
  delete (c.raw as Record<string, unknown>).raw;
  return c;
}
