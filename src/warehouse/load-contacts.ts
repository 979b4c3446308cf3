import type { DuckDBConnection } from '@duckdb/node-api';
import type { Contact } from '../crm/types.js';
import { CONTACT_BUCKET_SIZE, CONTACT_COLUMNS, CONTACT_FIELD_NAMES } from './contact-columns.js';
import { WarehouseInputError } from './errors.js';
import { quoteIdent, quoteLiteral } from './quote.js';
import { contactRawSql, contactRowSelectSql, encodeContactRaw, encodeContactRow } from './contact-rows.js';
import { fingerprintExpr, timestampLiteral } from './sql-expr.js';
import { stageColumns } from './stage-columns.js';
import { inTransaction, readCount, readRows } from './sql-run.js';
import type { LoadContext, LoadStats } from './types.js';

export const MAX_CONTACTS_PER_LOAD = 500_000;
export const MAX_DOC_BYTES = 1 << 20;

export interface LoadContactsOptions {
  siteTimeZone: string;
}

/**
 * Stages the contacts (one delimited text row each, and raw in a column of its own, through the
 * appender) and types and fingerprints them in SQL, in one transaction. When every id is above
 * the highest held (a backfill, or new signups: the sync's usual case) every row is new, so
 * nothing is diffed: the typed stage is appended to `contacts`, `contact_tags` and `contact_lists`
 * in one batch of statements.
 * Otherwise the contacts are staged without raw, diffed against `contacts`, and only new or
 * changed ones get their raw record serialized and written (new ones appended, changed ones
 * updated in place), with their `contacts_history` versions closed and opened (a changed contact's
 * previous version copied to `_contacts_history_closed`; a version is open on `contacts` itself,
 * its `_valid_from`) and their tag and list memberships replaced. A tombstoned contact that
 * reappears is live again. Batches of a row group or more (the writer's 61,440 rows) are written
 * straight to the file, not the WAL: much faster (bench/results/notes.md, "a row group per
 * transaction").
 */
export async function loadContacts(connection: DuckDBConnection, contacts: readonly Contact[], ctx: LoadContext, opts: LoadContactsOptions): Promise<LoadStats> {
  const unique = latestById(contacts);
  if (unique.length === 0) return { inserted: 0, updated: 0, unchanged: 0, deleted: 0 };
  const lowest = unique.reduce((m, c) => Math.min(m, c.id), Infinity);
  if (!(await holdsIdFrom(connection, lowest))) {
    await stageColumns(connection, '_stage_contact_docs', ['doc', 'raw'], unique, (c) => sizeCheckedPair(c.id, encodeContactRow(c), encodeContactRaw(c)));
    await inTransaction(connection, async () => {
      await connection.run(`CREATE OR REPLACE TEMP TABLE _stage_contacts AS ${typedSelectSql(opts.siteTimeZone, true)}; DROP TABLE _stage_contact_docs`);
      await appendStagedContacts(connection, ctx, new Set(unique.map((c) => Math.floor(c.id / CONTACT_BUCKET_SIZE))));
    });
    return { inserted: unique.length, updated: 0, unchanged: 0, deleted: 0 };
  }
  await stageColumns(connection, '_stage_contact_docs', ['doc'], unique, (c) => [sizeChecked(c.id, encodeContactRow(c))]);
  await connection.run(`CREATE OR REPLACE TEMP TABLE _stage_contacts AS ${typedSelectSql(opts.siteTimeZone, false)};
    DROP TABLE _stage_contact_docs`);
  return inTransaction(connection, () => mergeStagedContacts(connection, unique.length, ctx, async (allNew) => stageRaw(connection, allNew ? unique : await changedOnly(connection, unique))));
}

/**
 * Whether `contacts` holds an id at or above `minId`: when not, every id of a load from `minId` up
 * is new and the load appends. Filtered this way DuckDB skips each row group whose ids all lie
 * below `minId` (its zonemap), so a backfill reads none, where `max(id)` read all of them before
 * every load (bench/results/notes.md, "max(id)").
 */
