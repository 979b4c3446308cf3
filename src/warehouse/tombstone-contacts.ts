import type { DuckDBConnection } from '@duckdb/node-api';
import { WarehouseInputError } from './errors.js';
import { closeOpenVersionsSql, markContactBucketsDirty } from './load-contacts.js';
import { quoteLiteral } from './quote.js';
import { timestampLiteral } from './sql-expr.js';
import { inTransaction, readCount, run } from './sql-run.js';
import { stageIds } from './stage.js';
import type { LoadContext } from './types.js';

export const MAX_IDS_PER_CALL = 5_000_000;

/** Sets `_deleted_at` on the given live contacts, closes their open history version and drops their memberships. */
export async function tombstoneContacts(connection: DuckDBConnection, ids: readonly number[], ctx: LoadContext & { deletedAt?: Date }): Promise<number> {
  checkIds(ids);
  if (ids.length === 0) return 0;
  await stageIds(connection, '_stage_tombstone_ids', ids);
  return inTransaction(connection, () => tombstoneWhere(connection, 'id IN (SELECT id FROM _stage_tombstone_ids)', ctx));
}

/** Reconciliation: tombstones live contacts with id ≤ maxId that the sweep did not see. */
export async function tombstoneContactsNotIn(connection: DuckDBConnection, seenIds: readonly number[], maxId: number, ctx: LoadContext): Promise<number> {
  checkIds(seenIds);
  if (!Number.isFinite(maxId)) throw new WarehouseInputError(`maxId must be a finite number, got ${maxId}.`);
  await stageIds(connection, '_stage_seen_ids', seenIds);
  return inTransaction(connection, () => tombstoneWhere(connection, `id <= ${Math.floor(maxId)} AND id NOT IN (SELECT id FROM _stage_seen_ids)`, ctx));
}

async function tombstoneWhere(connection: DuckDBConnection, where: string, ctx: LoadContext & { deletedAt?: Date }): Promise<number> {
  const deletedAt = timestampLiteral(ctx.deletedAt ?? ctx.syncedAt);
  await run(
    connection,
    `CREATE OR REPLACE TEMP TABLE _stage_tombstoned AS
    SELECT id FROM contacts WHERE _deleted_at IS NULL AND (${where})`,
  );
  const n = await readCount(connection, 'SELECT count(*) FROM _stage_tombstoned');
  if (n > 0) {
    // The open version is closed (copied to the closed table) before its _load_id and
    // _synced_at on contacts are overwritten by the tombstone's.
    await run(connection, closeOpenVersionsSql('_stage_tombstoned', `greatest(c._valid_from, ${deletedAt})`));
    await run(
      connection,
      `UPDATE contacts SET _deleted_at = ${deletedAt}, _load_id = ${quoteLiteral(ctx.loadId)}, _synced_at = ${timestampLiteral(ctx.syncedAt)}
      WHERE id IN (SELECT id FROM _stage_tombstoned)`,
    );
    // contact_tags and contact_lists hold current memberships: a deleted contact has none (its
    // last tag_ids/list_ids stay on its row and in its closed history version).
    await run(connection, `DELETE FROM contact_tags WHERE contact_id IN (SELECT id FROM _stage_tombstoned)`);
    await run(connection, `DELETE FROM contact_lists WHERE contact_id IN (SELECT id FROM _stage_tombstoned)`);
    await markContactBucketsDirty(connection, '_stage_tombstoned');
  }
  await run(connection, 'DROP TABLE IF EXISTS _stage_tombstoned');
  return n;
}

function checkIds(ids: readonly number[]): void {
  if (ids.length > MAX_IDS_PER_CALL) throw new WarehouseInputError(`Got ${ids.length} ids; pass at most ${MAX_IDS_PER_CALL} per call.`);
  for (const id of ids) {
    if (!Number.isSafeInteger(id)) throw new WarehouseInputError(`Contact id ${String(id)} is not an integer.`);
  }
}
