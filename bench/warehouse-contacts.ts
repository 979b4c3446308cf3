import type { Contact } from '../src/crm/types.js';

const FIRST = ['Ada', 'Bo', 'Cyd', 'Dee', 'Eve', 'Fay', 'Gus', 'Hal', 'Ivy', 'Jon'];
const LAST = ['Smith', 'Jones', 'Garcia', 'Müller', 'Rossi', 'Dubois', 'Kowalski', 'Tanaka', "O'Brien", 'Nguyen'];
const CITIES = ['Springfield', 'Berlin', 'São Paulo', 'Lyon', 'Osaka', 'Austin', 'Kraków', 'Dublin'];
const STATUSES = ['subscribed', 'subscribed', 'subscribed', 'unsubscribed', 'pending', 'bounced'];

const sqlTime = (iso: string) => iso.slice(0, 19).replace('T', ' ');

/**
 * A realistic normalized contact as the client produces it, with `raw` as the CRM sent it
 * (string ids, zone-less timestamps, nested tag and list objects). `version` changes content.
 */
export function benchContact(i: number, version = 0): Contact {
  const first = FIRST[i % 10]!;
  const last = LAST[(i >> 3) % 10]!;
  const created = new Date(Date.UTC(2020, 0, 1) + i * 97_000).toISOString();
  const updated = new Date(Date.UTC(2020, 0, 1) + i * 97_000 + version * 86_400_000).toISOString();
  const tags = [1 + (i % 25), 26 + (i % 7)].map((id) => ({ id, title: `Tag ${id}`, slug: `tag-${id}` }));
  const lists = [{ id: 1 + (i % 6), title: `List ${1 + (i % 6)}`, slug: `list-${1 + (i % 6)}` }];
  const custom_values = { plan: i % 3 ? 'pro' : 'free', seats: String(i % 50), source: version ? `v${version}` : 'import' };
  const c: Contact = {
    id: i,
    user_id: i % 10 === 0 ? i * 3 : null,
    hash: i.toString(16).padStart(32, '0'),
    email: `${first.toLowerCase()}.${i}@example.com`,
    first_name: first,
    last_name: last,
    full_name: `${first} ${last}`,
    status: STATUSES[i % STATUSES.length]!,
    contact_type: i % 4 === 0 ? 'customer' : 'lead',
    phone: `+1555${String(i).padStart(7, '0')}`,
    address_line_1: `${i % 9999} Main Street`,
    address_line_2: i % 5 === 0 ? `Apt ${i % 100}` : null,
    city: CITIES[i % CITIES.length]!,
    state: 'ST',
    postal_code: String(10000 + (i % 89999)),
    country: 'US',
    date_of_birth: i % 3 === 0 ? null : `19${60 + (i % 40)}-0${1 + (i % 9)}-1${i % 10}`,
    photo: `https://www.gravatar.com/avatar/${i.toString(16)}`,
    company_id: i % 7 === 0 ? 1 + (i % 50) : null,
    total_points: i % 100,
    life_time_value: (i % 17) * 12.5,
    tags,
    lists,
    custom_values,
    created_at: created,
    updated_at: updated,
    raw: {},
  };
  c.raw = {
    id: String(i),
    user_id: c.user_id === null ? null : String(c.user_id),
    hash: c.hash,
    email: c.email,
    first_name: first,
    last_name: last,
    full_name: c.full_name,
    status: c.status,
    contact_type: c.contact_type,
    phone: c.phone,
    address_line_1: c.address_line_1,
    address_line_2: c.address_line_2 ?? '',
    city: c.city,
    state: c.state,
    postal_code: c.postal_code,
    country: c.country,
    date_of_birth: c.date_of_birth ?? '0000-00-00',
    photo: c.photo,
    company_id: c.company_id,
    total_points: String(c.total_points),
    life_time_value: String(c.life_time_value),
    created_at: sqlTime(created),
    updated_at: sqlTime(updated),
    last_activity: sqlTime(updated),
    tags,
    lists,
    custom_values,
  };
  return c;
}
