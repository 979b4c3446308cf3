import { z } from 'zod';
import type { TimestampNormalizer } from '../timestamps.js';
import { IntOrNullSchema, IntSchema, TextOrNullSchema, TextSchema, timestampSchema } from './primitives.js';

export function companySchema(ts: TimestampNormalizer) {
  const at = timestampSchema(ts);
  return z.object({
    id: IntSchema,
    name: TextSchema,
    industry: TextOrNullSchema,
    website: TextOrNullSchema,
    email: TextOrNullSchema,
    phone: TextOrNullSchema,
    type: TextOrNullSchema,
    owner_id: IntOrNullSchema,
    employees_number: IntOrNullSchema,
    status: TextOrNullSchema,
    city: TextOrNullSchema,
    country: TextOrNullSchema,
    created_at: at,
    updated_at: at,
  });
}
