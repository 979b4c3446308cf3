import type { CampaignRec, FunnelRec, FunnelSubscriberRec, SequenceRec, TemplateRec } from './model.js';
import { seedCampaigns, seedFunnels, seedSequences, seedTemplates } from './marketing-seed.js';
import { notFound, SimError } from './sim-error.js';
import type { SimState } from './state.js';
import { slugify } from './seed-data.js';
import { formatIsoZ } from './time.js';

export const FUNNEL_STATUSES = ['published', 'draft', 'paused'] as const;

const modelMissing = (model: string, what: string): SimError => notFound(what, { status: 404, body: { message: `No query results for model [FluentCrm\\App\\Models\\${model}].` } });

/**
 * Campaigns, automations (funnels), templates and sequences, with the transitions the spec
 * gives (campaign pause/resume, status polling with request_counter, funnel status rules) and
 * the events they emit.
 */
export class Marketing {
  readonly campaigns = new Map<number, CampaignRec>();
  readonly funnels = new Map<number, FunnelRec>();
  readonly funnelSubscribers = new Map<number, FunnelSubscriberRec>();
  readonly templates = new Map<number, TemplateRec>();
  readonly sequences = new Map<number, SequenceRec>();
  #nextCampaign: number;
  #nextFunnel: number;
  #nextFunnelSubscriber: number;
  #nextStep: number;
  #nextTemplate: number;
  #nextSequence: number;
  #nextMetric = 1_000_000;

  constructor(readonly state: SimState) {
    const seed = state.opts.seed;
    const store = state.contacts;
    for (const c of seedCampaigns(seed, store.size)) this.campaigns.set(c.id, c);
    for (const t of seedTemplates()) this.templates.set(t.id, t);
    const sample = (n: number): number[] => {
      const out: number[] = [];
      const step = Math.max(1, Math.floor(store.size / Math.max(1, n)));
      for (let i = 0; i < store.size && out.length < n; i += step) out.push(store.idAt(i));
      return out;
    };
    for (const s of seedSequences(seed, sample)) this.sequences.set(s.id, s);
    const ids: number[] = [];
    for (let i = 0; i < store.size; i++) ids.push(store.idAt(i));
    const { funnels, subscribers } = seedFunnels(seed, ids);
    for (const f of funnels) this.funnels.set(f.id, f);
    for (const s of subscribers) this.funnelSubscribers.set(s.id, s);
    this.#nextCampaign = this.campaigns.size + 1;
    this.#nextFunnel = this.funnels.size + 1;
    this.#nextFunnelSubscriber = subscribers.length + 1;
    this.#nextStep = funnels.reduce((n, f) => n + f.steps.length, 0) + 1;
    this.#nextTemplate = 100 + this.templates.size;
    this.#nextSequence = this.sequences.size + 1;
  }

  // ---- campaigns

  campaign(id: number): CampaignRec {
    const c = this.campaigns.get(id);
    if (!c) throw modelMissing('Campaign', 'campaign');
    return c;
  }

