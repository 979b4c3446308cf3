import type { TimestampNormalizer } from '../timestamps.js';
import { arrayOf, int, intOrNull, numberOrNull, obj, record, text, textOrNull, timestamp } from './primitives.js';

export function funnelSchema(ts: TimestampNormalizer) {
  const at = timestamp(ts);
  return record(
    {
      id: int,
      title: text,
      trigger_name: textOrNull,
      status: textOrNull,
      subscribers_count: intOrNull,
      created_at: at,
      updated_at: at,
    },
    (f) => ({ ...f, status: f.status ?? '' }),
  );
}

export function funnelSubscriberSchema(ts: TimestampNormalizer) {
  const at = timestamp(ts);
  const metric = obj({
    id: int,
    funnel_id: int,
    sequence_id: int,
    subscriber_id: int,
    benchmark_value: numberOrNull,
    benchmark_currency: textOrNull,
    status: textOrNull,
    notes: textOrNull,
    created_at: at,
    updated_at: at,
  });
  return record(
    {
      id: int,
      funnel_id: int,
      subscriber_id: int,
      status: textOrNull,
      last_sequence_id: intOrNull,
      next_sequence_id: intOrNull,
      next_execution_time: at,
      created_at: at,
      updated_at: at,
      metrics: arrayOf(metric),
    },
    (s) => ({ ...s, status: s.status ?? '' }),
  );
}
