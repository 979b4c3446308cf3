import pLimit from 'p-limit';
import { createTimestampNormalizer } from '../crm/timestamps.js';
import type { Campaign, Contact, Funnel, FunnelSubscriber } from '../crm/types.js';
import { CrmsyncError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ContactEventMark } from '../warehouse/commit-webhook-batch.js';
import type { WarehouseHandle } from '../warehouse/duckdb-warehouse.js';
import type { Warehouse } from '../warehouse/types.js';
import { deadLetterOf } from './dead-letter-of.js';
import type { DeadLetter } from '../warehouse/webhook-dead-letters.js';
import { WebhookApplyError } from './errors.js';
import { parseSpoolRecord, type ParsedEvent } from './event-payload.js';
import { commerceEventRow, emailEventRow, webhookEventRow } from './event-rows.js';
import type { WebhookRefetcher } from './refetcher.js';
import type { SpoolRecord } from './spool-frame.js';

/** The warehouse as the applier uses it: the shared contract plus its own tables' named operations. */
export type ApplierWarehouse = Pick<Warehouse, 'loadContacts' | 'tombstoneContacts' | 'loadEntities' | 'loadFunnelSubscribers'> & Pick<WarehouseHandle, 'webhooks'>;

export interface ApplyBatchDeps {
  spoolId: string;
  refetcher: WebhookRefetcher;
  withWarehouse: <T>(fn: (w: ApplierWarehouse) => Promise<T>) => Promise<T>;
  /**
   * Per contact, when its last applied refetch started (our clock; Infinity once deleted), kept
   * across batches to skip refetches for late deliveries.
   */
  lastApplied: Map<number, number>;
  concurrency: number;
  /**
   * Re-applying dead letters: the spool offset is neither checked nor moved, and the deliveries'
   * earlier `webhook_events` rows are replaced.
   */
  replay?: boolean;
  /** The site's zone (CRM_TIMEZONE), for zone-less timestamps in payloads; default UTC. */
  siteTimeZone?: string;
  logger?: Logger;
  now?: () => number;
}

export interface ApplyBatchResult {
  appliedSeq: number;
  events: number;
  contactsLoaded: number;
  contactsTombstoned: number;
  refetches: number;
  skippedLate: number;
  failed: number;
  /** Delivery ids of this batch that failed (recorded as dead letters). */
  failedIds: string[];
  /** Time spent refetching, and inside the warehouse scope (open to close). */
  fetchMs: number;
  writeMs: number;
}

const STATUS_EVENTS = new Set(['email.bounced', 'email.spam_complaint', 'email.unsubscribed']);
const LATE_MARGIN_MS = 5_000;
/**
 * Refetch failures that concern one record (its data, a server exception on it, a 404 on its
 * route, which the real CRM answers for ids its route pattern refuses). Anything else
 * (credentials, permissions, the CRM down or rate limiting) concerns every record: the batch waits
 * and retries rather than marking events failed.
 */
const RECORD_ERRORS = new Set(['CRM_VALIDATION', 'CRM_SERVER_EXCEPTION', 'CRM_BAD_RESPONSE', 'CRM_UNEXPECTED_STATUS', 'CRM_NOT_FOUND']);

interface ContactPlan {
  newest: number;
  newestDelivery: string;
  deletedAt: number | null;
  fetch: boolean;
}

/**
 * Applies one batch of spooled deliveries. Refetches run before the warehouse is opened (the
 * write lock is not held during HTTP), coalesced to one request per record and bounded in
 * concurrency (the client's rate limiter paces them). Contact loads are idempotent and the batch's
 * own rows and offset commit together, so a crash anywhere re-applies the batch without effect.
 */
