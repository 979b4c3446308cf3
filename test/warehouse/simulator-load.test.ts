import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Contact } from '../../src/crm/types.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { openWarehouse, type WarehouseHandle } from '../../src/warehouse/index.js';
import { createCrmClient, createRateLimiter, type CrmClient } from '../../src/crm/index.js';
import { ctx, tempPaths } from './temp-warehouse.js';

// The real chain: simulator (site time zone Europe/Berlin) -> client normalization -> warehouse.
const TZ = 'Europe/Berlin';
let sim: RunningSimulator;
let p: ReturnType<typeof tempPaths>;
let w: WarehouseHandle;

beforeAll(async () => {
  sim = await startSimulator({ contacts: 250, seed: 11, timezone: TZ });
  p = tempPaths();
  w = await openWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, siteTimeZone: TZ });
  await w.migrate();
});
afterAll(async () => {
  await w?.close();
  await sim?.close();
  p?.cleanup();
});

function clientFor(s: RunningSimulator, opts: { timezone: string }): CrmClient {
  return createCrmClient({
    baseUrl: s.baseUrl,
    username: s.credentials.username,
    password: s.credentials.password,
    limiter: createRateLimiter({ maxRps: 5000, maxConcurrency: 4 }),
    ...opts,
  });
}

async function readAll(): Promise<Contact[][]> {
  const client = clientFor(sim, { timezone: TZ });
  try {
    const pages: Contact[][] = [];
    for (let page = 1; ; page++) {
      const res = await client.contacts.listPage({ page, perPage: 100, orderBy: 'id', order: 'asc', customFields: true });
      pages.push(res.items);
      if (res.items.length < 100) return pages;
    }
  } finally {
    await client.close();
  }
}

describe('loading what the client reads from the simulator', () => {
  it('lands every contact as the truth has it, and a reload changes nothing', async () => {
    const pages = await readAll();
    let inserted = 0;
    for (const page of pages) inserted += (await w.loadContacts(page, ctx())).inserted;
    const truth = sim.truth().contacts;
    expect(inserted).toBe(truth.length);

    const rows = await w.query(`SELECT id, email, status, epoch_ms(created_at) AS created, epoch_ms(updated_at) AS updated, tag_ids, list_ids,
      CAST(date_of_birth AS VARCHAR) AS dob FROM contacts ORDER BY id`);
    expect(rows).toEqual(
      [...truth]
        .sort((a, b) => a.id - b.id)
        .map((t) => ({
          id: t.id,
          email: t.email,
          status: t.status,
          created: Date.parse(t.created_at_iso),
          updated: Date.parse(t.updated_at_iso),
          tag_ids: [...t.tags].sort((a, b) => a - b),
          list_ids: [...t.lists].sort((a, b) => a - b),
          dob: t.date_of_birth,
        })),
    );

    let unchanged = 0;
    for (const page of await readAll()) unchanged += (await w.loadContacts(page, ctx())).unchanged;
    expect(unchanged).toBe(truth.length);
  });

  it('an edit in the CRM becomes one update and one new history version', async () => {
    const id = sim.truth().contacts[5]!.id;
    const client = clientFor(sim, { timezone: TZ });
    try {
      await client.contacts.update(id, { first_name: 'Edited' });
    } finally {
      await client.close();
    }
    let updated = 0;
    for (const page of await readAll()) updated += (await w.loadContacts(page, ctx())).updated;
    expect(updated).toBe(1);
    expect(await w.query(`SELECT first_name FROM contacts_history WHERE id = ${id} ORDER BY valid_from`)).toEqual([{ first_name: expect.not.stringMatching(/^Edited$/) }, { first_name: 'Edited' }]);
  });
});
