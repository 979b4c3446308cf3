import type { CompanyRec, ContactRec, CustomFieldRec, CustomValue, TaxonomyRec } from './model.js';
import { hash32, pick, unit } from './rng.js';

/** Seeded data is anchored at a fixed instant so that the same seed gives the same records. */
export const SEED_EPOCH_MS = Date.UTC(2026, 0, 1, 0, 0, 0);
const SEED_SPAN_MS = 2 * 365 * 86_400_000;

const FIRST = [
  'Ada',
  'Grace',
  'Alan',
  'Katherine',
  'Linus',
  'Margaret',
  'Dennis',
  'Barbara',
  'Ken',
  'Frances',
  'Edsger',
  'Sophie',
  'Donald',
  'Radia',
  'Tim',
  'Hedy',
  'John',
  'Annie',
  'Niklaus',
  'Shafi',
  'Guido',
  'Joan',
  'Bjarne',
  'Mary',
  'Leslie',
  'Karen',
  'Tony',
  'Evelyn',
  'Yukihiro',
  'Lynn',
  'Ivan',
  'Jean',
  'Claude',
  'Ruth',
  'Rasmus',
  'Adele',
  'James',
  'Carol',
  'Brian',
  'Susan',
];
const LAST = [
  'Lovelace',
  'Hopper',
  'Turing',
  'Johnson',
  'Torvalds',
  'Hamilton',
  'Ritchie',
  'Liskov',
  'Thompson',
  'Allen',
  'Dijkstra',
  'Wilson',
  'Knuth',
  'Perlman',
  'Lee',
  'Lamarr',
  'McCarthy',
  'Easley',
  'Wirth',
  'Goldwasser',
  'Rossum',
  'Clarke',
  'Stroustrup',
  'Keller',
  'Lamport',
  'Jones',
  'Hoare',
  'Berezin',
  'Matsumoto',
  'Conway',
  'Sutherland',
  'Sammet',
  'Shannon',
  'Teitelbaum',
  'Lerdorf',
  'Goldberg',
  'Gosling',
  'Shaw',
  'Kernighan',
  'Kare',
];
const CITIES: readonly (readonly [string, string])[] = [
  ['Berlin', 'DE'],
  ['Porto', 'PT'],
  ['Lisbon', 'PT'],
  ['Toronto', 'CA'],
  ['Austin', 'US'],
  ['Boston', 'US'],
  ['London', 'GB'],
  ['Paris', 'FR'],
  ['Madrid', 'ES'],
  ['Tokyo', 'JP'],
  ['Sydney', 'AU'],
  ['Dublin', 'IE'],
];
const STATUS_WEIGHTS: readonly (readonly [string, number])[] = [
  ['subscribed', 0.62],
  ['unsubscribed', 0.15],
  ['pending', 0.12],
  ['bounced', 0.07],
  ['complained', 0.04],
];

export const SEED_TAGS: readonly (readonly [string, string, number])[] = [
  ['VIP', 'High value contacts', 0.08],
  ['Newsletter Reader', 'Opens the weekly newsletter', 0.35],
  ['Webinar 2026', 'Registered for the 2026 webinar', 0.12],
  ['Trial User', 'Started a product trial', 0.2],
  ['Churn Risk', 'Low engagement in 90 days', 0.1],
  ['Partner Lead', 'Referred by a partner', 0.05],
  ['Event Attendee', 'Attended an in-person event', 0.07],
  ['Beta Tester', 'Joined the beta program', 0.04],
];
export const SEED_LISTS: readonly (readonly [string, string, number])[] = [
  ['Customers', 'Paying customers', 0.25],
  ['Prospects', 'Leads in the pipeline', 0.4],
  ['Partners', 'Agency and reseller partners', 0.06],
  ['Product Updates', 'Monthly product update mailing', 0.3],
  ['Events', 'Event invitations', 0.15],
];

