import { emailRowCount } from './email-row-count.js';
import type { CampaignRec, FunnelMetricRec, FunnelRec, FunnelStepRec, FunnelSubscriberRec, MailerSettings, SequenceRec, TemplateRec } from './model.js';
import type { Serializer } from './serialize.js';
import { formatIsoZ } from './time.js';

/** Funnels use ISO 8601 UTC in the spec; fluentcrm-2.9 sends them zone-less like everything else. */
function funnelTs(ser: Serializer, ms: number | null): string | null {
  if (ms === null) return null;
  return ser.real ? ser.ts(ms) : formatIsoZ(ms);
}

/** Campaign columns fluentcrm-2.9 has beyond the interface's; UTM tagging is never on in the simulator. */
const REAL_UTM = { utm_status: '0', utm_source: null, utm_medium: null, utm_campaign: null, utm_term: null, utm_content: null };

export function campaignJson(ser: Serializer, c: CampaignRec, withStats = false): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: c.id,
    parent_id: null,
    type: 'campaign',
    title: c.title,
    ...(ser.real ? { available_urls: null } : {}),
    slug: c.slug,
    status: c.status,
    template_id: null,
    email_subject: c.emailSubject,
    email_pre_header: c.emailPreHeader,
    email_body: c.emailBody,
    recipients_count: c.recipientsCount,
    delay: ser.real ? '0' : 0,
    ...(ser.real ? REAL_UTM : {}),
    design_template: c.designTemplate,
    scheduled_at: ser.ts(c.scheduledAt),
    settings: {
      mailer_settings: { from_name: '', from_email: '', reply_to_name: '', reply_to_email: '', is_custom: 'no' },
      subscribers: [{ list: 'all', tag: 'all' }],
      ...(ser.real ? { excludedSubscribers: [{ list: null, tag: null }] } : {}),
      sending_filter: 'list_tag',
      ...(ser.real ? { dynamic_segment: null, advanced_filters: [] } : {}),
      sending_type: 'instant',
      is_transactional: 'no',
    },
    created_by: ser.num(c.createdBy),
    created_at: ser.ts(c.createdAt),
    updated_at: ser.ts(c.updatedAt),
  };
  if (withStats) {
    // fluentcrm-2.9 counts the email rows (site-ny campaign 2: 524 recipients, total 523).
    out.stats = { total: ser.real ? emailRowCount(c) : c.recipientsCount, sent: c.stats.sent, clicks: c.stats.clicked, views: c.stats.opened, unsubscribers: c.stats.unsubscribed };
  }
  out.labels = [];
  return out;
}

/** A step's settings as fluentcrm-2.9 stores them per action (site-ny GET_funnels_id_subscribers_contact_id). */
function realStepSettings(s: FunnelStepRec): Record<string, unknown> {
  if (s.actionName === 'fluentcrm_wait_times') {
    return { wait_type: 'unit_wait', wait_time_amount: s.delay / 86_400, wait_time_unit: 'days', is_timestamp_wait: '', wait_date_time: '', to_day: [], to_day_time: '' };
  }
  return s.actionName.includes('_list') ? { lists: [] } : { tags: [] };
}

/** A step saved through the plugin's editor route (funnel-editor.ts) shows the settings it was sent. */
function stepSettings(ser: Serializer, s: FunnelStepRec): unknown {
  if (ser.real) return 'settings' in s ? s.settings : realStepSettings(s);
  return s.actionName === 'fluentcrm_wait_times' ? { wait_time_amount: String(s.delay / 86_400), wait_time_unit: 'days', tags: [] } : { tags: [] };
}

export function stepJson(ser: Serializer, s: FunnelStepRec): Record<string, unknown> {
  return {
    id: s.id,
    funnel_id: ser.num(s.funnelId),
    parent_id: ser.num(s.parentId),
    action_name: s.actionName,
    title: s.title,
    description: '',
    type: s.type,
    status: s.status,
    condition_type: s.conditionType,
    settings: stepSettings(ser, s),
    note: null,
    conditions: [],
    sequence: ser.num(s.sequence),
    delay: ser.num(s.delay),
    c_delay: ser.num(s.delay),
    children: { yes: [], no: [] },
    created_by: ser.num(1),
    created_at: funnelTs(ser, s.createdAt),
    updated_at: funnelTs(ser, s.updatedAt),
  };
}

export function funnelJson(ser: Serializer, f: FunnelRec, extra: { subscribersCount?: number; sequences?: boolean } = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: f.id,
    type: 'funnels',
    title: f.title,
    trigger_name: f.triggerName,
    status: f.status,
    // A funnel made or saved through the plugin's editor routes (funnel-editor.ts) shows its own.
    conditions: 'conditions' in f ? f.conditions : ser.real ? { update_type: 'update', user_roles: [] } : { update_type: 'update' },
    settings: 'settings' in f ? f.settings : { subscription_status: 'subscribed' },
    created_by: ser.real ? String(f.createdBy) : f.createdBy,
    created_at: funnelTs(ser, f.createdAt),
    updated_at: funnelTs(ser, f.updatedAt),
  };
  if (extra.subscribersCount !== undefined) out.subscribers_count = extra.subscribersCount;
  out.description = f.description;
  out.labels = [];
  if (extra.sequences) out.sequences = f.steps.map((s) => stepJson(ser, s));
  return out;
}