export async function holdsIdFrom(connection: DuckDBConnection, minId: number): Promise<boolean> {
  return (await readCount(connection, 'SELECT count(*) FROM (SELECT 1 FROM contacts WHERE id >= $1 LIMIT 1)', [minId])) > 0;
}

/**
 * The typed rows a load writes from (`id`, the contact columns, `_fingerprint`, `raw`): a temp
 * table of this connection, which the load drops, or a table of another catalog of the instance
 * (typed aside), which a transaction that writes the file may read but not drop.
 */
export interface Stage {
  readonly table: string;
  readonly temp: boolean;
}

const STAGE: Stage = { table: '_stage_contacts', temp: true };

/**
 * Every row new: appends the typed stage (with `raw`) to `contacts`, `contact_tags` and
 * `contact_lists`, in one batch of statements, and marks the lake `parts` (id ranges) dirty.
 */
export async function appendStagedContacts(connection: DuckDBConnection, ctx: LoadContext, parts: ReadonlySet<number>, stage: Stage = STAGE): Promise<void> {
  const load = quoteLiteral(ctx.loadId);
  const at = timestampLiteral(ctx.syncedAt);
  const cols = [...CONTACT_FIELD_NAMES, 'raw', '_fingerprint'].map(quoteIdent).join(', ');
  // The new versions' history rows are these contacts rows themselves (contacts_history is a view).
  await connection.run(`INSERT INTO contacts (${cols}, _load_id, _synced_at, _deleted_at, _valid_from)
      SELECT ${cols}, ${load}, ${at}, NULL, ${firstVersionStart('', at)} FROM ${stage.table};
    INSERT INTO contact_tags SELECT id, unnest(tag_ids), ${load}, ${at} FROM ${stage.table};
    INSERT INTO contact_lists SELECT id, unnest(list_ids), ${load}, ${at} FROM ${stage.table};
    ${stage.temp ? `DROP TABLE ${stage.table};` : ''}
    ${markPartsDirtySql(parts)}`);
}

/**
 * Diffs the typed stage (`total` rows, unique ids) against `contacts` and writes
 * the new and changed rows. `raw`: `'in-stage'` when the stage holds each row's `raw` already (a
 * page load: DuckDB parsed it, so it is not copied again); else a function that stages
 * `_stage_contact_raw (id, raw)` for every staged row when all are new, else for the ids in
 * `_stage_contacts_keys` (only changed rows get their raw record serialized).
 */
