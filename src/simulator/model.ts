/**
 * The simulator's own record types. Deliberately independent of src/crm (DESIGN: the simulator
 * shares no code with the client). Timestamps are epoch milliseconds; serializers shape them.
 */
export type CustomValue = string | string[];

export interface ContactRec {
  id: number;
  userId: number | null;
  hash: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  status: string;
  contactType: string;
  phone: string | null;
  addressLine1: string | null;
  addressLine2: string | null;
  city: string | null;
  state: string | null;
  postalCode: string | null;
  country: string | null;
  dateOfBirth: string | null;
  source: string | null;
  companyId: number | null;
  companyIds: number[];
  tags: number[];
  lists: number[];
  custom: Record<string, CustomValue>;
  createdAt: number;
  updatedAt: number;
  /** Email statistics for with[]=stats. */
  stats: { emails: number; opens: number; clicks: number };
}

export interface TaxonomyRec {
  id: number;
  title: string;
  slug: string;
  description: string;
  createdAt: number;
  updatedAt: number;
}

export interface CustomFieldRec {
  slug: string;
  label: string;
  type: string;
  fieldKey: string;
  options?: string[];
}

export interface CompanyRec {
  id: number;
  hash: string;
  name: string;
  industry: string | null;
  website: string | null;
  email: string | null;
  phone: string | null;
  description: string | null;
  logo: string | null;
  linkedinUrl: string | null;
  addressLine1: string | null;
  addressLine2: string | null;
  city: string | null;
  state: string | null;
  country: string | null;
  postalCode: string | null;
  employeesNumber: number;
  type: string;
  ownerId: number | null;
  status: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface NoteRec {
  id: number;
  subscriberId: number;
  parentId: number | null;
  createdBy: number;
  status: string;
  type: string;
  isPrivate: number;
  title: string;
  description: string;
  createdAt: number;
  updatedAt: number;
}

export interface CampaignStatsRec {
  sent: number;
  delivered: number;
  opened: number;
  clicked: number;
  unsubscribed: number;
  bounced: number;
  revenue: number;
  orders: number;
}

export interface CampaignRec {
  id: number;
  title: string;
  slug: string;
  status: string;
  emailSubject: string;
  emailPreHeader: string;
  emailBody: string;
  recipientsCount: number;
  scheduledAt: number | null;
  designTemplate: string;
  createdBy: number;
  createdAt: number;
  updatedAt: number;
  stats: CampaignStatsRec;
  /** Status-report polls seen; archival happens after enough polls while working. */
  polls: number;
}

export interface FunnelStepRec {
  id: number;
  funnelId: number;
  parentId: number;
  actionName: string;
  title: string;
  type: string;
  status: string;
  conditionType: string;
  sequence: number;
  delay: number;
  createdAt: number;
  updatedAt: number;
}

export interface FunnelRec {
  id: number;
  title: string;
  triggerName: string;
  status: string;
  description: string;
  createdBy: number;
  createdAt: number;
  updatedAt: number;
  steps: FunnelStepRec[];
}

export interface FunnelMetricRec {
  id: number;
  funnelId: number;
  sequenceId: number;
  subscriberId: number;
  benchmarkValue: number;
  benchmarkCurrency: string;
  status: string;
  notes: string;
  createdAt: number;
  updatedAt: number;
}

export interface FunnelSubscriberRec {
  id: number;
  funnelId: number;
  subscriberId: number;
  status: string;
  lastSequenceId: number | null;
  nextSequenceId: number | null;
  nextExecutionTime: number | null;
  createdAt: number;
  updatedAt: number;
  metrics: FunnelMetricRec[];
}

export interface TemplateRec {
  id: number;
  title: string;
  content: string;
  excerpt: string;
  emailSubject: string;
  editType: string;
  designTemplate: string;
  status: string;
  createdAt: number;
  updatedAt: number;
}

export interface SequenceRec {
  id: number;
  title: string;
  slug: string;
  status: string;
  designTemplate: string;
  createdBy: number;
  createdAt: number;
  updatedAt: number;
  emails: { id: number; title: string; subject: string; delayDays: number }[];
  subscriberIds: number[];
  /** Set by PUT /sequences/{id}; until then the blank settings every sequence starts with. */
  mailer?: MailerSettings;
}

/** A sequence's `settings.mailer_settings` (all strings, as the interface gives them). */
export interface MailerSettings {
  from_name: string;
  from_email: string;
  reply_to_name: string;
  reply_to_email: string;
  is_custom: string;
}

export interface WebhookRec {
  id: number;
  name: string;
  url: string;
  events: string[];
  status: 'active' | 'inactive' | 'failed';
  secret: string;
  createdAt: number;
  updatedAt: number;
  consecutiveFailures: number;
}

export interface DeliveryRec {
  id: number;
  webhookId: number;
  event: string;
  status: 'success' | 'failed' | 'pending';
  responseCode: number;
  responseTime: number;
  attemptedAt: number | null;
  attempts: number;
  /** When the next attempt is due (epoch ms), null when final. */
  nextAttemptAt: number | null;
  /** The raw JSON body sent (signature included). */
  body: string;
  signature: string;
  createdAt: number;
}
