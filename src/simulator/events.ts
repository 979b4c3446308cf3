/** The 30 event names of the interface (spec, Events). */
export const EVENT_NAMES = [
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'contact.status_changed',
  'contact.tag_added',
  'contact.tag_removed',
  'contact.list_added',
  'contact.list_removed',
  'email.sent',
  'email.opened',
  'email.clicked',
  'email.bounced',
  'email.spam_complaint',
  'email.unsubscribed',
  'campaign.created',
  'campaign.sent',
  'campaign.paused',
  'campaign.resumed',
  'funnel.subscriber_added',
  'funnel.subscriber_completed',
  'funnel.subscriber_exited',
  'funnel.sequence_completed',
  'commerce.order_created',
  'commerce.order_completed',
  'commerce.order_refunded',
  'commerce.revenue_recorded',
] as const;

export type EventName = (typeof EVENT_NAMES)[number];

export interface SimEvent {
  event: EventName;
  data: Record<string, unknown>;
  /** Epoch ms when the operation happened. */
  at: number;
}

export type EventListener = (e: SimEvent) => void;
