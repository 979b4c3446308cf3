import type { CampaignRec, FunnelRec, FunnelSubscriberRec, SequenceRec, TemplateRec } from './model.js';
import { createRng } from './rng.js';
import { SEED_EPOCH_MS, slugify } from './seed-data.js';

const DAY = 86_400_000;

const CAMPAIGNS: readonly (readonly [string, string])[] = [
  ['Welcome Series Kickoff', 'sent'],
  ['Spring Product Launch', 'sent'],
  ['Summer Sale', 'sent'],
  ['Autumn Webinar Invite', 'sent'],
  ['November Newsletter', 'working'],
  ['Year in Review', 'scheduled'],
  ['Holiday Offer', 'paused'],
  ['Customer Survey', 'draft'],
  ['Archived Launch Teaser', 'archived'],
];

/**
 * A body shaped like site-ny's (a greeting, then a link or two): link-report and url-metrics split
 * the click counter over its hrefs (campaign-links.ts). Every third campaign has one link; the
 * others share the pricing link, so one URL counts clicks from several campaigns, as on the site.
 */
function seedBody(title: string, i: number): string {
  const pricing = i % 3 === 2 ? '' : ' or <a href="https://example.test/pricing">see pricing</a>';
  return `<h2>Hello {{contact.first_name}}</h2><p>${title}. <a href="https://example.test/${slugify(title)}">Read more</a>${pricing}.</p>`;
}

export function seedCampaigns(seed: number, contacts: number): CampaignRec[] {
  const rng = createRng(seed ^ 0xca4);
  return CAMPAIGNS.map(([title, status], i) => {
    const recipients = status === 'draft' ? 0 : Math.max(1, Math.floor(contacts * (0.3 + rng() * 0.6)));
    const sentShare = status === 'working' ? 0.4 : status === 'paused' ? 0.6 : status === 'scheduled' ? 0 : status === 'draft' ? 0 : 1;
    // A finished send leaves one recipient without an email, as both sent campaigns on the site-ny
    // capture do (493 recipients, 492 sent; 524, 523).
    const finished = status === 'sent' || status === 'archived';
    const sent = finished && recipients > 1 ? recipients - 1 : Math.floor(recipients * sentShare);
    const delivered = Math.floor(sent * (0.95 + rng() * 0.04));
    const opened = Math.floor(delivered * (0.2 + rng() * 0.3));
    const clicked = Math.floor(opened * (0.1 + rng() * 0.3));
    const created = SEED_EPOCH_MS - (300 - i * 30) * DAY;
    return {
      id: i + 1,
      title,
      slug: slugify(title),
      status,
      emailSubject: `${title}: news from the team`,
      emailPreHeader: 'Open to read more',
      emailBody: seedBody(title, i),
      recipientsCount: recipients,
      scheduledAt: status === 'scheduled' ? SEED_EPOCH_MS + 30 * DAY : status === 'sent' || status === 'archived' ? null : created + DAY,
      designTemplate: 'simple',
      createdBy: 1,
      createdAt: created,
      updatedAt: created + DAY,
      stats: { sent, delivered, opened, clicked, unsubscribed: Math.floor(delivered * 0.005), bounced: sent - delivered, revenue: Math.floor(clicked * rng() * 40), orders: Math.floor(clicked * 0.1) },
      polls: 0,
    };
  });
}

export function seedTemplates(): TemplateRec[] {
  return ['Simple Newsletter', 'Plain Announcement', 'Classic Promotion', 'Raw HTML Receipt'].map((title, i) => ({
    id: 100 + i,
    title,
    content: `<h1>${title}</h1><p>{{contact.first_name}}</p>`,
    excerpt: `${title} template`,
    emailSubject: title,
    editType: i === 3 ? 'html' : 'visual',
    designTemplate: ['simple', 'plain', 'classic', 'raw_html'][i] as string,
    status: i === 2 ? 'draft' : 'publish',
    createdAt: SEED_EPOCH_MS - (200 - i) * DAY,
    updatedAt: SEED_EPOCH_MS - (100 - i) * DAY,
  }));
}