export const SEED_CUSTOM_FIELDS: readonly CustomFieldRec[] = [
  { slug: 'favorite_color', label: 'Favorite Color', type: 'select-one', fieldKey: 'single-select', options: ['Red', 'Green', 'Blue'] },
  { slug: 'membership_number', label: 'Membership Number', type: 'number', fieldKey: 'number' },
  { slug: 'renewal_date', label: 'Renewal Date', type: 'date', fieldKey: 'date' },
  { slug: 'interests', label: 'Interests', type: 'checkbox', fieldKey: 'checkbox', options: ['Analytics', 'Marketing', 'Sales', 'Support'] },
  { slug: 'preferred_channel', label: 'Preferred Channel', type: 'radio', fieldKey: 'radio', options: ['Email', 'Phone', 'SMS'] },
  { slug: 'website', label: 'Website', type: 'url', fieldKey: 'url' },
  { slug: 'work_email', label: 'Work Email', type: 'email', fieldKey: 'email' },
  { slug: 'bio', label: 'Bio', type: 'textarea', fieldKey: 'textarea' },
  { slug: 'job_title', label: 'Job Title', type: 'text', fieldKey: 'text' },
];

const INDUSTRIES = ['Software', 'Logistics', 'Retail', 'Finance', 'Healthcare', 'Education', 'Media'];
const COMPANY_TYPES = ['Prospect', 'Partner', 'Reseller', 'Vendor', 'Other'];
const COMPANY_WORDS = ['Acme', 'Globex', 'Initech', 'Umbrella', 'Stark', 'Wayne', 'Hooli', 'Vandelay', 'Tyrell', 'Soylent', 'Cyberdyne', 'Wonka'];
const COMPANY_SUFFIX = ['Analytics', 'Logistics', 'Labs', 'Systems', 'Partners', 'Group', 'Works'];

export function slugify(title: string): string {
  return (
    title
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'item'
  );
}

export function seedCompanyCount(contacts: number): number {
  return Math.max(3, Math.min(500, Math.floor(contacts / 40)));
}

export function contactHash(seed: number, id: number): string {
  return (
    hash32(seed, id).toString(16).padStart(8, '0') +
    hash32(id, seed ^ 0x5bd1e995)
      .toString(16)
      .padStart(8, '0')
  ).repeat(2);
}

/** The fields that counts and reports need, without building the whole record (fast at 1M). */
export interface ContactCore {
  status: string;
  tags: number[];
  lists: number[];
  companyIds: number[];
  stats: { emails: number; opens: number; clicks: number };
}

export function seededCore(seed: number, id: number, companies: number): ContactCore {
  const r = (k: number): number => unit(seed, id * 64 + k);
  let acc = 0;
  const s = r(4);
  let status = 'subscribed';
  for (const [name, w] of STATUS_WEIGHTS) {
    acc += w;
    if (s < acc) {
      status = name;
      break;
    }
  }
  const tags: number[] = [];
  for (let i = 0; i < SEED_TAGS.length; i++) if (r(10 + i) < (SEED_TAGS[i] as readonly [string, string, number])[2]) tags.push(i + 1);
  const lists: number[] = [];
  for (let i = 0; i < SEED_LISTS.length; i++) if (r(20 + i) < (SEED_LISTS[i] as readonly [string, string, number])[2]) lists.push(i + 1);
  const companyId = r(8) < 0.3 && companies > 0 ? 1 + Math.floor(r(9) * companies) : null;
  const emails = Math.floor(r(30) * 30);
  const opens = Math.floor(r(31) * (emails + 1));
  const clicks = Math.floor(r(32) * (opens + 1));
  return { status, tags, lists, companyIds: companyId === null ? [] : [companyId], stats: { emails, opens, clicks } };
}

/** Lower-cased "first last email" of a seeded contact, for search without building the record. */
export function seededSearchText(seed: number, id: number): string {
  const first = pick(FIRST, unit(seed, id * 64 + 1));
  const last = pick(LAST, unit(seed, id * 64 + 2));
  return `${first} ${last} ${first}.${last}${id}@example.test`.toLowerCase();
}