export async function mergeStagedContacts(
  connection: DuckDBConnection,
  total: number,
  ctx: LoadContext,
  raw: 'in-stage' | ((allNew: boolean) => Promise<void>),
  stage: Stage = STAGE,
): Promise<LoadStats> {
  const staged = stage.table;
  await connection.run(diffKeysSql(staged, ctx.loadId));
  // One read for the counts and the parts (with every id new, the stage's): a statement costs a few ms of every load.
  const keys = (
    await readRows(
      connection,
      `SELECT count(*) FILTER (WHERE _is_new) AS inserted, count(*) AS changed, coalesce(list(DISTINCT id // ${CONTACT_BUCKET_SIZE}), []) AS parts,
        (SELECT count(*) FROM _stage_contacts_match WHERE _again) AS again FROM _stage_contacts_keys`,
    )
  )[0]!;
  const [inserted, changed, again] = [Number(keys.inserted), Number(keys.changed), Number(keys.again)];
  if (changed > 0) {
    const allNew = inserted === total;
    if (allNew && raw === 'in-stage') {
      // Every id new though not above the highest held (parallel ranges of a backfill land out of
      // order): the append's one batch of statements, as when every id is above it.
      await appendStagedContacts(connection, ctx, new Set((keys.parts as unknown[]).map(Number)), stage);
    } else if (raw === 'in-stage') {
      await connection.run(`CREATE OR REPLACE TEMP TABLE _stage_contacts_diff AS SELECT s.*, k._is_new FROM _stage_contacts_keys k JOIN ${staged} s ON s.id = k.id`);
      await applyDiff(connection, { typed: '_stage_contacts_diff', withRaw: '_stage_contacts_diff' }, ctx, changed - inserted);
    } else if (allNew) {
      await raw(true);
      // Views, not copies; only the contacts insert needs raw, so only it pays for the join.
      await connection.run(`CREATE OR REPLACE TEMP VIEW _stage_contacts_all_new AS SELECT *, TRUE AS _is_new FROM ${staged};
        CREATE OR REPLACE TEMP VIEW _stage_contacts_all_new_raw AS SELECT s.*, r.raw FROM _stage_contacts_all_new s JOIN _stage_contact_raw r ON r.id = s.id`);
      await applyDiff(connection, { typed: '_stage_contacts_all_new', withRaw: '_stage_contacts_all_new_raw' }, ctx, 0);
    } else {
      await raw(false);
      await connection.run(`CREATE OR REPLACE TEMP TABLE _stage_contacts_diff AS SELECT s.*, r.raw, k._is_new FROM _stage_contacts_keys k
        JOIN ${staged} s ON s.id = k.id JOIN _stage_contact_raw r ON r.id = s.id`);
      await applyDiff(connection, { typed: '_stage_contacts_diff', withRaw: '_stage_contacts_diff' }, ctx, changed - inserted);
    }
  }
  await connection.run(`DROP VIEW IF EXISTS _stage_contacts_all_new_raw; DROP VIEW IF EXISTS _stage_contacts_all_new; DROP TABLE IF EXISTS _stage_contacts_diff; DROP TABLE IF EXISTS _stage_contacts_keys; DROP TABLE IF EXISTS _stage_contacts_match;
    ${stage.temp ? `DROP TABLE IF EXISTS ${staged};` : ''} DROP TABLE IF EXISTS _stage_contact_raw`);
  // A contact this run already wrote, read again unchanged (the new-contacts check or a sweep
  // slice after the updated-first scan), was counted then: each contact counts once.
  return { inserted, updated: changed - inserted, unchanged: total - changed - again, deleted: 0 };
}

function latestById(contacts: readonly Contact[]): Contact[] {
  if (contacts.length > MAX_CONTACTS_PER_LOAD) {
    throw new WarehouseInputError(`loadContacts got ${contacts.length} contacts; load at most ${MAX_CONTACTS_PER_LOAD} per call (split the batch).`);
  }
  // Last occurrence wins: a page re-read within one batch carries the newer state.
  const byId = new Map<number, Contact>();
  for (const c of contacts) {
    if (!Number.isSafeInteger(c.id) || c.id <= 0) throw new WarehouseInputError(`Contact id ${String(c.id)} is not a positive integer; the client must normalize ids.`);
    byId.delete(c.id);
    byId.set(c.id, c);
  }
  return [...byId.values()];
}

function sizeChecked(id: number, text: string): string {
  if (text.length > MAX_DOC_BYTES) throw new WarehouseInputError(`Contact ${id} is ${text.length} bytes serialized; the limit is ${MAX_DOC_BYTES}.`);
  return text;
}

function sizeCheckedPair(id: number, row: string, raw: string | null): [string, string | null] {
  sizeChecked(id, raw === null ? row : row + raw);
  return [row, raw];
}

async function changedOnly(connection: DuckDBConnection, unique: readonly Contact[]): Promise<Contact[]> {
  const reader = await connection.runAndReadAll('SELECT id FROM _stage_contacts_keys');
  const ids = new Set(reader.getColumns()[0]!.map((v) => Number(v)));
  return unique.filter((c) => ids.has(c.id));
}

async function stageRaw(connection: DuckDBConnection, contacts: readonly Contact[]): Promise<void> {
  await stageColumns(connection, '_stage_contact_raw_docs', ['id', 'raw'], contacts, (c) => sizeCheckedPair(c.id, String(c.id), encodeContactRaw(c)));
  await connection.run(`CREATE OR REPLACE TEMP TABLE _stage_contact_raw AS
      SELECT CAST(id AS BIGINT) AS id, ${contactRawSql('raw')} AS raw FROM _stage_contact_raw_docs;
    DROP TABLE _stage_contact_raw_docs`);
}

