import type { EventName } from './events.js';
import type { Marketing } from './marketing.js';
import type { SimState } from './state.js';
import { truthContact, type TruthContact } from './truth.js';

/** Contact fields as the API takes them (email, status, first_name, tags, lists, custom_values...). */
export type ContactInput = Record<string, unknown>;

/**
 * In-process writes that go through the same code as API writes: same validation, timestamps,
 * counts and webhook events. Returns ground-truth shaped records.
 */
export interface MutateApi {
  createContact(input: ContactInput, opts?: { forceUpdate?: boolean }): TruthContact;
  updateContact(id: number, patch: ContactInput): TruthContact;
  deleteContact(id: number): void;
  addTag(contactId: number, tagId: number): TruthContact;
  removeTag(contactId: number, tagId: number): TruthContact;
  addToList(contactId: number, listId: number): TruthContact;
  removeFromList(contactId: number, listId: number): TruthContact;
  setStatus(contactId: number, status: string): TruthContact;
  createTag(title: string, description?: string): { id: number };
  deleteTag(id: number): void;
  createList(title: string, description?: string): { id: number };
  deleteList(id: number): void;
  /** Simulated send of one email: email.sent, email.opened, email.clicked, email.bounced, email.spam_complaint or email.unsubscribed (changes status for the last three). */
  emailEvent(event: Extract<EventName, `email.${string}`>, contactId: number, campaignId?: number): void;
  /** commerce.* events with a free-form order payload. */
  commerceEvent(event: Extract<EventName, `commerce.${string}`>, data: Record<string, unknown>): void;
  createCampaign(title: string): { id: number };
  /** Moves a campaign to working (the send endpoint is not in the interface); status polls then progress it. */
  sendCampaign(id: number): void;
  addFunnelSubscriber(funnelId: number, contactId: number): void;
  /** Runs the next step for the contact: a metric, funnel.sequence_completed, and funnel.subscriber_completed after the last step. */
  advanceFunnel(funnelId: number, contactId: number): void;
  removeFunnelSubscriber(funnelId: number, contactId: number): void;
  /** Raw event, for out-of-order or unusual cases in tests. */
  emit(event: EventName, data: Record<string, unknown>): void;
}

export function createMutateApi(state: SimState, marketing: Marketing): MutateApi {
  const t = (id: number): TruthContact => truthContact(state.requireContact(id), state);
  let emailSerial = 1;
  return {
    createContact: (input, opts) => truthContact(state.createContact({ ...input, ...(opts?.forceUpdate ? { __force_update: 'yes' } : {}) }).contact, state),
    updateContact: (id, patch) => truthContact(state.updateContact(id, patch).contact, state),
    deleteContact: (id) => {
      state.deleteContact(id);
    },
    addTag: (id, tag) => (state.updateContact(id, { attach_tags: [tag] }), t(id)),
    removeTag: (id, tag) => (state.updateContact(id, { detach_tags: [tag] }), t(id)),
    addToList: (id, list) => (state.updateContact(id, { attach_lists: [list] }), t(id)),
    removeFromList: (id, list) => (state.updateContact(id, { detach_lists: [list] }), t(id)),
    setStatus: (id, status) => (state.updateContact(id, { status }), t(id)),
    createTag: (title, description) => ({ id: state.createTaxonomy('tag', { title, description }).id }),
    deleteTag: (id) => {
      state.deleteTaxonomy('tag', id);
    },
    createList: (title, description) => ({ id: state.createTaxonomy('list', { title, description }).id }),
    deleteList: (id) => {
      state.deleteTaxonomy('list', id);
    },
    emailEvent: (event, contactId, campaignId) => {
      const c = state.requireContact(contactId);
      marketing.recordEmail(event, contactId, campaignId);
      const now = state.now;
      const email: Record<string, unknown> = {
        id: emailSerial++,
        subject: campaignId === undefined ? 'Simulated email' : (marketing.campaigns.get(campaignId)?.emailSubject ?? 'Simulated email'),
        contact_id: c.id,
        campaign_id: campaignId ?? null,
      };
      if (event === 'email.opened') email.opened_at = new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
      state.emit(event, { email }, now);
      const status = event === 'email.bounced' ? 'bounced' : event === 'email.spam_complaint' ? 'complained' : event === 'email.unsubscribed' ? 'unsubscribed' : undefined;
      if (status && c.status !== status) state.updateContact(contactId, { status });
    },
    commerceEvent: (event, data) => state.emit(event, data),
    createCampaign: (title) => ({ id: marketing.createCampaign(title).id }),
    sendCampaign: (id) => {
      marketing.sendCampaign(id);
    },
    addFunnelSubscriber: (funnelId, contactId) => {
      marketing.addFunnelSubscribers(funnelId, [contactId]);
    },
    advanceFunnel: (funnelId, contactId) => {
      marketing.advanceFunnelSubscriber(funnelId, contactId);
    },
    removeFunnelSubscriber: (funnelId, contactId) => marketing.removeFunnelSubscriber(funnelId, contactId),
    emit: (event, data) => state.emit(event, data),
  };
}