export function metricJson(ser: Serializer, m: FunnelMetricRec): Record<string, unknown> {
  return {
    id: m.id,
    funnel_id: ser.num(m.funnelId),
    sequence_id: ser.num(m.sequenceId),
    subscriber_id: ser.num(m.subscriberId),
    benchmark_value: ser.real ? String(m.benchmarkValue) : m.benchmarkValue,
    benchmark_currency: m.benchmarkCurrency,
    status: m.status,
    notes: m.notes,
    created_at: funnelTs(ser, m.createdAt),
    updated_at: funnelTs(ser, m.updatedAt),
  };
}

export function funnelSubscriberJson(
  ser: Serializer,
  s: FunnelSubscriberRec,
  f: FunnelRec,
  subscriber: Record<string, unknown> | null,
  opts: { metrics?: boolean; funnel?: boolean } = {},
): Record<string, unknown> {
  const step = (id: number | null): Record<string, unknown> | null => {
    const st = id === null ? undefined : f.steps.find((x) => x.id === id);
    return st ? stepJson(ser, st) : null;
  };
  // fluentcrm-2.9's row has six more columns (site-ny GET_funnels_id_subscribers); the simulator
  // keeps no notes, starting step or trigger reference, so those are null.
  const real = ser.real;
  const out: Record<string, unknown> = {
    id: s.id,
    funnel_id: ser.num(s.funnelId),
    ...(real ? { starting_sequence_id: null, next_sequence: ser.num(s.nextSequenceId) } : {}),
    subscriber_id: ser.num(s.subscriberId),
    last_sequence_id: ser.num(s.lastSequenceId),
    next_sequence_id: ser.num(s.nextSequenceId),
    ...(real ? { last_sequence_status: s.lastSequenceId === null ? null : 'complete' } : {}),
    status: s.status,
    type: 'funnel',
    ...(real ? { last_executed_time: s.lastSequenceId === null ? null : funnelTs(ser, s.updatedAt) } : {}),
    next_execution_time: funnelTs(ser, s.nextExecutionTime),
    ...(real ? { notes: null } : {}),
    source_trigger_name: f.triggerName,
    ...(real ? { source_ref_id: null } : {}),
    created_at: funnelTs(ser, s.createdAt),
    updated_at: funnelTs(ser, s.updatedAt),
    subscriber,
    last_sequence: step(s.lastSequenceId),
    next_sequence_item: step(s.nextSequenceId),
  };
  if (opts.funnel) out.funnel = funnelJson(ser, f);
  if (opts.metrics) out.metrics = s.metrics.map((m) => metricJson(ser, m));
  return out;
}

export function templateJson(ser: Serializer, t: TemplateRec): Record<string, unknown> {
  return {
    ID: t.id,
    post_title: t.title,
    post_content: t.content,
    post_excerpt: t.excerpt,
    post_status: t.status,
    post_type: 'fc_template',
    post_date: ser.ts(t.createdAt),
    post_modified: ser.ts(t.updatedAt),
    email_subject: t.emailSubject,
    edit_type: t.editType,
    design_template: t.designTemplate,
  };
}

export const BLANK_MAILER: MailerSettings = { from_name: '', from_email: '', reply_to_name: '', reply_to_email: '', is_custom: 'no' };

export function sequenceJson(ser: Serializer, s: SequenceRec, withStats: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: s.id,
    title: s.title,
    slug: s.slug,
    status: s.status,
    type: 'email_sequence',
    design_template: s.designTemplate,
    settings: { mailer_settings: { ...(s.mailer ?? BLANK_MAILER) } },
    created_by: ser.num(s.createdBy),
    created_at: ser.ts(s.createdAt),
    updated_at: ser.ts(s.updatedAt),
  };
  if (withStats) out.stats = { emails: s.emails.length, subscribers: s.subscriberIds.length, revenue: { amount: '0.00', currency: 'USD' } };
  return out;
}

export function sequenceEmailJson(s: SequenceRec, e: SequenceRec['emails'][number]): Record<string, unknown> {
  return {
    id: e.id,
    parent_id: String(s.id),
    type: 'sequence_mail',
    title: e.title,
    email_subject: e.subject,
    delay: String(e.delayDays * 1440),
    // Mailer settings a PUT of the sequence set are propagated to its emails (the interface).
    settings: { timings: { delay_unit: 'days', delay: String(e.delayDays) }, ...(s.mailer ? { mailer_settings: { ...s.mailer } } : {}) },
  };
}
