import type { TimestampNormalizer } from '../timestamps.js';
import { campaignSchema, campaignStatusSchema } from './campaign.js';
import { companySchema } from './company.js';
import { contactSchema } from './contact.js';
import { funnelSchema, funnelSubscriberSchema } from './funnel.js';
import { CustomFieldSchema, noteSchema, sequenceSchema, sequenceSubscriberSchema, templateSchema, webhookDeliverySchema, webhookSchema } from './misc.js';
import { listSchema, tagSchema } from './taxonomy.js';

/**
 * Every record schema for the client's time zone (zone-less timestamps are read in it), each built on
 * first use: building all fifteen zod schemas cost a new client about as much CPU as reading ten
 * pages, and most clients use a few of them.
 */
export function buildSchemas(ts: TimestampNormalizer) {
  let contact: ReturnType<typeof contactSchema> | undefined;
  let tag: ReturnType<typeof tagSchema> | undefined;
  let list: ReturnType<typeof listSchema> | undefined;
  let company: ReturnType<typeof companySchema> | undefined;
  let campaign: ReturnType<typeof campaignSchema> | undefined;
  let campaignStatus: ReturnType<typeof campaignStatusSchema> | undefined;
  let funnel: ReturnType<typeof funnelSchema> | undefined;
  let funnelSubscriber: ReturnType<typeof funnelSubscriberSchema> | undefined;
  let note: ReturnType<typeof noteSchema> | undefined;
  let template: ReturnType<typeof templateSchema> | undefined;
  let sequence: ReturnType<typeof sequenceSchema> | undefined;
  let sequenceSubscriber: ReturnType<typeof sequenceSubscriberSchema> | undefined;
  let webhook: ReturnType<typeof webhookSchema> | undefined;
  let webhookDelivery: ReturnType<typeof webhookDeliverySchema> | undefined;
  return {
    get Contact() {
      return (contact ??= contactSchema(ts));
    },
    get Tag() {
      return (tag ??= tagSchema(ts));
    },
    get List() {
      return (list ??= listSchema(ts));
    },
    get Company() {
      return (company ??= companySchema(ts));
    },
    get Campaign() {
      return (campaign ??= campaignSchema(ts));
    },
    get CampaignStatus() {
      return (campaignStatus ??= campaignStatusSchema(ts));
    },
    get Funnel() {
      return (funnel ??= funnelSchema(ts));
    },
    get FunnelSubscriber() {
      return (funnelSubscriber ??= funnelSubscriberSchema(ts));
    },
    get Note() {
      return (note ??= noteSchema(ts));
    },
    get Template() {
      return (template ??= templateSchema(ts));
    },
    get Sequence() {
      return (sequence ??= sequenceSchema(ts));
    },
    get SequenceSubscriber() {
      return (sequenceSubscriber ??= sequenceSubscriberSchema(ts));
    },
    CustomField: CustomFieldSchema,
    get Webhook() {
      return (webhook ??= webhookSchema(ts));
    },
    get WebhookDelivery() {
      return (webhookDelivery ??= webhookDeliverySchema(ts));
    },
  };
}

export type Schemas = ReturnType<typeof buildSchemas>;