// The staged rows typed and fingerprinted (and with raw as JSON when staged with it).
function typedSelectSql(siteTimeZone: string, withRaw: boolean): string {
  return `SELECT *, ${fingerprintExpr(CONTACT_COLUMNS)} AS _fingerprint FROM (
      SELECT ${contactRowSelectSql('f', siteTimeZone)}${withRaw ? `, ${contactRawSql('raw')} AS raw` : ''}
      FROM (SELECT string_split(doc, chr(31)) AS f${withRaw ? ', raw' : ''} FROM _stage_contact_docs)
    )`;
}

// Ids of new, changed or tombstoned-and-back rows.
/**
 * `_stage_contacts_keys`: the staged ids that are new or changed. `_stage_contacts_match` marks
 * each staged row `_again` when it is unchanged and its current version was written by this same
 * load id (the run counted it when it wrote it). One join of the stage with `contacts` for both.
 */
function diffKeysSql(staged: string, loadId: string): string {
  const changed = 'c.id IS NULL OR c._fingerprint <> s._fingerprint OR c._deleted_at IS NOT NULL';
  return `CREATE OR REPLACE TEMP TABLE _stage_contacts_match AS
    SELECT s.id, c.id IS NULL AS _is_new, ${changed} AS _changed, NOT (${changed}) AND c._load_id = ${quoteLiteral(loadId)} AS _again
    FROM ${staged} s LEFT JOIN contacts c ON c.id = s.id;
    CREATE OR REPLACE TEMP TABLE _stage_contacts_keys AS SELECT id, _is_new FROM _stage_contacts_match WHERE _changed`;
}

/**
 * Start of a contact's first version: when the CRM says it began (updated_at, else created_at),
 * but never after the load `at` that saw it (`least` skips a NULL: `at` when the CRM gave neither).
 */
function firstVersionStart(prefix: string, at: string): string {
  return `least(coalesce(${prefix}updated_at, ${prefix}created_at), ${at})`;
}

// Start of the new history version of each changed (not new) contact: when the CRM says this
// state began (updated_at), unless that is not after the previous version (e.g. a tag change
// that did not bump updated_at): then when we saw it. Never after the load that saw it: a CRM
// whose clock runs ahead would otherwise date versions in the future, and contacts_as_of(now())
// right after the sync would miss them. Only the changed ids touch the history
// (through the view: the closed versions' table and the open version on contacts).
function versionStartSql(diff: string, ctx: LoadContext): string {
  const at = timestampLiteral(ctx.syncedAt);
  return `CREATE OR REPLACE TEMP TABLE _stage_contacts_prev AS
    SELECT d.id, CASE WHEN h.last_from IS NULL THEN ${firstVersionStart('d.', at)}
        WHEN coalesce(d.updated_at, d.created_at) > h.last_from THEN greatest(least(d.updated_at, ${at}), h.last_from)
        ELSE greatest(${at}, h.last_from) END AS _valid_from
    FROM ${quoteIdent(diff)} d
    LEFT JOIN (
      SELECT id, max(coalesce(valid_to, valid_from)) AS last_from FROM contacts_history
      WHERE id IN (SELECT id FROM _stage_contacts_keys WHERE NOT _is_new) GROUP BY id
    ) h ON h.id = d.id
    WHERE NOT d._is_new`;
}

/**
 * `typed`: the new or changed rows with `_is_new`; `withRaw`: the same with `raw`. A changed live
 * contact's previous version is copied from `contacts` to `_contacts_history_closed` before the
 * row is updated; the new version is the updated row (its `_valid_from`), and a new contact's the
 * appended one: `contacts_history` is a view over both (sql/100_contacts_history_view.sql).
 */
