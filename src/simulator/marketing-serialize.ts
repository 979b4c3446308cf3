import type { CampaignRec, FunnelMetricRec, FunnelRec, FunnelStepRec, FunnelSubscriberRec, SequenceRec, TemplateRec } from './model.js';
import type { Serializer } from './serialize.js';
import { formatIsoZ } from './time.js';

/** Funnels use ISO 8601 UTC in the spec; fluentcrm-2.9 sends them zone-less like everything else. */
function funnelTs(ser: Serializer, ms: number | null): string | null {
  if (ms === null) return null;
  return ser.real ? ser.ts(ms) : formatIsoZ(ms);
}

export function campaignJson(ser: Serializer, c: CampaignRec, withStats = false): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: c.id,
    parent_id: null,
    type: 'campaign',
    title: c.title,
    slug: c.slug,
    status: c.status,
    template_id: null,
    email_subject: c.emailSubject,
    email_pre_header: c.emailPreHeader,
    email_body: c.emailBody,
    recipients_count: c.recipientsCount,
    delay: ser.real ? '0' : 0,
    design_template: c.designTemplate,
    scheduled_at: ser.ts(c.scheduledAt),
    settings: {
      mailer_settings: { from_name: '', from_email: '', reply_to_name: '', reply_to_email: '', is_custom: 'no' },
      subscribers: [{ list: 'all', tag: 'all' }],
      sending_filter: 'list_tag',
      sending_type: 'instant',
      is_transactional: 'no',
    },
    created_by: ser.num(c.createdBy),
    created_at: ser.ts(c.createdAt),
    updated_at: ser.ts(c.updatedAt),
  };
  if (withStats) {
    out.stats = { total: c.recipientsCount, sent: c.stats.sent, clicks: c.stats.clicked, views: c.stats.opened, unsubscribers: c.stats.unsubscribed };
  }
  out.labels = [];
  return out;
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
    settings: s.actionName === 'fluentcrm_wait_times' ? { wait_time_amount: String(s.delay / 86_400), wait_time_unit: 'days', tags: [] } : { tags: [] },
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
    conditions: ser.real ? { update_type: 'update', user_roles: [] } : { update_type: 'update' },
    settings: { subscription_status: 'subscribed' },
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
  const out: Record<string, unknown> = {
    id: s.id,
    funnel_id: ser.num(s.funnelId),
    subscriber_id: ser.num(s.subscriberId),
    last_sequence_id: ser.num(s.lastSequenceId),
    next_sequence_id: ser.num(s.nextSequenceId),
    status: s.status,
    type: 'funnel',
    next_execution_time: funnelTs(ser, s.nextExecutionTime),
    source_trigger_name: f.triggerName,
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

export function sequenceJson(ser: Serializer, s: SequenceRec, withStats: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: s.id,
    title: s.title,
    slug: s.slug,
    status: s.status,
    type: 'email_sequence',
    design_template: s.designTemplate,
    settings: { mailer_settings: { from_name: '', from_email: '', reply_to_name: '', reply_to_email: '', is_custom: 'no' } },
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
    settings: { timings: { delay_unit: 'days', delay: String(e.delayDays) } },
  };
}
