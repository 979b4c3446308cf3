import type { TimestampNormalizer } from '../timestamps.js';
import { int, intOrNull, record, text, textOrNull, timestamp } from './primitives.js';

export function companySchema(ts: TimestampNormalizer) {
  const at = timestamp(ts);
  return record({
    id: int,
    name: text,
    industry: textOrNull,
    website: textOrNull,
    email: textOrNull,
    phone: textOrNull,
    type: textOrNull,
    owner_id: intOrNull,
    employees_number: intOrNull,
    status: textOrNull,
    city: textOrNull,
    country: textOrNull,
    created_at: at,
    updated_at: at,
  });
}
