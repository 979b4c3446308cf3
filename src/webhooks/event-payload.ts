import { decodeDeliveryBody } from './decode-delivery-body.js';
import { eventGroup, type EventGroup } from './event-names.js';
import type { SpoolRecord } from './spool-frame.js';
import { WebhookEnvelope } from './webhook-envelope.js';

/** A spooled delivery read back for the applier, with the ids it refers to pulled out. */
export interface ParsedEvent {
  record: SpoolRecord;
  envelope: WebhookEnvelope | null;
  /** The body as text (a byte-order mark removed), when it is a readable envelope. */
  text: string | null;
  group: EventGroup;
  /** When the event happened (payload `timestamp`), else when it was received. */
  eventAt: Date;
  contactId: number | null;
  campaignId: number | null;
  funnelId: number | null;
  /** Set when the body cannot be read as an envelope (it was checked on receipt, so: corruption). */
  problem: string | null;
}

type Obj = Record<string, unknown>;

/** Ids arrive as integers or numeric strings (spec, Response conventions 4). */
export function toId(v: unknown): number | null {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) return v;
  if (typeof v === 'string' && /^\d{1,15}$/.test(v) && Number(v) > 0) return Number(v);
  return null;
}

export function toNumber(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
}

export function toText(v: unknown, max = 2000): string | null {
  if (typeof v === 'string') return v.slice(0, max);
  if (typeof v === 'number') return String(v);
  return null;
}

export function obj(v: unknown): Obj | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;
}

const first = (...vals: unknown[]): number | null => {
  for (const v of vals) {
    const id = toId(v);
    if (id !== null) return id;
  }
  return null;
};

export function parseSpoolRecord(record: SpoolRecord): ParsedEvent {
  const base = { record, group: eventGroup(record.event), eventAt: new Date(record.receivedAt), contactId: null, campaignId: null, funnelId: null };
  // The receiver's own reading: a body it would refuse now (an older receiver stored it) is a
  // problem of that delivery, never an error of the batch.
  const decoded = decodeDeliveryBody(record.body);
  if (!decoded.ok) return { ...base, envelope: null, text: null, problem: `${decoded.reason}: ${decoded.message}` };
  let json: unknown;
  try {
    json = JSON.parse(decoded.text);
  } catch {
    return { ...base, envelope: null, text: null, problem: 'body is not JSON' };
  }
  const parsed = WebhookEnvelope.safeParse(json);
  if (!parsed.success) return { ...base, envelope: null, text: null, problem: 'body is not a webhook envelope' };
  const env = parsed.data;
  const d = env.data;
  const contact = obj(d.contact);
  const subscriber = obj(d.subscriber);
  const email = obj(d.email);
  const order = obj(d.order);
  const campaign = obj(d.campaign);
  const funnel = obj(d.funnel);
  return {
    ...base,
    envelope: env,
    text: decoded.text,
    eventAt: new Date(parseEventTime(env.timestamp)),
    contactId: first(contact?.id, d.contact_id, d.subscriber_id, subscriber?.id, email?.contact_id, email?.subscriber_id, order?.contact_id, order?.subscriber_id),
    campaignId: first(campaign?.id, d.campaign_id, email?.campaign_id),
    funnelId: first(funnel?.id, d.funnel_id),
    problem: null,
  };
}

/** ISO 8601 as the spec says; a zone-less `YYYY-MM-DD HH:MM:SS` is read as UTC, not machine time. */
export function parseEventTime(s: string): number {
  const zoneless = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?$/.test(s);
  return Date.parse(zoneless ? `${s.replace(' ', 'T')}Z` : s);
}