/** The seeded contact with this id, a pure function of (seed, id, total). */
export function seededContact(seed: number, id: number, total: number, companies: number): ContactRec {
  const r = (k: number): number => unit(seed, id * 64 + k);
  const first = pick(FIRST, r(1));
  const last = pick(LAST, r(2));
  const [city, country] = pick(CITIES, r(3));
  const core = seededCore(seed, id, companies);
  const createdAt = SEED_EPOCH_MS - SEED_SPAN_MS + Math.floor(((id - 1 + r(5) * 0.9) * SEED_SPAN_MS) / Math.max(1, total));
  const createdSec = Math.floor(createdAt / 1000) * 1000;
  const updatedAt = r(6) < 0.3 ? createdSec + Math.floor((r(7) * (SEED_EPOCH_MS - createdSec)) / 1000) * 1000 : createdSec;
  return {
    id,
    userId: r(33) < 0.05 ? 1000 + id : null,
    hash: contactHash(seed, id),
    email: `${first}.${last}${id}@example.test`.toLowerCase(),
    firstName: first,
    lastName: last,
    status: core.status,
    contactType: r(34) < 0.2 ? 'customer' : 'lead',
    phone: r(35) < 0.7 ? `+1-555-${String(id % 10000).padStart(4, '0')}` : null,
    addressLine1: r(36) < 0.4 ? `${1 + Math.floor(r(37) * 200)} Main Street` : null,
    addressLine2: null,
    city,
    state: null,
    postalCode: r(36) < 0.4 ? String(10000 + Math.floor(r(38) * 89999)) : null,
    country,
    dateOfBirth: r(39) < 0.25 ? `19${60 + Math.floor(r(40) * 40)}-0${1 + Math.floor(r(41) * 9)}-1${Math.floor(r(42) * 9)}` : null,
    source: r(43) < 0.5 ? 'web' : null,
    companyId: core.companyIds[0] ?? null,
    companyIds: core.companyIds,
    tags: core.tags,
    lists: core.lists,
    custom: seededCustomValues(r),
    createdAt: createdSec,
    updatedAt,
    stats: core.stats,
  };
}

function seededCustomValues(r: (k: number) => number): Record<string, CustomValue> {
  const out: Record<string, CustomValue> = {};
  if (r(50) < 0.6) out.favorite_color = pick(['Red', 'Green', 'Blue'], r(51));
  if (r(52) < 0.5) out.membership_number = String(1000 + Math.floor(r(53) * 9000));
  if (r(54) < 0.4) out.renewal_date = `2026-${String(1 + Math.floor(r(55) * 12)).padStart(2, '0')}-15`;
  if (r(56) < 0.3) out.interests = ['Analytics', 'Marketing', 'Sales', 'Support'].filter((_, i) => r(57 + i) < 0.5);
  if (r(61) < 0.2) out.preferred_channel = pick(['Email', 'Phone', 'SMS'], r(62));
  return out;
}

export function seededTaxonomy(kind: 'tag' | 'list'): TaxonomyRec[] {
  const src = kind === 'tag' ? SEED_TAGS : SEED_LISTS;
  return src.map(([title, description], i) => ({
    id: i + 1,
    title,
    slug: slugify(title),
    description,
    createdAt: SEED_EPOCH_MS - 800 * 86_400_000,
    updatedAt: SEED_EPOCH_MS - 800 * 86_400_000,
  }));
}

export function seededCompanies(seed: number, count: number): CompanyRec[] {
  const out: CompanyRec[] = [];
  for (let id = 1; id <= count; id++) {
    const r = (k: number): number => unit(seed ^ 0x13579, id * 16 + k);
    // The first two match the captured deployment's companies.
    const name =
      id === 1 ? 'Acme Analytics' : id === 2 ? 'Globex Logistics' : `${COMPANY_WORDS[(id - 1) % COMPANY_WORDS.length]} ${pick(COMPANY_SUFFIX, r(2))}${id > COMPANY_WORDS.length ? ` ${id}` : ''}`;
    const [city, country] = pick(CITIES, r(3));
    out.push({
      id,
      hash: contactHash(seed ^ 0x2468, id),
      name,
      industry: pick(INDUSTRIES, r(4)),
      website: `https://${slugify(name)}.example.test`,
      email: `hello@${slugify(name)}.example.test`,
      phone: `+1-555-${String(2000 + id).padStart(4, '0')}`,
      description: null,
      logo: null,
      linkedinUrl: null,
      addressLine1: null,
      addressLine2: null,
      city,
      state: null,
      country,
      postalCode: null,
      employeesNumber: 5 + Math.floor(r(5) * 2000),
      type: pick(COMPANY_TYPES, r(6)),
      ownerId: null,
      status: 'active',
      createdAt: SEED_EPOCH_MS - 700 * 86_400_000 + id * 60_000,
      updatedAt: SEED_EPOCH_MS - 700 * 86_400_000 + id * 60_000,
    });
  }
  return out;
}
