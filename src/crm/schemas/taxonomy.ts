import { z } from 'zod';
import type { TimestampNormalizer } from '../timestamps.js';
import { FlagOrNullSchema, IntOrNullSchema, IntSchema, TextOrNullSchema, TextSchema, timestampSchema } from './primitives.js';

/** A tag or a list (lists add `is_public`). Counts appear only when the listing includes them. */
function taxonomyShape(ts: TimestampNormalizer) {
  const at = timestampSchema(ts);
  return {
    id: IntSchema,
    title: TextSchema,
    slug: TextOrNullSchema,
    description: TextOrNullSchema,
    totalCount: IntOrNullSchema,
    subscribersCount: IntOrNullSchema,
    created_at: at,
    updated_at: at,
  };
}

export function tagSchema(ts: TimestampNormalizer) {
  return z.object(taxonomyShape(ts)).transform(({ totalCount, subscribersCount, slug, ...t }) => ({
    ...t,
    slug: slug ?? '',
    total_count: totalCount,
    subscribers_count: subscribersCount,
  }));
}

export function listSchema(ts: TimestampNormalizer) {
  return z
    .object({ ...taxonomyShape(ts), is_public: FlagOrNullSchema })
    .transform(({ totalCount, subscribersCount, slug, ...t }) => ({
      ...t,
      slug: slug ?? '',
      total_count: totalCount,
      subscribers_count: subscribersCount,
    }));
}
