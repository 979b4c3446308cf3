import { z } from 'zod';
import type { TimestampNormalizer } from '../timestamps.js';
import { ArrayOrEmptySchema, IntOrNullSchema, IntSchema, NumberOrNullSchema, TextOrNullSchema, TextSchema, timestampSchema } from './primitives.js';

export function funnelSchema(ts: TimestampNormalizer) {
  const at = timestampSchema(ts);
  return z.object({
    id: IntSchema,
    title: TextSchema,
    trigger_name: TextOrNullSchema,
    status: TextOrNullSchema.transform((s) => s ?? ''),
    subscribers_count: IntOrNullSchema,
    created_at: at,
    updated_at: at,
  });
}

export function funnelMetricSchema(ts: TimestampNormalizer) {
  const at = timestampSchema(ts);
  return z.object({
    id: IntSchema,
    funnel_id: IntSchema,
    sequence_id: IntSchema,
    subscriber_id: IntSchema,
    benchmark_value: NumberOrNullSchema,
    benchmark_currency: TextOrNullSchema,
    status: TextOrNullSchema,
    notes: TextOrNullSchema,
    created_at: at,
    updated_at: at,
  });
}

export function funnelSubscriberSchema(ts: TimestampNormalizer) {
  const at = timestampSchema(ts);
  return z.object({
    id: IntSchema,
    funnel_id: IntSchema,
    subscriber_id: IntSchema,
    status: TextOrNullSchema.transform((s) => s ?? ''),
    last_sequence_id: IntOrNullSchema,
    next_sequence_id: IntOrNullSchema,
    next_execution_time: at,
    created_at: at,
    updated_at: at,
    metrics: ArrayOrEmptySchema.pipe(z.array(funnelMetricSchema(ts))),
  });
}