export async function applyBatch(records: readonly SpoolRecord[], deps: ApplyBatchDeps): Promise<ApplyBatchResult> {
  const now = deps.now ?? Date.now;
  const siteTime = createTimestampNormalizer(deps.siteTimeZone ?? 'UTC');
  const started = performance.now();
  const events = records.map(parseSpoolRecord);
  const contacts = new Map<number, ContactPlan>();
  const campaignIds = new Set<number>();
  const funnelIds = new Set<number>();
  // funnel id -> contact ids whose funnel-subscriber row changed.
  const funnelSubs = new Map<number, Set<number>>();
  const eventErrors = new Map<ParsedEvent, string>();

  const touch = (e: ParsedEvent, id: number, fetch: boolean, deleted: boolean): void => {
    const t = e.eventAt.getTime();
    const p = contacts.get(id) ?? { newest: -Infinity, newestDelivery: '', deletedAt: null, fetch: false };
    if (t >= p.newest) {
      p.newest = t;
      p.newestDelivery = e.record.deliveryId;
    }
    if (deleted) p.deletedAt = Math.max(p.deletedAt ?? -Infinity, t);
    p.fetch ||= fetch;
    contacts.set(id, p);
  };

  for (const e of events) {
    if (e.problem || !e.record.known) continue;
    const name = e.record.event;
    if (e.group === 'contact') {
      if (e.contactId === null) eventErrors.set(e, 'no contact id in data.contact');
      else touch(e, e.contactId, name !== 'contact.deleted', name === 'contact.deleted');
    } else if (e.group === 'email' || e.group === 'commerce') {
      // Status-changing email events and purchases (lifetime value) change the contact too.
      if (e.contactId !== null && (e.group === 'commerce' || STATUS_EVENTS.has(name))) touch(e, e.contactId, true, false);
    } else if (e.group === 'campaign') {
      if (e.campaignId === null) eventErrors.set(e, 'no campaign id in data');
      else campaignIds.add(e.campaignId);
    } else if (e.group === 'funnel') {
      if (e.funnelId === null) eventErrors.set(e, 'no funnel id in data');
      else {
        funnelIds.add(e.funnelId);
        if (e.contactId !== null) funnelSubs.set(e.funnelId, (funnelSubs.get(e.funnelId) ?? new Set()).add(e.contactId));
      }
    }
  }

  // Late deliveries (the CRM retries after a minute or more): a refetch that started well after
  // every event of this batch happened already holds their effect. Comparing with our fetch time,
  // not with other events' timestamps, keeps one event stamped in the future (a clock or zone
  // error) from hiding later changes; the margin covers whole-second timestamps and clock skew.
  let skippedLate = 0;
  const toFetch: number[] = [];
  for (const [id, p] of contacts) {
    if (!p.fetch || p.deletedAt !== null) continue;
    const fetchedAt = deps.lastApplied.get(id);
    if (fetchedAt !== undefined && fetchedAt - LATE_MARGIN_MS > p.newest) skippedLate++;
    else toFetch.push(id);
  }
  const fetchStarted = now();

  const limit = pLimit(Math.max(1, deps.concurrency));
  const fetchAll = async <T>(ids: Iterable<number>, get: (id: number) => Promise<T | null>) => {
    const out = new Map<number, T | null | CrmsyncError>();
    await Promise.all(
      [...ids].map((id) =>
        limit(async () => {
          try {
            out.set(id, await get(id));
          } catch (err) {
            if (err instanceof CrmsyncError && !err.retryable && RECORD_ERRORS.has(err.code)) out.set(id, err);
            else {
              const e = err as { code?: string; retryAfterMs?: number };
              throw new WebhookApplyError(`Refetching record ${id} failed (${e.code ?? 'error'}); the batch will be retried.`, {
                cause: err,
                retryable: true,
                ...(e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {}),
              });
            }
          }
        }),
      ),
    );
    return out;
  };
  const fetchedContacts = await fetchAll<Contact>(toFetch, (id) => deps.refetcher.contact(id));
  const fetchedCampaigns = await fetchAll<Campaign>(campaignIds, (id) => deps.refetcher.campaign(id));
  const fetchedFunnels = await fetchAll<Funnel>(funnelIds, (id) => deps.refetcher.funnel(id));
  const subKeys = [...funnelSubs].flatMap(([f, cs]) => [...cs].map((c) => ({ f, c })));
  const fetchedSubs = await fetchAll<FunnelSubscriber>(subKeys.keys(), (i) => deps.refetcher.funnelSubscriber(subKeys[i]!.f, subKeys[i]!.c));

  const fetchError = (e: ParsedEvent): string | null => {
    const r =
      e.group === 'campaign' ? fetchedCampaigns.get(e.campaignId!) : e.group === 'funnel' ? fetchedFunnels.get(e.funnelId!) : e.contactId !== null ? fetchedContacts.get(e.contactId) : undefined;
    return r instanceof CrmsyncError ? `${r.code}: refetch failed` : null;
  };

  const fetchMs = Math.round(performance.now() - started);
  const lastSeq = records.at(-1)!.seq;
  const loadId = `webhooks-${deps.spoolId.slice(0, 8)}-${records[0]!.seq}-${lastSeq}`;
  const syncedAt = new Date(now());

  const scopeStarted = performance.now();
  const result = await deps.withWarehouse(async (w) => {
    const result: ApplyBatchResult = {
      appliedSeq: lastSeq,
      events: events.length,
      contactsLoaded: 0,
      contactsTombstoned: 0,
      refetches: toFetch.length + campaignIds.size + funnelIds.size + subKeys.length,
      skippedLate,
      failed: 0,
      failedIds: [],
      fetchMs,
      writeMs: 0,
    };
    if (!deps.replay && (await w.webhooks.appliedSeq(deps.spoolId)) >= lastSeq) return { ...result, events: 0 };

    const fresh: Contact[] = [];
    const gone: number[] = [];
    const ids = [...fetchedContacts.keys()];
    const versions = await w.webhooks.contactVersions(ids);
    for (const [id, c] of fetchedContacts) {
      if (c instanceof CrmsyncError) continue;
      if (c === null) {
        gone.push(id);
        continue;
      }
      // Never load a fetch older than what the warehouse holds (a sync may have loaded a newer one).
      const held = versions.get(id);
      const fetchedAt = c.updated_at ? Date.parse(c.updated_at) : NaN;
      if (held != null && Number.isFinite(fetchedAt) && fetchedAt < held) continue;
      fresh.push(c);
    }
    const ctx = { loadId, syncedAt };
    if (fresh.length) {
      await w.loadContacts(fresh, ctx);
      result.contactsLoaded = fresh.length;
    }
    let deletedAt = -Infinity;
    const deletedIds: number[] = [];
    for (const [id, p] of contacts) {
      if (p.deletedAt === null) continue;
      deletedIds.push(id);
      deletedAt = Math.max(deletedAt, p.deletedAt);
    }
    if (deletedIds.length) result.contactsTombstoned += await w.tombstoneContacts(deletedIds, { ...ctx, deletedAt: new Date(deletedAt) });
    if (gone.length) result.contactsTombstoned += await w.tombstoneContacts(gone, { ...ctx, deletedAt: syncedAt });

    const campaigns = [...fetchedCampaigns.values()].filter((c): c is Campaign => c !== null && !(c instanceof CrmsyncError));
    // A by-id read has no listing's stats or subscriber count: the synced ones stay until the next sync.
    if (campaigns.length) await w.loadEntities('campaigns', campaigns, ctx, { complete: false, keepHeld: ['stats'] });
    const funnels = [...fetchedFunnels.values()].filter((f): f is Funnel => f !== null && !(f instanceof CrmsyncError));
    if (funnels.length) await w.loadEntities('funnels', funnels, ctx, { complete: false, keepHeld: ['subscribers_count'] });
    const subsByFunnel = new Map<number, FunnelSubscriber[]>();
    for (const [i, s] of fetchedSubs) {
      if (s === null || s instanceof CrmsyncError) continue;
      const f = subKeys[i]!.f;
      subsByFunnel.set(f, [...(subsByFunnel.get(f) ?? []), s]);
    }
    for (const [f, rows] of subsByFunnel) await w.loadFunnelSubscribers(f, rows, ctx, { complete: false });

    // The upsert keeps the newest event per contact, whichever order batches arrive in.
    const contactMarks: ContactEventMark[] = [];
    for (const [id, p] of contacts) {
      contactMarks.push({
        contact_id: id,
        last_event_at: new Date(p.newest).toISOString(),
        last_delivery_id: p.newestDelivery,
        deleted_event_at: p.deletedAt === null ? null : new Date(p.deletedAt).toISOString(),
      });
    }

    const deadLetters: DeadLetter[] = [];
    const webhookEvents = events.map((e) => {
      const err = eventErrors.get(e) ?? fetchError(e);
      if (err || e.problem) {
        result.failed++;
        result.failedIds.push(e.record.deliveryId);
        deadLetters.push(deadLetterOf(e.record, e.problem ? 'unreadable' : 'record_error', (err ?? e.problem)!));
      }
      return webhookEventRow(e, err, syncedAt);
    });
    await w.webhooks.commitBatch({
      spoolId: deps.spoolId,
      appliedSeq: deps.replay ? null : lastSeq,
      replaceEvents: deps.replay === true,
      deadLetters,
      loadId,
      syncedAt,
      webhookEvents,
      emailEvents: events.filter((e) => e.group === 'email' && e.envelope).map((e) => emailEventRow(e, siteTime)),
      commerceEvents: events.filter((e) => e.group === 'commerce' && e.envelope).map(commerceEventRow),
      contactMarks,
    });
    for (const id of fetchedContacts.keys()) deps.lastApplied.set(id, Math.max(fetchStarted, deps.lastApplied.get(id) ?? -Infinity));
    // Ids are never reused: after a delete, any later delivery for the contact is stale.
    for (const [id, p] of contacts) if (p.deletedAt !== null) deps.lastApplied.set(id, Infinity);
    if (deps.lastApplied.size > 200_000) {
      // Bounded: dropping old entries only costs a refetch for a late delivery.
      let drop = deps.lastApplied.size - 150_000;
      for (const id of deps.lastApplied.keys()) {
        if (drop-- <= 0) break;
        deps.lastApplied.delete(id);
      }
    }
    if (result.failed) deps.logger?.warn({ failed: result.failed, loadId }, 'some webhook events could not be applied; see webhook_events.error');
    return result;
  });
  return { ...result, writeMs: Math.round(performance.now() - scopeStarted) };
}
