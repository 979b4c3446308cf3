import type { TimestampNormalizer } from '../crm/timestamps.js';
import { obj, toId, toNumber, toText, type ParsedEvent } from './event-payload.js';

export interface WebhookEventRow {
  delivery_id: string;
  event: string;
  webhook_id: number;
  received_at: string;
  event_at: string;
  known_event: boolean;
  spool_seq: number;
  payload: string | null;
  status: 'applied' | 'unknown_event' | 'failed';
  error: string | null;
  applied_at: string;
}

export interface EmailEventRow {
  delivery_id: string;
  event: string;
  email_id: number | null;
  contact_id: number | null;
  campaign_id: number | null;
  subject: string | null;
  url: string | null;
  occurred_at: string;
  opened_at: string | null;
  data: string;
}

export interface CommerceEventRow {
  delivery_id: string;
  event: string;
  contact_id: number | null;
  order_id: string | null;
  amount: number | null;
  currency: string | null;
  occurred_at: string;
  data: string;
}

export function webhookEventRow(e: ParsedEvent, error: string | null, appliedAt: Date): WebhookEventRow {
  const r = e.record;
  const problem = error ?? e.problem;
  return {
    delivery_id: r.deliveryId,
    event: r.event,
    webhook_id: r.webhookId,
    received_at: new Date(r.receivedAt).toISOString(),
    event_at: e.eventAt.toISOString(),
    known_event: r.known,
    spool_seq: r.seq,
    payload: e.text,
    status: problem ? 'failed' : r.known ? 'applied' : 'unknown_event',
    error: problem,
    applied_at: appliedAt.toISOString(),
  };
}

/** `siteTime`: reads the CRM's zone-less timestamps (`opened_at`) in the site's zone, as everywhere else. */
export function emailEventRow(e: ParsedEvent, siteTime: TimestampNormalizer): EmailEventRow {
  const d = e.envelope!.data;
  const email = obj(d.email) ?? {};
  return {
    delivery_id: e.record.deliveryId,
    event: e.record.event,
    email_id: toId(email.id),
    contact_id: e.contactId,
    campaign_id: e.campaignId,
    subject: toText(email.subject, 1000),
    url: toText(email.url ?? d.url, 2000),
    occurred_at: e.eventAt.toISOString(),
    opened_at: siteTime(email.opened_at),
    data: JSON.stringify(d),
  };
}

export function commerceEventRow(e: ParsedEvent): CommerceEventRow {
  const d = e.envelope!.data;
  const order = obj(d.order) ?? obj(d.transaction) ?? {};
  return {
    delivery_id: e.record.deliveryId,
    event: e.record.event,
    contact_id: e.contactId,
    order_id: toText(order.id ?? d.order_id, 200),
    amount: toNumber(order.total ?? order.amount ?? d.amount ?? d.revenue ?? d.total),
    currency: toText(order.currency ?? d.currency, 10),
    occurred_at: e.eventAt.toISOString(),
    data: JSON.stringify(d),
  };
}