export function seedSequences(seed: number, liveIds: (n: number) => number[]): SequenceRec[] {
  return ['Onboarding Drip', 'Trial Nurture', 'Re-engagement'].map((title, i) => ({
    id: i + 1,
    title,
    slug: slugify(title),
    status: i === 2 ? 'draft' : 'published',
    designTemplate: 'simple',
    createdBy: 1,
    createdAt: SEED_EPOCH_MS - (250 - i * 20) * DAY,
    updatedAt: SEED_EPOCH_MS - (150 - i * 20) * DAY,
    emails: [1, 2, 3].map((n) => ({ id: (i + 1) * 10 + n, title: `${title} #${n}`, subject: `${title}, part ${n}`, delayDays: (n - 1) * 2 })),
    subscriberIds: liveIds(i === 2 ? 0 : 20 + ((seed + i) % 10)),
  }));
}

const STEP_ACTIONS = ['send_custom_email', 'fluentcrm_wait_times', 'add_contact_to_tag', 'send_custom_email', 'add_contact_to_list', 'fluentcrm_wait_times', 'send_custom_email'];

export function seedFunnels(seed: number, contactIds: number[]): { funnels: FunnelRec[]; subscribers: FunnelSubscriberRec[] } {
  const rng = createRng(seed ^ 0xf00);
  const defs: readonly (readonly [string, string, string, number])[] = [
    ['Welcome new subscribers', 'fluentcrm_contact_added_to_lists', 'published', 5],
    ['Trial to paid', 'custom_trial_started', 'published', 7],
    ['Webinar follow-up', 'webhook_webinar_registered', 'paused', 4],
    ['Draft win-back', 'user_registration', 'draft', 0],
  ];
  const funnels: FunnelRec[] = [];
  const subscribers: FunnelSubscriberRec[] = [];
  let stepId = 1;
  let fsId = 1;
  let metricId = 1;
  defs.forEach(([title, trigger, status, stepCount], i) => {
    const created = SEED_EPOCH_MS - (400 - i * 40) * DAY;
    const funnel: FunnelRec = { id: i + 1, title, triggerName: trigger, status, description: `${title} automation`, createdBy: 1, createdAt: created, updatedAt: created + DAY, steps: [] };
    for (let s = 0; s < stepCount; s++) {
      const action = STEP_ACTIONS[s % STEP_ACTIONS.length] as string;
      funnel.steps.push({
        id: stepId++,
        funnelId: funnel.id,
        parentId: 0,
        actionName: action,
        title: `${action.replace(/_/g, ' ')} ${s + 1}`,
        type: action === 'fluentcrm_wait_times' ? 'action' : action.startsWith('send') ? 'action' : 'action',
        status: 'published',
        conditionType: 'and',
        sequence: s + 1,
        delay: action === 'fluentcrm_wait_times' ? 86_400 : 0,
        createdAt: created,
        updatedAt: created,
      });
    }
    funnels.push(funnel);
    if (stepCount === 0) return;
    // Entrants: a deterministic sample of contacts; later steps see fewer of them.
    const sample = contactIds.filter(() => rng() < Math.min(0.5, 150 / Math.max(1, contactIds.length)));
    for (const subscriberId of sample) {
      // The webhook funnel's last step is never reached, so step reports show an omitted step.
      const maxReach = trigger.startsWith('webhook_') ? stepCount - 1 : stepCount;
      const reached = Math.floor(rng() * (maxReach + 1));
      const completed = reached === stepCount;
      const cancelled = !completed && rng() < 0.1;
      const enteredAt = created + Math.floor(rng() * 300) * DAY;
      const metrics = funnel.steps.slice(0, reached).map((st, k) => ({
        id: metricId++,
        funnelId: funnel.id,
        sequenceId: st.id,
        subscriberId,
        benchmarkValue: st.actionName === 'send_custom_email' ? Math.round(rng() * 100) / 10 : 0,
        benchmarkCurrency: 'USD',
        status: 'completed',
        notes: '',
        createdAt: enteredAt + k * DAY,
        updatedAt: enteredAt + k * DAY,
      }));
      const last = reached > 0 ? funnel.steps[reached - 1] : undefined;
      const next = completed ? undefined : funnel.steps[reached];
      subscribers.push({
        id: fsId++,
        funnelId: funnel.id,
        subscriberId,
        status: completed ? 'completed' : cancelled ? 'cancelled' : 'active',
        lastSequenceId: last?.id ?? null,
        nextSequenceId: next && !cancelled ? next.id : null,
        nextExecutionTime: next && !cancelled ? SEED_EPOCH_MS + Math.floor(rng() * 10) * DAY : null,
        createdAt: enteredAt,
        updatedAt: enteredAt + reached * DAY,
        metrics,
      });
    }
  });
  return { funnels, subscribers };
}
