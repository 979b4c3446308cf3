import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WarehouseHandle } from '../../src/warehouse/index.js';
import { makeContact } from './contact-factory.js';
import { closeTempWarehouse, openTempWarehouse, type tempPaths } from './temp-warehouse.js';

let p: ReturnType<typeof tempPaths>;
let w: WarehouseHandle;
beforeAll(async () => {
  ({ p, w } = await openTempWarehouse());
});
afterAll(() => closeTempWarehouse({ p, w }));

// A run's _sync_runs counts come from what its loads wrote (recordStreamRun), so that an attempt
// that loaded pages and crashed before reporting them still counts.
describe('contactLoadCounts', () => {
  it('counts the contacts a load id inserted and the versions it opened on held ones, across several loads', async () => {
    const t = (m: number) => new Date(Date.UTC(2026, 11, 6, 12, m));
    const runA = { loadId: 'run-a:contacts', syncedAt: t(0) };
    await w.loadContacts(
      [1, 2, 3].map((i) => makeContact(i)),
      runA,
    );
    // Run B: its first attempt loads contact 4 and changes 2, then "crashes"; its retry loads 5,
    // changes 2 again and reads 3 unchanged.
    await w.loadContacts([makeContact(4), makeContact(2, { city: 'Oslo' })], { loadId: 'run-b:contacts', syncedAt: t(1) });
    await w.loadContacts([makeContact(5), makeContact(2, { city: 'Bergen' }), makeContact(3)], { loadId: 'run-b:contacts', syncedAt: t(2) });
    expect(await w.contactLoadCounts('run-a:contacts')).toEqual({ inserted: 3, updated: 0 });
    expect(await w.contactLoadCounts('run-b:contacts')).toEqual({ inserted: 2, updated: 2 });
    // A contact the run tombstoned and then found again: a version of a held contact.
    await w.tombstoneContacts([1], { loadId: 'run-c:contacts', syncedAt: t(3) });
    await w.loadContacts([makeContact(1, { city: 'Back' })], { loadId: 'run-c:contacts', syncedAt: t(4) });
    expect(await w.contactLoadCounts('run-c:contacts')).toEqual({ inserted: 0, updated: 1 });
    expect(await w.contactLoadCounts('never')).toEqual({ inserted: 0, updated: 0 });
    // A contact whose updated_at is ahead of the loads' clock: each version begins at the load
    // that saw it, not in the future, and the second is still a version of a held contact.
    const ahead = '2030-01-01T00:00:00.000Z';
    await w.loadContacts([makeContact(7, { updated_at: ahead })], { loadId: 'run-d:contacts', syncedAt: t(5) });
    await w.loadContacts([makeContact(7, { updated_at: ahead, city: 'Later' })], { loadId: 'run-e:contacts', syncedAt: t(6) });
    expect(await w.query(`SELECT valid_from, valid_to FROM contacts_history WHERE id = 7 ORDER BY valid_from`)).toEqual([
      { valid_from: t(5), valid_to: t(6) },
      { valid_from: t(6), valid_to: null },
    ]);
    expect(await w.contactLoadCounts('run-e:contacts')).toEqual({ inserted: 0, updated: 1 });
  });

  it('a load counts unchanged only contacts its run has not written already: each contact once in the rows read', async () => {
    const at = { loadId: 'run-f:contacts', syncedAt: new Date(Date.UTC(2026, 11, 6, 13, 0)) };
    await w.loadContacts([makeContact(20), makeContact(21)], { loadId: 'run-0:contacts', syncedAt: new Date(Date.UTC(2026, 11, 6, 12, 59)) });
    // The updated-first scan of run F: 22 is new, 21 changed.
    expect(await w.loadContacts([makeContact(22), makeContact(21, { city: 'Turku' })], at)).toMatchObject({ inserted: 1, updated: 1, unchanged: 0 });
    // Its sweep slice reads 20, 21 and 22: only 20 is unchanged for this run.
    expect(await w.loadContacts([makeContact(20), makeContact(21, { city: 'Turku' }), makeContact(22)], at)).toEqual({ inserted: 0, updated: 0, unchanged: 1, deleted: 0 });
    // The next run reads all three unchanged.
    expect(await w.loadContacts([makeContact(20), makeContact(21, { city: 'Turku' }), makeContact(22)], { ...at, loadId: 'run-g:contacts' })).toMatchObject({ unchanged: 3 });
  });
});
