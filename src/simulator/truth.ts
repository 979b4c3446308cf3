import type { ContactRec, CustomValue, DeliveryRec, WebhookRec } from './model.js';
import type { Marketing } from './marketing.js';
import type { SimState } from './state.js';
import { formatIsoZ } from './time.js';
import type { WebhookDispatcher } from './webhook-dispatcher.js';

export interface TruthContact {
  id: number;
  user_id: number | null;
  hash: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  full_name: string;
  status: string;
  contact_type: string;
  phone: string | null;
  address_line_1: string | null;
  address_line_2: string | null;
  city: string | null;
  state: string | null;
  postal_code: string | null;
  country: string | null;
  date_of_birth: string | null;
  source: string | null;
  company_id: number | null;
  company_ids: number[];
  tags: number[];
  lists: number[];
  custom_values: Record<string, CustomValue>;
  /** As the API shows them: `YYYY-MM-DD HH:MM:SS` in the site time zone. */
  created_at: string;
  updated_at: string;
  /** The same instants in ISO 8601 UTC with milliseconds, for comparing with normalized data. */
  created_at_iso: string;
  updated_at_iso: string;
  stats: { emails: number; opens: number; clicks: number };
}

export interface SimulatorTruth {
  contacts: TruthContact[];
  tags: Record<string, unknown>[];
  lists: Record<string, unknown>[];
  companies: Record<string, unknown>[];
  customFields: Record<string, unknown>[];
  notes: Record<string, unknown>[];
  campaigns: Record<string, unknown>[];
  funnels: Record<string, unknown>[];
  funnelSubscribers: Record<string, unknown>[];
  templates: Record<string, unknown>[];
  sequences: Record<string, unknown>[];
  webhooks: (Omit<WebhookRec, 'createdAt' | 'updatedAt'> & { created_at: string; updated_at: string })[];
  deliveries: (DeliveryRec & { webhook_id: number })[];
}

export function truthContact(c: ContactRec, state: SimState): TruthContact {
  return {
    id: c.id,
    user_id: c.userId,
    hash: c.hash,
    email: c.email,
    first_name: c.firstName,
    last_name: c.lastName,
    full_name: [c.firstName, c.lastName].filter((x) => x).join(' '),
    status: c.status,
    contact_type: c.contactType,
    phone: c.phone,
    address_line_1: c.addressLine1,
    address_line_2: c.addressLine2,
    city: c.city,
    state: c.state,
    postal_code: c.postalCode,
    country: c.country,
    date_of_birth: c.dateOfBirth,
    source: c.source,
    company_id: c.companyId,
    company_ids: [...c.companyIds],
    tags: [...c.tags],
    lists: [...c.lists],
    custom_values: structuredClone(c.custom),
    created_at: state.formatLocal(c.createdAt),
    updated_at: state.formatLocal(c.updatedAt),
    created_at_iso: new Date(Math.floor(c.createdAt / 1000) * 1000).toISOString(),
    updated_at_iso: new Date(Math.floor(c.updatedAt / 1000) * 1000).toISOString(),
    stats: { ...c.stats },
  };
}

/** A deep copy of the whole state, in plain JSON-able objects. */
export function buildTruth(state: SimState, marketing: Marketing, webhooks: WebhookDispatcher): SimulatorTruth {
  const contacts: TruthContact[] = [];
  for (let i = 0; i < state.contacts.size; i++) {
    const c = state.contact(state.contacts.idAt(i));
    if (c) contacts.push(truthContact(c, state));
  }
  const counts = state.counts();
  const tax = (kind: 'tag' | 'list') =>
    [...state.taxonomy(kind).values()].map((t) => ({
      id: t.id,
      title: t.title,
      slug: t.slug,
      description: t.description,
      created_at: state.formatLocal(t.createdAt),
      updated_at: state.formatLocal(t.updatedAt),
      total_count: counts.total.get(`${kind === 'tag' ? 't' : 'l'}:${t.id}`) ?? 0,
      subscribers_count: counts.subscribed.get(`${kind === 'tag' ? 't' : 'l'}:${t.id}`) ?? 0,
    }));
  return {
    contacts,
    tags: tax('tag'),
    lists: tax('list'),
    companies: [...state.companies.values()].map((c) => ({ ...structuredClone(c), contacts_count: counts.total.get(`c:${c.id}`) ?? 0 })),
    customFields: state.customFields.map((f) => structuredClone(f) as unknown as Record<string, unknown>),
    notes: [...state.notes.values()].map((n) => ({ ...n })),
    ...marketing.truth(),
    webhooks: [...webhooks.hooks.values()].map(({ createdAt, updatedAt, ...rest }) => ({ ...structuredClone(rest), created_at: formatIsoZ(createdAt), updated_at: formatIsoZ(updatedAt) })),
    deliveries: [...webhooks.deliveries.values()].map((d) => ({ ...d, webhook_id: d.webhookId })),
  };
}