async function applyDiff(connection: DuckDBConnection, diff: { typed: string; withRaw: string }, ctx: LoadContext, updated: number): Promise<void> {
  const load = quoteLiteral(ctx.loadId);
  const at = timestampLiteral(ctx.syncedAt);
  const cols = [...CONTACT_FIELD_NAMES, 'raw', '_fingerprint'].map(quoteIdent);
  const d = quoteIdent(diff.typed);
  const r = quoteIdent(diff.withRaw);
  if (updated > 0) {
    await connection.run(versionStartSql(diff.typed, ctx));
    await connection.run(closeOpenVersionsSql('_stage_contacts_prev', 'greatest(c._valid_from, p._valid_from)'));
    await connection.run(`UPDATE contacts SET ${cols
      .filter((c) => c !== quoteIdent('id'))
      .map((c) => `${c} = d.${c}`)
      .join(', ')}, _load_id = ${load}, _synced_at = ${at}, _deleted_at = NULL, _valid_from = d._new_from
      FROM (SELECT r.*, coalesce(p._valid_from, r.updated_at, r.created_at, ${at}) AS _new_from FROM ${r} r JOIN _stage_contacts_prev p ON p.id = r.id) d
      WHERE contacts.id = d.id`);
    await connection.run(`DELETE FROM contact_tags WHERE contact_id IN (SELECT id FROM _stage_contacts_prev)`);
    await connection.run(`DELETE FROM contact_lists WHERE contact_id IN (SELECT id FROM _stage_contacts_prev)`);
  }
  // New contacts are plain appends: cheaper than a MERGE over the whole table.
  await connection.run(`INSERT INTO contacts (${cols.join(', ')}, _load_id, _synced_at, _deleted_at, _valid_from)
    SELECT ${cols.join(', ')}, ${load}, ${at}, NULL, ${firstVersionStart('', at)} FROM ${r} WHERE _is_new`);
  await connection.run(`INSERT INTO contact_tags SELECT id, unnest(tag_ids), ${load}, ${at} FROM ${d}`);
  await connection.run(`INSERT INTO contact_lists SELECT id, unnest(list_ids), ${load}, ${at} FROM ${d}`);
  await markContactBucketsDirty(connection, diff.typed);
  await connection.run('DROP TABLE IF EXISTS _stage_contacts_prev');
}

/**
 * Copies the open version of the live contacts whose ids `ids` (a table with `id`, as `p`) holds
 * from `contacts` (as `c`) to `_contacts_history_closed`, closed at `validTo`: before `contacts`
 * is overwritten, which would lose it (its typed columns, `_valid_from`, `_load_id`, `_synced_at`).
 */
export function closeOpenVersionsSql(ids: string, validTo: string): string {
  const hist = [...CONTACT_FIELD_NAMES, '_fingerprint'].map(quoteIdent);
  return `INSERT INTO _contacts_history_closed (${hist.join(', ')}, valid_from, valid_to, _load_id, _synced_at)
    SELECT ${hist.map((c) => `c.${c}`).join(', ')}, c._valid_from, ${validTo}, c._load_id, c._synced_at
    FROM contacts c JOIN ${quoteIdent(ids)} p ON p.id = c.id
    WHERE c._deleted_at IS NULL AND c._valid_from IS NOT NULL`;
}

/** SQL recording the given lake partitions (id ranges, see CONTACT_BUCKET_SIZE) of the four contact tables as dirty. */
function markPartsDirtySql(parts: ReadonlySet<number>): string {
  return `INSERT OR IGNORE INTO _lake_dirty
    SELECT t.name, b.part FROM (VALUES ${[...parts].map((p) => `('${p}')`).join(', ')}) b(part)
    CROSS JOIN (VALUES ('contacts'), ('contacts_history'), ('contact_tags'), ('contact_lists')) t(name)`;
}

/** Records the lake partitions (id ranges) of the four contact tables touched by `idTable`'s ids. */
export async function markContactBucketsDirty(connection: DuckDBConnection, idTable: string): Promise<void> {
  await connection.run(`INSERT OR IGNORE INTO _lake_dirty
    SELECT t.name, b.part FROM (SELECT DISTINCT CAST(id // ${CONTACT_BUCKET_SIZE} AS VARCHAR) AS part FROM ${quoteIdent(idTable)}) b
    CROSS JOIN (VALUES ('contacts'), ('contacts_history'), ('contact_tags'), ('contact_lists')) t(name)`);
}
