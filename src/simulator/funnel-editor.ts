import type { FunnelRec, FunnelStepRec } from './model.js';
import type { Serializer } from './serialize.js';
import { criticalError, type SimError } from './sim-error.js';

/**
 * A funnel created or saved through fluentcrm-2.9's editor routes keeps the trigger settings and
 * conditions it was given; model.ts's record has none (funnelJson shows fixed ones for the rest).
 */
export type EditedFunnel = FunnelRec & { settings: unknown; conditions: unknown };

/** A step saved through the editor keeps the settings and description it was sent, and its cumulative delay. */
export type EditedStep = FunnelStepRec & { settings: unknown; description: string | null; cDelay: number };

export interface StepInput {
  /** An existing step of the funnel to update in place; null creates one. */
  id: number | null;
  actionName: string;
  title: string;
  type: string;
  description: string | null;
  settings: unknown;
  /** A conditional step's branches. */
  children: { yes: StepInput[]; no: StepInput[] } | null;
}

/** POST /funnels/{id}/sequences as the plugin's FunnelHelper::saveFunnelSequence reads it. */
export interface SequenceSave {
  title: string | null;
  status: unknown;
  description: string;
  settings: unknown;
  conditions: unknown;
  steps: StepInput[];
}

/** The editor sends its JSON fields as JSON strings (POST_funnels_id_sequences); decoded values are taken too. */
function decode(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Not captured: a `sequences` payload the plugin cannot read makes it throw (PHP 8's json_decode
 * on a non-string, or its own refusal), which WordPress answers with its critical-error page, as
 * captured for per_page=0. The funnel is left as it was.
 */
const unreadable = (what: string): SimError => criticalError(`${what}; send sequences as a JSON array of steps with action_name.`);

function readSteps(raw: unknown): StepInput[] {
  return Array.isArray(raw) ? raw.map(readStep) : [];
}

function readStep(raw: unknown): StepInput {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw unreadable('A step is not an object');
  const s = raw as Record<string, unknown>;
  if (typeof s.action_name !== 'string' || s.action_name === '') throw unreadable('A step has no action_name');
  const id = Number(s.id);
  const type = typeof s.type === 'string' ? s.type : 'action';
  const branches = type === 'conditional' && s.children !== null && typeof s.children === 'object' ? (s.children as Record<string, unknown>) : null;
  return {
    id: Number.isInteger(id) && id > 0 ? id : null,
    actionName: s.action_name.slice(0, 190),
    title: typeof s.title === 'string' ? s.title.slice(0, 190) : '',
    type,
    description: typeof s.description === 'string' ? s.description : null,
    settings: s.settings ?? [],
    children: branches ? { yes: readSteps(branches.yes), no: readSteps(branches.no) } : null,
  };
}

export function readSequenceSave(body: Record<string, unknown>): SequenceSave {
  const steps = decode(body.sequences);
  if (!Array.isArray(steps)) throw unreadable('The sequences payload is missing or not a JSON array');
  const title = typeof body.funnel_title === 'string' ? body.funnel_title.trim().slice(0, 190) : '';
  return {
    title: title === '' ? null : title,
    status: body.status,
    // The plugin deletes the description when none is sent: GET_funnels_id shows "" after this save.
    description: typeof body.funnel_description === 'string' ? body.funnel_description : '',
    // Not captured: settings or conditions missing or undecodable are stored as a new funnel's `[]`.
    settings: decode(body.funnel_settings) ?? [],
    conditions: decode(body.conditions) ?? [],
    steps: steps.map(readStep),
  };
}

/** The plugin's FunnelHelper::getDelayInSecond: a wait step's length, at least one second. */
export function waitSeconds(settings: unknown): number {
  const s = (settings !== null && typeof settings === 'object' ? settings : {}) as Record<string, unknown>;
  if ((!s.wait_type && s.is_timestamp_wait === 'yes') || s.wait_type === 'timestamp_wait' || s.wait_type === 'to_day') return 1;
  const unit = s.wait_time_unit === 'hours' ? 3600 : s.wait_time_unit === 'minutes' ? 60 : 86_400;
  const delay = Math.trunc(Number(s.wait_time_amount) || 0) * unit;
  return delay >= 1 ? delay : 1;
}

/** A step's row as the plugin's save answers it (POST_funnels_id_sequences): its table columns, ids as strings. */
function savedStepJson(ser: Serializer, s: FunnelStepRec): Record<string, unknown> {
  const e = s as Partial<EditedStep>;
  const settings = e.settings ?? [];
  return {
    id: s.id,
    funnel_id: String(s.funnelId),
    parent_id: String(s.parentId),
    action_name: s.actionName,
    condition_type: s.parentId ? s.conditionType : null,
    type: s.type,
    title: s.title,
    description: e.description ?? null,
    status: s.status,
    conditions: [],
    // The plugin's editor view gives a benchmark `can_enter: yes` when it has none.
    settings: s.type === 'benchmark' && settings !== null && typeof settings === 'object' && !Array.isArray(settings) ? { can_enter: 'yes', ...settings } : settings,
    note: null,
    delay: String(s.delay),
    c_delay: String(e.cDelay ?? s.delay),
    sequence: String(s.sequence),
    created_by: '1',
    created_at: ser.ts(s.createdAt),
    updated_at: ser.ts(s.updatedAt),
  };
}

/** The saved steps as the answer lists them: top-level steps in order, a conditional one with its branches under `children`. */
export function savedSequencesJson(ser: Serializer, steps: readonly FunnelStepRec[]): Record<string, unknown>[] {
  return steps
    .filter((s) => !s.parentId)
    .map((s) => {
      const row = savedStepJson(ser, s);
      if (s.type !== 'conditional') return row;
      const branch = (kind: string): Record<string, unknown>[] => steps.filter((c) => c.parentId === s.id && c.conditionType === kind).map((c) => savedStepJson(ser, c));
      return { ...row, children: { yes: branch('yes'), no: branch('no') } };
    });
}
