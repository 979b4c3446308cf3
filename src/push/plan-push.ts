import type { TaxonomyRef } from '../crm/types.js';
import { classifyRows } from './classify-rows.js';
import { draftRows, type DraftedRows } from './draft-rows.js';
import { ignoredColumns } from './map-source-row.js';
import type { PushCrm } from './push-crm.js';
import { PushLedger, type LedgerState } from '../warehouse/push-ledger-store.js';
import { PushPlanStore } from '../warehouse/push-plan-store.js';
import { emptyCounts, type ContactDraft, type PlannedRow, type PushCounts, type RowRejection, type SourceRow } from './push-types.js';
import { readSourceRows, type SourceLimits } from './read-source-rows.js';
import { collectMissing, resolveDrafts, type ResolvedRows } from './resolve-drafts.js';
import { parseSourceSpec } from './source-spec.js';
import type { WarehouseQuery } from '../warehouse/types.js';
import { TaxonomyIndex, type TaxonomyKind } from './taxonomy-index.js';

export interface PlanPushOptions {
  from: string;
  /** Names the ledger of this source instead of the relation name or query hash. */
  ledgerName?: string;
  runId: string;
  createMissing: boolean;
  /** Read and check only: nothing is created in the CRM and nothing is written to the ledger. */
  dryRun: boolean;
  /** Rows, and bytes a row and in all, the source may have (defaults: read-source-rows.ts). */
  sourceLimits?: Partial<SourceLimits>;
  sampleSize?: number;
}

export interface PushPlanSummary {
  runId: string;
  source: string;
  rowsRead: number;
  counts: PushCounts;
  /** Rows stored in the plan, numbered 0..toSend-1. */
  toSend: number;
  /** Tags and lists created (or, in a dry run, that would be created). */
  createdTags: string[];
  createdLists: string[];
  /** Source columns the push does not use. */
  ignoredColumns: string[];
  sample: Pick<PlannedRow, 'action' | 'rowNumber' | 'body'>[];
  rejectedSample: RowRejection[];
}

export interface PlanPushDeps {
  crm: PushCrm;
  db: WarehouseQuery;
  now?: () => Date;
}

/** Reads the source, checks every row, and stores what must be sent (see docs/push.md). */
export async function planPush(deps: PlanPushDeps, opts: PlanPushOptions): Promise<PushPlanSummary> {
  const now = deps.now ?? (() => new Date());
  const spec = parseSourceSpec(opts.from, opts.ledgerName);
  const rows = await readSourceRows(deps.db, spec, opts.sourceLimits);
  const ledger = new PushLedger(deps.db);
  const ledgerState = await ledger.read(spec.sourceId);
  // Rows identical to the source row of their last success need no check and no CRM call: a
  // push of an unchanged source sends no request at all.
  const { settledRows, rest } = splitSettled(rows, ledgerState);

  let drafted: DraftedRows = { drafts: [], rejections: [] };
  let createdTags: string[] = [];
  let createdLists: string[] = [];
  let resolved: ResolvedRows = { resolved: [], rejections: [] };
  if (rest.length > 0) {
    const fields = new Map((await deps.crm.listCustomFields()).map((f) => [f.slug, f]));
    drafted = draftRows(rest, fields);
    const tagIndex = await buildIndex(deps.crm, 'tag', drafted.drafts);
    const listIndex = await buildIndex(deps.crm, 'list', drafted.drafts);
    if (opts.createMissing) {
      createdTags = await createMissing(deps.crm, tagIndex, drafted.drafts, opts.dryRun);
      createdLists = await createMissing(deps.crm, listIndex, drafted.drafts, opts.dryRun);
    }
    resolved = resolveDrafts(drafted.drafts, tagIndex, listIndex);
  }
  const allRejections = [...drafted.rejections, ...resolved.rejections].sort((a, b) => a.rowNumber - b.rowNumber);
  const { planned, unchanged, settled } = classifyRows(resolved.resolved, ledgerState);
  const counts = emptyCounts();
  for (const row of planned) counts[row.action] += 1;
  counts.unchanged = settledRows + unchanged.length;
  counts.invalid = allRejections.length;

  if (!opts.dryRun) {
    const at = now();
    const plans = new PushPlanStore(deps.db);
    await plans.pruneStale(at);
    await ledger.pruneRejections(
      spec.sourceId,
      allRejections.map((r) => r.key),
      at,
    );
    await ledger.recordRejections(spec.sourceId, opts.runId, allRejections, at);
    await ledger.settle(spec.sourceId, settled, at);
    await plans.save(opts.runId, spec.sourceId, planned);
    await plans.startRun(opts.runId, spec.sourceId, rows.length, counts, at);
  }
  const sampleSize = opts.sampleSize ?? 5;
  return {
    runId: opts.runId,
    source: spec.sourceId,
    rowsRead: rows.length,
    counts,
    toSend: planned.length,
    createdTags,
    createdLists,
    ignoredColumns: ignoredColumns(rows[0]?.data),
    sample: planned.slice(0, sampleSize).map(({ action, rowNumber, body }) => ({ action, rowNumber, body })),
    rejectedSample: allRejections.slice(0, sampleSize),
  };
}

function splitSettled(rows: readonly SourceRow[], ledger: ReadonlyMap<string, LedgerState>): { settledRows: number; rest: SourceRow[] } {
  const keyOf = (r: SourceRow) => (r.data.email == null ? '' : String(r.data.email).trim().toLowerCase());
  const perKey = new Map<string, number>();
  for (const r of rows) perKey.set(keyOf(r), (perKey.get(keyOf(r)) ?? 0) + 1);
  const rest: SourceRow[] = [];
  let settledRows = 0;
  for (const r of rows) {
    const key = keyOf(r);
    const state = ledger.get(key);
    const settled = key !== '' && perKey.get(key) === 1 && state?.outcome === 'succeeded' && state.sourceFingerprint === r.sourceFingerprint;
    if (settled) settledRows++;
    else rest.push(r);
  }
  return { settledRows, rest };
}

async function buildIndex(crm: PushCrm, kind: TaxonomyKind, drafts: readonly ContactDraft[]): Promise<TaxonomyIndex> {
  const column = kind === 'tag' ? 'tags' : 'lists';
  // Only ask the CRM when some row names a tag (or list): a plain contact push costs no extra call.
  if (!drafts.some((d) => d[column].length > 0)) return new TaxonomyIndex(kind, []);
  return new TaxonomyIndex(kind, kind === 'tag' ? await crm.listTags() : await crm.listLists());
}

async function createMissing(crm: PushCrm, index: TaxonomyIndex, drafts: readonly ContactDraft[], dryRun: boolean): Promise<string[]> {
  const names = collectMissing(drafts, index, index.kind === 'tag' ? 'tags' : 'lists');
  let placeholder = -1;
  for (const title of names) {
    // A dry run resolves to placeholder ids: such rows are new or changed either way.
    const ref: TaxonomyRef = dryRun ? { id: placeholder--, title, slug: title } : index.kind === 'tag' ? await crm.createTag(title) : await crm.createList(title);
    index.add(ref);
  }
  return names;
}
