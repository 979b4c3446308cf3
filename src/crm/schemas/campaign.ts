import type { TimestampNormalizer } from '../timestamps.js';
import { arrayOf, int, intOrNull, numberOrNull, obj, objectOrEmpty, type Reader, record, text, textOrNull, timestamp } from './primitives.js';

const ignore = () => undefined;

/** Numeric counters of `with[]=stats`, numbers or numeric strings; anything else is left in raw. */
const stats: Reader<Record<string, number> | null> = (v) => {
  if (Array.isArray(v)) return v.length === 0 ? {} : null;
  if (!v || typeof v !== 'object') return null;
  const out: Record<string, number> = {};
  for (const [k, x] of Object.entries(v)) {
    let bad = false;
    const n = numberOrNull(x, () => (bad = true));
    if (!bad && n !== null) out[k] = n;
  }
  return out;
};

const orEmpty = (s: string | null) => s ?? '';

export function campaignSchema(ts: TimestampNormalizer) {
  const at = timestamp(ts);
  return record(
    {
      id: int,
      title: text,
      slug: textOrNull,
      status: textOrNull,
      email_subject: textOrNull,
      email_pre_header: textOrNull,
      recipients_count: intOrNull,
      scheduled_at: at,
      design_template: textOrNull,
      created_at: at,
      updated_at: at,
      stats,
    },
    (c) => ({ ...c, status: orEmpty(c.status) }),
  );
}

export function campaignStatusSchema(ts: TimestampNormalizer) {
  return record({
    current_timestamp: timestamp(ts),
    stat: arrayOf(obj({ status: text, total: int })),
    campaign: (v: unknown, issue) => objectOrEmpty(v ?? (issue('expected a campaign object'), {}), issue),
    sent_count: intOrNull,
    analytics: (v: unknown) => objectOrEmpty(v, ignore),
    subject_analytics: (v: unknown) => objectOrEmpty(v, ignore),
  });
}
