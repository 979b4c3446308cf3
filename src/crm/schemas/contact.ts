import { z } from 'zod';
import type { TimestampNormalizer } from '../timestamps.js';
import {
  ArrayOrEmptySchema,
  IntOrNullSchema,
  IntSchema,
  NumberOrNullSchema,
  ObjectOrEmptySchema,
  TextOrNullSchema,
  TextSchema,
  timestampSchema,
} from './primitives.js';

export const TaxonomyRefSchema = z.union([
  z.object({ id: IntSchema, title: TextOrNullSchema, slug: TextOrNullSchema }).transform((t) => ({
    id: t.id,
    title: t.title ?? '',
    slug: t.slug ?? '',
  })),
  // A bare id where an object was meant: keep the membership, title/slug unknown.
  IntSchema.transform((id) => ({ id, title: '', slug: '' })),
]);

const taxonomyRefs = ArrayOrEmptySchema.pipe(z.array(TaxonomyRefSchema));

/** A contact as listed or shown; `custom_values` also comes as `custom_fields` in real listings. */
export function contactSchema(ts: TimestampNormalizer) {
  const at = timestampSchema(ts);
  return z
    .object({
      id: IntSchema,
      user_id: IntOrNullSchema,
      hash: TextOrNullSchema,
      email: TextSchema,
      first_name: TextOrNullSchema,
      last_name: TextOrNullSchema,
      full_name: TextOrNullSchema,
      status: TextOrNullSchema,
      contact_type: TextOrNullSchema,
      phone: TextOrNullSchema,
      address_line_1: TextOrNullSchema,
      address_line_2: TextOrNullSchema,
      city: TextOrNullSchema,
      state: TextOrNullSchema,
      postal_code: TextOrNullSchema,
      country: TextOrNullSchema,
      date_of_birth: TextOrNullSchema,
      photo: TextOrNullSchema,
      company_id: IntOrNullSchema,
      total_points: NumberOrNullSchema,
      life_time_value: NumberOrNullSchema,
      tags: taxonomyRefs,
      lists: taxonomyRefs,
      custom_values: z.unknown().optional(),
      custom_fields: z.unknown().optional(),
      created_at: at,
      updated_at: at,
    })
    .transform(({ custom_fields, custom_values, date_of_birth, ...c }) => ({
      ...c,
      status: c.status ?? '',
      date_of_birth: date_of_birth && !date_of_birth.startsWith('0000') ? date_of_birth.slice(0, 10) : null,
      custom_values: pickCustomValues(custom_values, custom_fields),
    }));
}

function pickCustomValues(values: unknown, fields: unknown): Record<string, unknown> {
  const v = ObjectOrEmptySchema.safeParse(values);
  if (values !== undefined && values !== null && v.success) return v.data;
  // Real listings with custom_fields=true put the values under `custom_fields` (an object keyed by slug).
  if (fields && typeof fields === 'object' && !Array.isArray(fields)) return fields as Record<string, unknown>;
  return {};
}
