import type { EditedFunnel, EditedStep, SequenceSave, StepInput } from './funnel-editor.js';
import { waitSeconds } from './funnel-editor.js';
import type { FunnelRec, FunnelSubscriberRec } from './model.js';
import { seedFunnels } from './marketing-seed.js';
import { notFound, SimError } from './sim-error.js';
import type { SimState } from './state.js';

export const FUNNEL_STATUSES = ['published', 'draft', 'paused'] as const;

export const modelMissing = (model: string, what: string): SimError => notFound(what, { status: 404, body: { message: `No query results for model [FluentCrm\\App\\Models\\${model}].` } });

/** Automations (funnels), their subscribers and metrics; the base of Marketing. */
export class FunnelBook {
  readonly funnels = new Map<number, FunnelRec>();
  readonly funnelSubscribers = new Map<number, FunnelSubscriberRec>();
  #nextFunnel: number;
  #nextFunnelSubscriber: number;
  #nextStep: number;
  #nextMetric = 1_000_000;

  constructor(readonly state: SimState) {
    const store = state.contacts;
    const ids: number[] = [];
    for (let i = 0; i < store.size; i++) ids.push(store.idAt(i));
    const { funnels, subscribers } = seedFunnels(state.opts.seed, ids);
    for (const f of funnels) this.funnels.set(f.id, f);
    for (const s of subscribers) this.funnelSubscribers.set(s.id, s);
    this.#nextFunnel = this.funnels.size + 1;
    this.#nextFunnelSubscriber = subscribers.length + 1;
    this.#nextStep = funnels.reduce((n, f) => n + f.steps.length, 0) + 1;
  }

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

  /** The plugin's POST /funnels: a draft without steps, settings or conditions (POST_funnels). */
  createFunnel(title: string, triggerName: string, description: string): EditedFunnel {
    const now = this.state.now;
    const f: EditedFunnel = { id: this.#nextFunnel++, title, triggerName, status: 'draft', description, createdBy: 1, createdAt: now, updatedAt: now, steps: [], settings: [], conditions: [] };
    this.funnels.set(f.id, f);
    return f;
  }

  /**
   * The plugin's POST /funnels/{id}/sequences: the funnel's title, status, settings, conditions
   * and description, and its steps replaced by those sent, in order. A step sent with the id of
   * one of this funnel's steps is updated in place; steps not sent are deleted (runs that point
   * at them keep their ids, as the plugin's do). A step after a wait carries the wait as `delay`.
   */
  saveFunnelSequences(id: number, save: SequenceSave): FunnelRec {
    const f = this.funnel(id) as EditedFunnel;
    if (typeof save.status !== 'string' || !(FUNNEL_STATUSES as readonly string[]).includes(save.status)) {
      // Not captured (the plugin stores any value): the 422 of the simulator's other status change.
      throw new SimError(400, 'rest_invalid_param', 'Invalid parameter(s): status; use published, draft or paused.', { status: 422, body: { status: { in: 'The selected status is invalid.' } } });
    }
    const now = this.state.now;
    const old = new Map(f.steps.map((s) => [s.id, s]));
    const steps: EditedStep[] = [];
    const place = (input: StepInput, at: { parentId: number; conditionType: string; delay: number; cDelay: number }): EditedStep => {
      const prev = input.id === null ? undefined : old.get(input.id);
      if (prev) old.delete(prev.id);
      const step: EditedStep = {
        id: prev?.id ?? this.#nextStep++,
        funnelId: f.id,
        parentId: at.parentId,
        actionName: input.actionName,
        title: input.title,
        type: input.type,
        status: 'published',
        conditionType: at.conditionType,
        sequence: steps.length + 1,
        delay: at.delay,
        createdAt: prev?.createdAt ?? now,
        updatedAt: now,
        settings: input.settings,
        description: input.description,
        cDelay: at.cDelay,
      };
      steps.push(step);
      return step;
    };
    let delay = 0;
    let cDelay = 0;
    for (const input of save.steps) {
      const parent = place(input, { parentId: 0, conditionType: '', delay, cDelay });
      delay = input.actionName === 'fluentcrm_wait_times' ? waitSeconds(input.settings) : 0;
      cDelay += delay;
      for (const kind of ['yes', 'no'] as const) {
        let childDelay = 0;
        let childCDelay = 0;
        for (const child of input.children?.[kind] ?? []) {
          place(child, { parentId: parent.id, conditionType: kind, delay: parent.delay + childDelay, cDelay: parent.cDelay + childCDelay });
          childDelay = child.actionName === 'fluentcrm_wait_times' ? waitSeconds(child.settings) : 0;
          childCDelay += childDelay;
        }
      }
    }
    Object.assign(f, { title: save.title ?? f.title, status: save.status, description: save.description, settings: save.settings, conditions: save.conditions, steps, updatedAt: now });
    return f;
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
      throw new SimError(400, 'rest_missing_callback_param', 'Missing parameter(s): subscribers; send an array of contact ids.', {
        status: 422,
        body: { subscribers: { required: 'Subscribers are required' } },
      });
    }
    const contactIds = ids.map(Number);
    for (const id of contactIds) {
      if (!Number.isInteger(id) || !this.state.contact(id)) throw notFound('subscriber', { status: 422, body: { message: 'Subscriber not found' } });
      const existing = this.subscriberOf(funnelId, id);
      if (existing && existing.status === 'active') {
        throw new SimError(409, 'subscriber_already_exists', `Contact ${id} is already active in this automation; remove it first.`, {
          status: 409,
          body: { code: 'subscriber_already_exists', message: 'Subscriber already exists in this funnel', data: { status: 409 } },
        });
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
        id: this.#nextFunnelSubscriber++,
        funnelId,
        subscriberId: id,
        status: 'active',
        lastSequenceId: null,
        nextSequenceId: first?.id ?? null,
        nextExecutionTime: first ? now : null,
        createdAt: now,
        updatedAt: now,
        metrics: old ? old.metrics : [],
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
    s.metrics.push({
      id: this.#nextMetric++,
      funnelId,
      sequenceId: step.id,
      subscriberId: contactId,
      benchmarkValue: 0,
      benchmarkCurrency: 'USD',
      status: 'completed',
      notes: '',
      createdAt: now,
      updatedAt: now,
    });
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
}
