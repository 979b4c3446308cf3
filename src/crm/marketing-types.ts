/**
 * Normalized types of the marketing side of the CRM: campaigns, funnels, templates, sequences and
 * webhooks. Re-exported from types.ts; the conventions there apply.
 */

import type { Secret } from '../secret.js';
import type { JsonObject } from './types.js';

export interface CampaignStats {
  [key: string]: number;
}

export interface Campaign {
  id: number;
  title: string;
  slug: string | null;
  status: string;
  email_subject: string | null;
  email_pre_header: string | null;
  recipients_count: number | null;
  scheduled_at: string | null;
  design_template: string | null;
  created_at: string | null;
  updated_at: string | null;
  /** With with[]=stats: numeric counters as sent (sent, opens, clicks, ...), else null. */
  stats: CampaignStats | null;
  raw: JsonObject;
}

export interface Funnel {
  id: number;
  title: string;
  trigger_name: string | null;
  status: string;
  subscribers_count: number | null;
  created_at: string | null;
  updated_at: string | null;
  raw: JsonObject;
}

export interface FunnelMetric {
  id: number;
  funnel_id: number;
  sequence_id: number;
  subscriber_id: number;
  benchmark_value: number | null;
  benchmark_currency: string | null;
  status: string | null;
  notes: string | null;
  created_at: string | null;
  updated_at: string | null;
}

export interface FunnelSubscriber {
  id: number;
  funnel_id: number;
  subscriber_id: number;
  status: string;
  last_sequence_id: number | null;
  next_sequence_id: number | null;
  next_execution_time: string | null;
  created_at: string | null;
  updated_at: string | null;
  metrics: FunnelMetric[];
  raw: JsonObject;
}

export interface Template {
  id: number;
  title: string | null;
  email_subject: string | null;
  edit_type: string | null;
  design_template: string | null;
  status: string | null;
  created_at: string | null;
  updated_at: string | null;
  raw: JsonObject;
}

export interface Sequence {
  id: number;
  title: string;
  slug: string | null;
  status: string | null;
  design_template: string | null;
  created_by: number | null;
  created_at: string | null;
  updated_at: string | null;
  stats: JsonObject | null;
  raw: JsonObject;
}

/** A row of GET /sequences/{id}/subscribers; its inner shape is not specified, so raw is the truth. */
export interface SequenceSubscriber {
  id: number | null;
  subscriber_id: number | null;
  status: string | null;
  created_at: string | null;
  updated_at: string | null;
  raw: JsonObject;
}

export interface CampaignStatusReport {
  current_timestamp: string | null;
  stat: Array<{ status: string; total: number }>;
  campaign: Campaign;
  sent_count: number | null;
  analytics: JsonObject;
  subject_analytics: JsonObject;
  raw: JsonObject;
}

export interface FunnelSubscriberDetail {
  subscriber: FunnelSubscriber;
  /** Funnel steps, as sent. */
  sequences: JsonObject[];
}

/**
 * A webhook registration. Outbound webhooks (spec) carry name, url, events, status, secret; the real
 * deployment's inbound webhooks carry object_type/key/value instead: `name`, `url` and `status` are
 * taken from `value` then, and `events` when the record has none of its own.
 */
export interface Webhook {
  id: number;
  name: string | null;
  url: string | null;
  events: string[];
  status: string | null;
  /** Never logged; `raw.secret` is replaced by "[redacted]". */
  secret: Secret | null;
  created_at: string | null;
  updated_at: string | null;
  raw: JsonObject;
}

export interface WebhookWrite {
  name: string;
  url: string;
  events: string[];
  status?: 'active' | 'inactive';
  secret?: string | Secret;
}

export interface WebhookDelivery {
  id: number;
  event: string | null;
  status: string | null;
  response_code: number | null;
  response_time: number | null;
  attempted_at: string | null;
  raw: JsonObject;
}