  #campaignEvent(c: CampaignRec): Record<string, unknown> {
    return { campaign: { id: c.id, title: c.title, status: c.status, recipients_count: c.recipientsCount } };
  }

  pauseCampaign(id: number): CampaignRec {
    const c = this.campaign(id);
    if (c.status !== 'working') {
      throw new SimError(400, 'rest_invalid_param', `Only a campaign in status working can be paused; this one is ${c.status}.`, { status: 422, body: { message: 'You can only pause a campaign if it is on "Working" state' } });
    }
    c.status = 'paused';
    c.updatedAt = this.state.now;
    this.state.emit('campaign.paused', this.#campaignEvent(c));
    return c;
  }

  resumeCampaign(id: number): CampaignRec {
    const c = this.campaign(id);
    if (c.status !== 'paused') {
      throw new SimError(400, 'rest_invalid_param', `Only a paused campaign can be resumed; this one is ${c.status}.`, { status: 422, body: { message: 'You can only resume a campaign if it is on "paused" state' } });
    }
    c.status = 'working';
    c.updatedAt = this.state.now;
    this.state.emit('campaign.resumed', this.#campaignEvent(c));
    return c;
  }

  duplicateCampaign(id: number): CampaignRec {
    const src = this.campaign(id);
    const now = this.state.now;
    const copy: CampaignRec = {
      ...structuredClone(src),
      id: this.#nextCampaign++,
      title: `[Duplicate] ${src.title}`,
      slug: `${src.slug}-copy-${this.#nextCampaign}`,
      status: 'draft',
      recipientsCount: 0,
      scheduledAt: null,
      createdAt: now,
      updatedAt: now,
      stats: { sent: 0, delivered: 0, opened: 0, clicked: 0, unsubscribed: 0, bounced: 0, revenue: 0, orders: 0 },
      polls: 0,
    };
    this.campaigns.set(copy.id, copy);
    this.state.emit('campaign.created', this.#campaignEvent(copy));
    return copy;
  }

  createCampaign(title: string): CampaignRec {
    const now = this.state.now;
    const c: CampaignRec = {
      id: this.#nextCampaign++, title, slug: slugify(title), status: 'draft', emailSubject: title, emailPreHeader: '', emailBody: '', recipientsCount: 0,
      scheduledAt: null, designTemplate: 'simple', createdBy: 1, createdAt: now, updatedAt: now,
      stats: { sent: 0, delivered: 0, opened: 0, clicked: 0, unsubscribed: 0, bounced: 0, revenue: 0, orders: 0 }, polls: 0,
    };
    this.campaigns.set(c.id, c);
    this.state.emit('campaign.created', this.#campaignEvent(c));
    return c;
  }

  /** Starts sending a draft or scheduled campaign (in-process only: the interface does not show the send endpoint). */
  sendCampaign(id: number): CampaignRec {
    const c = this.campaign(id);
    c.status = 'working';
    c.recipientsCount = Math.max(c.recipientsCount, this.state.contacts.size);
    c.updatedAt = this.state.now;
    return c;
  }

  renameCampaign(id: number, title: unknown): CampaignRec {
    const c = this.campaign(id);
    if (typeof title !== 'string' || !title.trim()) throw new SimError(400, 'rest_missing_callback_param', 'Missing parameter(s): title; send a non-empty title.', { status: 422, body: { title: { required: 'Title is required' } } });
    c.title = title.trim().slice(0, 190);
    c.updatedAt = this.state.now;
    return c;
  }

  deleteCampaign(id: number): void {
    this.campaign(id);
    this.campaigns.delete(id);
  }

  /**
   * One status poll. A working campaign sends a quarter of what remains on every poll; every
   * 4th request_counter also recovers stuck emails (the rest of the batch); once nothing remains
   * it is archived, and campaign.sent is emitted.
   */
  pollCampaignStatus(id: number, requestCounter: number): { campaign: CampaignRec; cleanup: boolean } {
    const c = this.campaign(id);
    c.polls++;
    const cleanup = requestCounter > 0 && requestCounter % 4 === 0;
    if (c.status === 'working') {
      const remaining = c.recipientsCount - c.stats.sent;
      const batch = cleanup ? remaining : Math.ceil(remaining / 4);
      c.stats.sent += batch;
      c.stats.delivered += Math.floor(batch * 0.97);
      c.stats.bounced += batch - Math.floor(batch * 0.97);
      if (c.stats.sent >= c.recipientsCount) {
        c.status = 'archived';
        c.updatedAt = this.state.now;
        this.state.emit('campaign.sent', this.#campaignEvent(c));
      }
    }
    return { campaign: c, cleanup };
  }

  recordEmail(event: string, _contactId: number, campaignId?: number): void {
    const c = campaignId === undefined ? undefined : this.campaigns.get(campaignId);
    if (!c) return;
    if (event === 'email.sent') c.stats.sent++;
    if (event === 'email.opened') c.stats.opened++;
    if (event === 'email.clicked') c.stats.clicked++;
    if (event === 'email.bounced') c.stats.bounced++;
    if (event === 'email.unsubscribed') c.stats.unsubscribed++;
  }

  // ---- funnels

  funnel(id: number): FunnelRec {
    const f = this.funnels.get(id);
    if (!f) throw modelMissing('Funnel', 'funnel');
    return f;
  }

  setFunnelStatus(id: number, status: unknown): FunnelRec {
    const f = this.funnel(id);
    if (typeof status !== 'string' || !(FUNNEL_STATUSES as readonly string[]).includes(status)) {
      throw new SimError(400, 'rest_invalid_param', `Invalid parameter(s): status; use published, draft or paused.`, { status: 422, body: { status: { in: 'The selected status is invalid.' } } });
    }
    f.status = status;
    f.updatedAt = this.state.now;
    return f;
  }

  duplicateFunnel(id: number): FunnelRec {
    const src = this.funnel(id);
    const now = this.state.now;
    const fid = this.#nextFunnel++;
    const copy: FunnelRec = {
      ...structuredClone(src),
      id: fid,
      title: `[Copy] ${src.title}`,
      status: 'draft',
      createdAt: now,
      updatedAt: now,
      steps: src.steps.map((s) => ({ ...s, id: this.#nextStep++, funnelId: fid, createdAt: now, updatedAt: now })),
    };
    this.funnels.set(fid, copy);
    return copy;
  }

  deleteFunnel(id: number): void {
    this.funnel(id);
    this.funnels.delete(id);
    for (const [k, s] of this.funnelSubscribers) if (s.funnelId === id) this.funnelSubscribers.delete(k);
  }

  subscriberOf(funnelId: number, contactId: number): FunnelSubscriberRec | undefined {
    for (const s of this.funnelSubscribers.values()) if (s.funnelId === funnelId && s.subscriberId === contactId) return s;
    return undefined;
  }

  #fsEvent(s: FunnelSubscriberRec, f: FunnelRec): Record<string, unknown> {
    return { funnel: { id: f.id, title: f.title }, subscriber: { id: s.subscriberId, status: s.status }, funnel_subscriber_id: s.id };
  }

  addFunnelSubscribers(funnelId: number, ids: unknown): FunnelSubscriberRec[] {
    const f = this.funnel(funnelId);
    if (!Array.isArray(ids) || ids.length === 0 || ids.length > 10_000) {
      throw new SimError(400, 'rest_missing_callback_param', 'Missing parameter(s): subscribers; send an array of contact ids.', { status: 422, body: { subscribers: { required: 'Subscribers are required' } } });
    }
    const contactIds = ids.map(Number);
    for (const id of contactIds) {
      if (!Number.isInteger(id) || !this.state.contact(id)) throw notFound('subscriber', { status: 422, body: { message: 'Subscriber not found' } });
      const existing = this.subscriberOf(funnelId, id);
      if (existing && existing.status === 'active') {
        throw new SimError(409, 'subscriber_already_exists', `Contact ${id} is already active in this automation; remove it first.`, { status: 409, body: { code: 'subscriber_already_exists', message: 'Subscriber already exists in this funnel', data: { status: 409 } } });
      }
    }
    const now = this.state.now;
    const first = f.steps[0];
    const added: FunnelSubscriberRec[] = [];
    for (const id of contactIds) {
      const old = this.subscriberOf(funnelId, id);
      if (old) this.funnelSubscribers.delete(old.id);
      // Metrics are history: a contact that re-enters keeps them, so a step can count more runs than entrants.
      const s: FunnelSubscriberRec = {
        id: this.#nextFunnelSubscriber++, funnelId, subscriberId: id, status: 'active', lastSequenceId: null, nextSequenceId: first?.id ?? null,
        nextExecutionTime: first ? now : null, createdAt: now, updatedAt: now, metrics: old ? old.metrics : [],
      };
      this.funnelSubscribers.set(s.id, s);
      added.push(s);
      this.state.emit('funnel.subscriber_added', this.#fsEvent(s, f), now);
    }
    return added;
  }

  removeFunnelSubscriber(funnelId: number, contactId: number): void {
    const f = this.funnel(funnelId);
    const s = this.subscriberOf(funnelId, contactId) ?? this.funnelSubscribers.get(contactId);
    if (!s || s.funnelId !== funnelId) throw notFound('funnel subscriber', { status: 404, body: { message: 'No query results for model [FluentCrm\\App\\Models\\FunnelSubscriber].' } });
    this.funnelSubscribers.delete(s.id);
    this.state.emit('funnel.subscriber_exited', this.#fsEvent({ ...s, status: 'cancelled' }, f));
  }

  /** Runs the next step for one contact in a funnel (in-process): metrics, events, completion. */
  advanceFunnelSubscriber(funnelId: number, contactId: number): FunnelSubscriberRec {
    const f = this.funnel(funnelId);
    const s = this.subscriberOf(funnelId, contactId);
    if (!s || s.status !== 'active') throw notFound('funnel subscriber');
    const idx = f.steps.findIndex((st) => st.id === s.nextSequenceId);
    const step = f.steps[idx];
    if (!step) throw new SimError(400, 'rest_invalid_param', 'This contact has no next step.');
    const now = this.state.now;
    s.metrics.push({ id: this.#nextMetric++, funnelId, sequenceId: step.id, subscriberId: contactId, benchmarkValue: 0, benchmarkCurrency: 'USD', status: 'completed', notes: '', createdAt: now, updatedAt: now });
    s.lastSequenceId = step.id;
    const next = f.steps[idx + 1];
    s.nextSequenceId = next?.id ?? null;
    s.nextExecutionTime = next ? now + next.delay * 1000 : null;
    s.updatedAt = now;
    this.state.emit('funnel.sequence_completed', { ...this.#fsEvent(s, f), sequence: { id: step.id, title: step.title, action_name: step.actionName } }, now);
    if (!next) {
      s.status = 'completed';
      this.state.emit('funnel.subscriber_completed', this.#fsEvent(s, f), now);
    }
    return s;
  }

  // ---- templates and sequences

  template(id: number): TemplateRec {
    const t = this.templates.get(id);
    if (!t) throw notFound('template');
    return t;
  }

  saveTemplate(id: number | undefined, body: Record<string, unknown>): TemplateRec {
    const raw = (typeof body.template === 'object' && body.template !== null ? body.template : body) as Record<string, unknown>;
    const str = (k: string, d: string): string => (typeof raw[k] === 'string' ? (raw[k] as string).slice(0, 100_000) : d);
    const now = this.state.now;
    const old = id === undefined ? undefined : this.template(id);
    const t: TemplateRec = {
      id: old?.id ?? this.#nextTemplate++,
      title: str('post_title', old?.title ?? ''),
      content: str('post_content', old?.content ?? ''),
      excerpt: str('post_excerpt', old?.excerpt ?? ''),
      emailSubject: str('email_subject', old?.emailSubject ?? ''),
      editType: str('edit_type', old?.editType ?? 'html'),
      designTemplate: str('design_template', old?.designTemplate ?? 'simple'),
      status: old?.status ?? 'publish',
      createdAt: old?.createdAt ?? now,
      updatedAt: now,
    };
    if (!t.title) throw new SimError(400, 'rest_missing_callback_param', 'Missing parameter(s): template.post_title.', { status: 422, body: { post_title: { required: 'Title is required' } } });
    this.templates.set(t.id, t);
    return t;
  }

  duplicateTemplate(id: number): TemplateRec {
    const src = this.template(id);
    const now = this.state.now;
    const t = { ...src, id: this.#nextTemplate++, title: `[Duplicate] ${src.title}`, createdAt: now, updatedAt: now };
    this.templates.set(t.id, t);
    return t;
  }

  sequence(id: number): SequenceRec {
    const s = this.sequences.get(id);
    if (!s) throw modelMissing('Sequence', 'sequence');
    return s;
  }

  duplicateSequence(id: number): SequenceRec {
    const src = this.sequence(id);
    const now = this.state.now;
    const s: SequenceRec = { ...structuredClone(src), id: this.#nextSequence++, title: `[Duplicate] ${src.title}`, status: 'draft', createdAt: now, updatedAt: now, subscriberIds: [] };
    this.sequences.set(s.id, s);
    return s;
  }

  truth(): { campaigns: Record<string, unknown>[]; funnels: Record<string, unknown>[]; funnelSubscribers: Record<string, unknown>[]; templates: Record<string, unknown>[]; sequences: Record<string, unknown>[] } {
    const iso = (ms: number | null): string | null => (ms === null ? null : formatIsoZ(ms));
    return {
      campaigns: [...this.campaigns.values()].map((c) => ({ ...structuredClone(c), created_at: this.state.formatLocal(c.createdAt), updated_at: this.state.formatLocal(c.updatedAt) })),
      funnels: [...this.funnels.values()].map((f) => ({ ...structuredClone(f), created_at: iso(f.createdAt), updated_at: iso(f.updatedAt) })),
      funnelSubscribers: [...this.funnelSubscribers.values()].map((s) => structuredClone(s) as unknown as Record<string, unknown>),
      templates: [...this.templates.values()].map((t) => ({ ...t })),
      sequences: [...this.sequences.values()].map((s) => structuredClone(s) as unknown as Record<string, unknown>),
    };
  }
}
