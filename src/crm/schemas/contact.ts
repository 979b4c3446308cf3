import type { TimestampNormalizer } from '../timestamps.js';
import { arrayOf, int, intOrNull, type Issue, numberOrNull, objectOrEmpty, type Reader, readerSchema, text, textOrNull } from './primitives.js';

export interface TaxonomyRefOut {
  id: number;
  title: string;
  slug: string;
}

/** A tag or list reference on a contact; a bare id where an object was meant keeps the membership. */
export const taxonomyRef: Reader<TaxonomyRefOut> = (v, issue) => {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    return { id: int(o.id, (m) => issue(m, ['id'])), title: textOrNull(o.title, issue) ?? '', slug: textOrNull(o.slug, issue) ?? '' };
  }
  return { id: int(v, issue), title: '', slug: '' };
};

/**
 * A contact as listed or shown; `custom_values` also comes as `custom_fields` in real listings.
 * Written out field by field (one object literal, no rest/spread) because contacts are the volume
 * path: a full sync reads every contact, and this runs once per row.
 */
export function contactSchema(ts: TimestampNormalizer) {
  const refs = arrayOf(taxonomyRef);
  return readerSchema((v, issue) => {
    if (!v || typeof v !== 'object' || Array.isArray(v)) {
      issue(`expected a contact object, got ${Array.isArray(v) ? 'an array' : typeof v}`);
      return null as never;
    }
    const o = v as Record<string, unknown>;
    const at = (k: string): Issue => (m, p = []) => issue(m, [k, ...p]);
    const dob = textOrNull(o.date_of_birth, at('date_of_birth'));
    return {
      id: int(o.id, at('id')),
      user_id: intOrNull(o.user_id, at('user_id')),
      hash: textOrNull(o.hash, at('hash')),
      email: text(o.email, at('email')),
      first_name: textOrNull(o.first_name, at('first_name')),
      last_name: textOrNull(o.last_name, at('last_name')),
      full_name: textOrNull(o.full_name, at('full_name')),
      status: textOrNull(o.status, at('status')) ?? '',
      contact_type: textOrNull(o.contact_type, at('contact_type')),
      phone: textOrNull(o.phone, at('phone')),
      address_line_1: textOrNull(o.address_line_1, at('address_line_1')),
      address_line_2: textOrNull(o.address_line_2, at('address_line_2')),
      city: textOrNull(o.city, at('city')),
      state: textOrNull(o.state, at('state')),
      postal_code: textOrNull(o.postal_code, at('postal_code')),
      country: textOrNull(o.country, at('country')),
      date_of_birth: dob && !dob.startsWith('0000') ? dob.slice(0, 10) : null,
      photo: textOrNull(o.photo, at('photo')),
      company_id: intOrNull(o.company_id, at('company_id')),
      total_points: numberOrNull(o.total_points, at('total_points')),
      life_time_value: numberOrNull(o.life_time_value, at('life_time_value')),
      tags: refs(o.tags, at('tags')),
      lists: refs(o.lists, at('lists')),
      custom_values: pickCustomValues(o.custom_values, o.custom_fields),
      created_at: ts(o.created_at),
      updated_at: ts(o.updated_at),
    };
  });
}

const ignore = () => undefined;

function pickCustomValues(values: unknown, fields: unknown): Record<string, unknown> {
  if (values !== undefined && values !== null && typeof values === 'object') return objectOrEmpty(values, ignore);
  // Real listings with custom_fields=true put the values under `custom_fields` (an object keyed by slug).
  if (fields && typeof fields === 'object' && !Array.isArray(fields)) return fields as Record<string, unknown>;
  return {};
}
