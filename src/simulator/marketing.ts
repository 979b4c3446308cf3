import type { CampaignRec, SequenceRec, TemplateRec } from './model.js';
import { FunnelBook, modelMissing } from './funnel-book.js';
import { seedCampaigns, seedSequences, seedTemplates } from './marketing-seed.js';
import { notFound, SimError } from './sim-error.js';
import type { SimState } from './state.js';
import { slugify } from './seed-data.js';
import { formatIsoZ } from './time.js';

export { FUNNEL_STATUSES } from './funnel-book.js';

/**
 * Campaigns, automations (funnels), templates and sequences, with the transitions the spec
 * gives (campaign pause/resume, status polling with request_counter, funnel status rules) and
 * the events they emit.
 */
export class Marketing extends FunnelBook {
  readonly campaigns = new Map<number, CampaignRec>();
  readonly templates = new Map<number, TemplateRec>();
  readonly sequences = new Map<number, SequenceRec>();
  /** Campaign email rows deleted through DELETE .../emails (the rows are built from the counters: campaign-emails.ts). */
  readonly deletedEmailRows = new Set<number>();
  /** Each link URL of the campaigns' bodies and its site-wide id (campaign-links.ts). */
  readonly linkIds = new Map<string, number>();
  #nextCampaign: number;
  #nextTemplate: number;
  #nextSequence: number;

  constructor(state: SimState) {
    super(state);
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
    this.#nextCampaign = this.campaigns.size + 1;
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
      throw new SimError(400, 'rest_invalid_param', `Only a campaign in status working can be paused; this one is ${c.status}.`, {
        status: 422,
        body: { message: 'You can only pause a campaign if it is on "Working" state' },
      });
    }
    c.status = 'paused';
    c.updatedAt = this.state.now;
    this.state.emit('campaign.paused', this.#campaignEvent(c));
    return c;
  }

  resumeCampaign(id: number): CampaignRec {
    const c = this.campaign(id);
    if (c.status !== 'paused') {
      throw new SimError(400, 'rest_invalid_param', `Only a paused campaign can be resumed; this one is ${c.status}.`, {
        status: 422,
        body: { message: 'You can only resume a campaign if it is on "paused" state' },
      });
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
      id: this.#nextCampaign++,
      title,
      slug: slugify(title),
      status: 'draft',
      emailSubject: title,
      emailPreHeader: '',
      emailBody: '',
      recipientsCount: 0,
      scheduledAt: null,
      designTemplate: 'simple',
      createdBy: 1,
      createdAt: now,
      updatedAt: now,
      stats: { sent: 0, delivered: 0, opened: 0, clicked: 0, unsubscribed: 0, bounced: 0, revenue: 0, orders: 0 },
      polls: 0,
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
    if (typeof title !== 'string' || !title.trim())
      throw new SimError(400, 'rest_missing_callback_param', 'Missing parameter(s): title; send a non-empty title.', { status: 422, body: { title: { required: 'Title is required' } } });
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

  truth(): {
    campaigns: Record<string, unknown>[];
    funnels: Record<string, unknown>[];
    funnelSubscribers: Record<string, unknown>[];
    templates: Record<string, unknown>[];
    sequences: Record<string, unknown>[];
  } {
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
