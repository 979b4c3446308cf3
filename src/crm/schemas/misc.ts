import { z } from 'zod';
import type { TimestampNormalizer } from '../timestamps.js';
import {
  ArrayOrEmptySchema,
  FlagOrNullSchema,
  IntOrNullSchema,
  IntSchema,
  ObjectOrEmptySchema,
  TextOrNullSchema,
  TextSchema,
  timestampSchema,
} from './primitives.js';

export function noteSchema(ts: TimestampNormalizer) {
  const at = timestampSchema(ts);
  return z.object({
    id: IntSchema,
    subscriber_id: IntOrNullSchema,
    parent_id: IntOrNullSchema,
    created_by: IntOrNullSchema,
    status: TextOrNullSchema,
    type: TextOrNullSchema,
    is_private: FlagOrNullSchema,
    title: TextOrNullSchema,
    description: TextOrNullSchema,
    created_at: at,
    updated_at: at,
  });
}

/** Templates are platform posts: `ID`, `post_title`, `post_status`, `post_date`, `post_modified`. */
export function templateSchema(ts: TimestampNormalizer) {
  const at = timestampSchema(ts);
  return z
    .object({
      ID: IntOrNullSchema,
      id: IntOrNullSchema,
      post_title: TextOrNullSchema,
      email_subject: TextOrNullSchema,
      edit_type: TextOrNullSchema,
      design_template: TextOrNullSchema,
      post_status: TextOrNullSchema,
      post_date: at,
      post_modified: at,
    })
    .refine((t) => t.ID !== null || t.id !== null, { message: 'a template needs ID (or id)' })
    .transform((t) => ({
      id: (t.ID ?? t.id) as number,
      title: t.post_title,
      email_subject: t.email_subject,
      edit_type: t.edit_type,
      design_template: t.design_template,
      status: t.post_status,
      created_at: t.post_date,
      updated_at: t.post_modified,
    }));
}

export function sequenceSchema(ts: TimestampNormalizer) {
  const at = timestampSchema(ts);
  return z.object({
    id: IntSchema,
    title: TextSchema,
    slug: TextOrNullSchema,
    status: TextOrNullSchema,
    design_template: TextOrNullSchema,
    created_by: IntOrNullSchema,
    created_at: at,
    updated_at: at,
    stats: z.unknown().optional().transform((v) => (v === undefined || v === null ? null : ObjectOrEmptySchema.parse(v))),
  });
}

export function sequenceSubscriberSchema(ts: TimestampNormalizer) {
  const at = timestampSchema(ts);
  return z.object({
    id: IntOrNullSchema,
    subscriber_id: IntOrNullSchema,
    status: TextOrNullSchema,
    created_at: at,
    updated_at: at,
  });
}

export const CustomFieldSchema = z
  .object({
    slug: TextSchema,
    label: TextOrNullSchema,
    type: TextSchema,
    field_key: TextOrNullSchema,
    options: ArrayOrEmptySchema.pipe(z.array(TextSchema)),
  })
  .transform((f) => ({ ...f, label: f.label ?? f.slug }));

/**
 * A webhook in either shape: the spec's outbound webhook (name, url, events, status, secret) or the
 * real deployment's inbound one (object_type, key, value {name, status, url, lists, tags}).
 */
export function webhookSchema(ts: TimestampNormalizer) {
  const at = timestampSchema(ts);
  return z
    .object({
      id: IntSchema,
      name: TextOrNullSchema,
      url: TextOrNullSchema,
      events: ArrayOrEmptySchema.pipe(z.array(TextSchema)),
      status: TextOrNullSchema,
      secret: TextOrNullSchema,
      value: z.unknown().optional(),
      created_at: at,
      updated_at: at,
    })
    .transform(({ value, ...w }) => {
      const v = value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
      const text = (x: unknown) => (typeof x === 'string' ? x : null);
      return { ...w, name: w.name ?? text(v.name), url: w.url ?? text(v.url), status: w.status ?? text(v.status) };
    });
}

export function webhookDeliverySchema(ts: TimestampNormalizer) {
  return z.object({
    id: IntSchema,
    event: TextOrNullSchema,
    status: TextOrNullSchema,
    response_code: IntOrNullSchema,
    response_time: IntOrNullSchema,
    attempted_at: timestampSchema(ts),
  });
}
