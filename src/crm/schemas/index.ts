import type { TimestampNormalizer } from '../timestamps.js';
import { campaignSchema, campaignStatusSchema } from './campaign.js';
import { companySchema } from './company.js';
import { contactSchema } from './contact.js';
import { funnelSchema, funnelSubscriberSchema } from './funnel.js';
import { CustomFieldSchema, noteSchema, sequenceSchema, sequenceSubscriberSchema, templateSchema, webhookDeliverySchema, webhookSchema } from './misc.js';
import { listSchema, tagSchema } from './taxonomy.js';

/** Every record schema, built once per client for its time zone (zone-less timestamps are read in it). */
export function buildSchemas(ts: TimestampNormalizer) {
  return {
    Contact: contactSchema(ts),
    Tag: tagSchema(ts),
    List: listSchema(ts),
    Company: companySchema(ts),
    Campaign: campaignSchema(ts),
    CampaignStatus: campaignStatusSchema(ts),
    Funnel: funnelSchema(ts),
    FunnelSubscriber: funnelSubscriberSchema(ts),
    Note: noteSchema(ts),
    Template: templateSchema(ts),
    Sequence: sequenceSchema(ts),
    SequenceSubscriber: sequenceSubscriberSchema(ts),
    CustomField: CustomFieldSchema,
    Webhook: webhookSchema(ts),
    WebhookDelivery: webhookDeliverySchema(ts),
  };
}

export type Schemas = ReturnType<typeof buildSchemas>;
