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

/** Numeric counters of `with[]=stats`, numbers or numeric strings; anything else is left in raw. */
const StatsSchema = z.unknown().optional().transform((v): Record<string, number> | null => {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return Array.isArray(v) && v.length === 0 ? {} : null;
  const out: Record<string, number> = {};
  for (const [k, x] of Object.entries(v)) {
    const n = NumberOrNullSchema.safeParse(x);
    if (n.success && n.data !== null) out[k] = n.data;
  }
  return out;
});

export function campaignSchema(ts: TimestampNormalizer) {
  const at = timestampSchema(ts);
  return z.object({
    id: IntSchema,
    title: TextSchema,
    slug: TextOrNullSchema,
    status: TextOrNullSchema.transform((s) => s ?? ''),
    email_subject: TextOrNullSchema,
    email_pre_header: TextOrNullSchema,
    recipients_count: IntOrNullSchema,
    scheduled_at: at,
    design_template: TextOrNullSchema,
    created_at: at,
    updated_at: at,
    stats: StatsSchema,
  });
}

export function campaignStatusSchema(ts: TimestampNormalizer) {
  return z.object({
    current_timestamp: timestampSchema(ts),
    stat: ArrayOrEmptySchema.pipe(z.array(z.object({ status: TextSchema, total: IntSchema }))),
    campaign: z.record(z.string(), z.unknown()),
    sent_count: IntOrNullSchema,
    analytics: ObjectOrEmptySchema,
    subject_analytics: ObjectOrEmptySchema,
  });
}
