import type { TimestampNormalizer } from '../timestamps.js';
import { arrayOf, int, intOrNull, type Issue, numberOrNull, objectOrEmpty, type Reader, readAt, readerSchema, text, textOrNull } from './primitives.js';

export interface TaxonomyRefOut {
  id: number;
  title: string;
  slug: string;
}

/** A tag or list reference on a contact; a bare id where an object was meant keeps the membership. */
export const taxonomyRef: Reader<TaxonomyRefOut> = (v, issue) => {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    const id = typeof o.id === 'number' && Number.isInteger(o.id) ? o.id : int(o.id, (m) => issue(m, ['id']));
    const title = typeof o.title === 'string' ? o.title : (textOrNull(o.title, issue) ?? '');
    const slug = typeof o.slug === 'string' ? o.slug : (textOrNull(o.slug, issue) ?? '');
    return { id, title, slug };
  }
  return { id: int(v, issue), title: '', slug: '' };
};

/**
 * A contact as listed or shown; `custom_values` also comes as `custom_fields` in real listings.
 * Written out field by field (one object literal, no rest/spread) because contacts are the volume
 * path: a full sync reads every contact, and this runs once per row.
 */
export function contactSchema(ts: TimestampNormalizer) {
  return readerSchema((v, issue) => {
    if (!v || typeof v !== 'object' || Array.isArray(v)) {
      issue(`expected a contact object, got ${Array.isArray(v) ? 'an array' : typeof v}`);
      return null as never;
    }
    const o = v as Record<string, unknown>;
    const dob = s(o.date_of_birth, 'date_of_birth', issue);
    return {
      id: typeof o.id === 'number' && Number.isInteger(o.id) ? o.id : readAt(int, o.id, issue, 'id'),
      user_id: n(o.user_id, 'user_id', issue),
      hash: s(o.hash, 'hash', issue),
      email: typeof o.email === 'string' ? o.email : readAt(text, o.email, issue, 'email'),
      first_name: s(o.first_name, 'first_name', issue),
      last_name: s(o.last_name, 'last_name', issue),
      full_name: s(o.full_name, 'full_name', issue),
      status: s(o.status, 'status', issue) ?? '',
      contact_type: s(o.contact_type, 'contact_type', issue),
      phone: s(o.phone, 'phone', issue),
      address_line_1: s(o.address_line_1, 'address_line_1', issue),
      address_line_2: s(o.address_line_2, 'address_line_2', issue),
      city: s(o.city, 'city', issue),
      state: s(o.state, 'state', issue),
      postal_code: s(o.postal_code, 'postal_code', issue),
      country: s(o.country, 'country', issue),
      date_of_birth: dob && !dob.startsWith('0000') ? dob.slice(0, 10) : null,
      photo: s(o.photo, 'photo', issue),
      company_id: n(o.company_id, 'company_id', issue),
      total_points: d(o.total_points, 'total_points', issue),
      life_time_value: d(o.life_time_value, 'life_time_value', issue),
      tags: refList(o.tags, 'tags', issue),
      lists: refList(o.lists, 'lists', issue),
      custom_values: pickCustomValues(o.custom_values, o.custom_fields),
      created_at: ts(o.created_at),
      updated_at: ts(o.updated_at),
      raw: o, // in the literal, so every contact has one shape from the start
    };
  });
}

// Fast paths for the common type of each field; the general reader (and its issue) only otherwise.
// Direct property reads (o.email) rather than o[key] keep the loads monomorphic.
function s(v: unknown, k: string, issue: Issue): string | null {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return null;
  return readAt(textOrNull, v, issue, k);
}
function n(v: unknown, k: string, issue: Issue): number | null {
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (v === null || v === undefined) return null;
  return readAt(intOrNull, v, issue, k);
}
function d(v: unknown, k: string, issue: Issue): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (v === null || v === undefined) return null;
  return readAt(numberOrNull, v, issue, k);
}

const refs = arrayOf(taxonomyRef);

/** Tags or lists: objects with a numeric id and text title and slug inline, anything else through `taxonomyRef`. */
function refList(v: unknown, k: string, issue: Issue): TaxonomyRefOut[] {
  if (!Array.isArray(v)) return readAt(refs, v, issue, k);
  const out = new Array<TaxonomyRefOut>(v.length);
  for (let i = 0; i < v.length; i++) {
    const x = v[i] as { id?: unknown; title?: unknown; slug?: unknown } | null;
    if (x === null || typeof x !== 'object') return readAt(refs, v, issue, k);
    const { id, title, slug } = x;
    if (typeof id !== 'number' || !Number.isInteger(id) || typeof title !== 'string' || typeof slug !== 'string') return readAt(refs, v, issue, k);
    out[i] = { id, title, slug };
  }
  return out;
}

const ignore = () => undefined;

function pickCustomValues(values: unknown, fields: unknown): Record<string, unknown> {
  if (values !== undefined && values !== null && typeof values === 'object') return objectOrEmpty(values, ignore);
  // Real listings with custom_fields=true put the values under `custom_fields` (an object keyed by slug).
  if (fields && typeof fields === 'object' && !Array.isArray(fields)) return fields as Record<string, unknown>;
  return {};
}
