import type { TimestampNormalizer } from '../timestamps.js';
import { flagOrNull, int, intOrNull, record, text, textOrNull, timestamp } from './primitives.js';

/** A tag or a list (lists add `is_public`). Counts appear only when the listing includes them. */
function taxonomyFields(ts: TimestampNormalizer) {
  const at = timestamp(ts);
  return {
    id: int,
    title: text,
    slug: textOrNull,
    description: textOrNull,
    totalCount: intOrNull,
    subscribersCount: intOrNull,
    created_at: at,
    updated_at: at,
  };
}

export function tagSchema(ts: TimestampNormalizer) {
  return record(taxonomyFields(ts), ({ totalCount, subscribersCount, slug, ...t }) => ({
    ...t,
    slug: slug ?? '',
    total_count: totalCount,
    subscribers_count: subscribersCount,
  }));
}

export function listSchema(ts: TimestampNormalizer) {
  return record({ ...taxonomyFields(ts), is_public: flagOrNull }, ({ totalCount, subscribersCount, slug, ...t }) => ({
    ...t,
    slug: slug ?? '',
    total_count: totalCount,
    subscribers_count: subscribersCount,
  }));
}
