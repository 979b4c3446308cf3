/** Outbound event names the CRM documents (spec, Events). Others are stored and flagged `unknown`. */
export const KNOWN_EVENTS = [
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

export type KnownEvent = (typeof KNOWN_EVENTS)[number];

const known = new Set<string>(KNOWN_EVENTS);

export function isKnownEvent(name: string): name is KnownEvent {
  return known.has(name);
}

export type EventGroup = 'contact' | 'email' | 'campaign' | 'funnel' | 'commerce' | 'unknown';

export function eventGroup(name: string): EventGroup {
  if (!isKnownEvent(name)) return 'unknown';
  return name.slice(0, name.indexOf('.')) as EventGroup;
}
