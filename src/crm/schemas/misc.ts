import type { TimestampNormalizer } from '../timestamps.js';
import { arrayOf, flagOrNull, int, intOrNull, objectOrNull, record, text, textOrNull, timestamp } from './primitives.js';

export function noteSchema(ts: TimestampNormalizer) {
  const at = timestamp(ts);
  return record({
    id: int,
    subscriber_id: intOrNull,
    parent_id: intOrNull,
    created_by: intOrNull,
    status: textOrNull,
    type: textOrNull,
    is_private: flagOrNull,
    title: textOrNull,
    description: textOrNull,
    created_at: at,
    updated_at: at,
  });
}

/** Templates are platform posts: `ID`, `post_title`, `post_status`, `post_date`, `post_modified`. */
export function templateSchema(ts: TimestampNormalizer) {
  const at = timestamp(ts);
  return record(
    {
      ID: intOrNull,
      id: intOrNull,
      post_title: textOrNull,
      email_subject: textOrNull,
      edit_type: textOrNull,
      design_template: textOrNull,
      post_status: textOrNull,
      post_date: at,
      post_modified: at,
    },
    (t, issue) => ({
      id: t.ID ?? t.id ?? (issue('a template needs ID (or id)', ['ID']), 0),
      title: t.post_title,
      email_subject: t.email_subject,
      edit_type: t.edit_type,
      design_template: t.design_template,
      status: t.post_status,
      created_at: t.post_date,
      updated_at: t.post_modified,
    }),
  );
}

export function sequenceSchema(ts: TimestampNormalizer) {
  const at = timestamp(ts);
  return record({
    id: int,
    title: text,
    slug: textOrNull,
    status: textOrNull,
    design_template: textOrNull,
    created_by: intOrNull,
    created_at: at,
    updated_at: at,
    stats: objectOrNull,
  });
}

export function sequenceSubscriberSchema(ts: TimestampNormalizer) {
  const at = timestamp(ts);
  return record({
    id: intOrNull,
    subscriber_id: intOrNull,
    status: textOrNull,
    created_at: at,
    updated_at: at,
  });
}

export const CustomFieldSchema = record(
  {
    slug: text,
    label: textOrNull,
    type: text,
    field_key: textOrNull,
    options: arrayOf(text),
  },
  (f) => ({ ...f, label: f.label ?? f.slug }),
);

/**
 * A webhook in either shape: the spec's outbound webhook (name, url, events, status, secret) or the
 * real deployment's inbound one (object_type, key, value {name, status, url, lists, tags}).
 */
export function webhookSchema(ts: TimestampNormalizer) {
  const at = timestamp(ts);
  return record(
    {
      id: int,
      name: textOrNull,
      url: textOrNull,
      events: arrayOf(text),
      status: textOrNull,
      secret: textOrNull,
      value: (v: unknown) => v,
      created_at: at,
      updated_at: at,
    },
    ({ value, ...w }) => {
      const v = value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
      const str = (x: unknown) => (typeof x === 'string' ? x : null);
      // The real deployment stores the events sent (and echoes them) in `value` too (site-ny/GET_webhooks.json).
      const events = w.events.length > 0 || !Array.isArray(v.events) ? w.events : v.events.filter((e): e is string => typeof e === 'string');
      return { ...w, name: w.name ?? str(v.name), url: w.url ?? str(v.url), events, status: w.status ?? str(v.status) };
    },
  );
}

export function webhookDeliverySchema(ts: TimestampNormalizer) {
  return record({
    id: int,
    event: textOrNull,
    status: textOrNull,
    response_code: intOrNull,
    response_time: intOrNull,
    attempted_at: timestamp(ts),
  });
}
