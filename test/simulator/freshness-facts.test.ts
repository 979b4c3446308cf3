import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { api, type Json } from './helpers.js';

// The facts an incremental sync without webhooks relies on, each checked against its capture from
// a real deployment (shared/fixtures/fluentcrm-2.9/site-ny). A missing capture fails the test.
const SITE_NY = join(import.meta.dirname, '../../../shared/fixtures/fluentcrm-2.9/site-ny');

function capture(name: string): { request: { query: Record<string, unknown> | null }; status: number; body: Json } {
  const file = join(SITE_NY, `${name}.json`);
  if (!existsSync(file)) throw new Error(`fixture ${file} is missing: these tests compare the simulator with it (check out shared/ beside the repository)`);
  return JSON.parse(readFileSync(file, 'utf8')) as { request: { query: Record<string, unknown> | null }; status: number; body: Json };
}

let sim: RunningSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

/** A real-mode simulator whose clock the test moves by hand. */
async function realSim(): Promise<{ sim: RunningSimulator; clock: { ms: number } }> {
  const clock = { ms: Date.parse('2026-11-25T17:47:35Z') };
  sim = await startSimulator({ contacts: 40, seed: 11, mode: 'real', timezone: 'America/New_York', now: () => clock.ms });
  return { sim, clock };
}

const rowsOf = (body: Json): Json[] => body.subscribers.data as Json[];

describe('simulator real mode: ordering by updated_at and created_at (site-ny)', () => {
  it('sort_by=updated_at desc: newest first, rows sharing a second in id order, as captured', async () => {
    const f = capture('GET_subscribers_sort_by_updated_at_sort_type_desc');
    const real = rowsOf(f.body);
    // The capture: five contacts share one second and come back in ascending id order under desc.
    expect(new Set(real.map((r) => r.updated_at)).size).toBe(1);
    const realIds = real.map((r) => Number(r.id));
    expect(realIds).toEqual([...realIds].sort((a, b) => a - b));

    const { sim: s, clock } = await realSim();
    // Edit five contacts in one second, in an order that is not id order.
    for (const id of [30, 4, 17, 9, 25]) s.mutate.updateContact(id, { city: `Edited ${id}` });
    clock.ms += 400;
    const r = await api(s)('GET', `/subscribers?${new URLSearchParams(f.request.query as Record<string, string>).toString()}`);
    expect(r.status).toBe(f.status);
    const rows = rowsOf(r.json);
    expect(rows.map((x) => x.id)).toEqual([4, 9, 17, 25, 30]);
    expect(new Set(rows.map((x) => x.updated_at)).size).toBe(1);
    expect(r.json.subscribers.per_page).toBe(f.body.subscribers.per_page);
  });

  it('sort_by=updated_at asc and created_at asc are honoured (lower-case sort_type)', async () => {
    const upAsc = JSON.parse(readFileSync(join(SITE_NY, '..', 'GET_subscribers_sort_by_updated_at_sort_type_ASC_per_page_3.json'), 'utf8')) as { status: number };
    const crAsc = capture('GET_subscribers_sort_by_created_at_sort_type_asc');
    expect(crAsc.request.query).toMatchObject({ sort_by: 'created_at', sort_type: 'asc' });
    const nonDecreasing = (xs: string[]): boolean => xs.every((x, i) => i === 0 || xs[i - 1]! <= x);
    expect(nonDecreasing(rowsOf(crAsc.body).map((r) => r.created_at as string))).toBe(true);
    expect(upAsc.status).toBe(200);

    const { sim: s } = await realSim();
    for (const [by, type] of [
      ['updated_at', 'asc'],
      ['created_at', 'asc'],
      ['updated_at', 'desc'],
    ] as const) {
      const r = await api(s)('GET', `/subscribers?per_page=40&sort_by=${by}&sort_type=${type}`);
      const values = rowsOf(r.json).map((x) => x[by] as string);
      expect(nonDecreasing(type === 'asc' ? values : [...values].reverse())).toBe(true);
      expect(values.length).toBe(40);
    }
  });
});

describe('simulator real mode: tag and list changes leave updated_at alone (site-ny)', () => {
  it('PUT attach_tags / detach_tags only: updated_at as before, as captured', async () => {
    const before = capture('GET_subscribers_id_before_tag_attach').body.subscriber;
    const attach = capture('PUT_subscribers_id_attach_tags_only');
    const detach = capture('PUT_subscribers_id_detach_tags_only');
    const afterTag = capture('GET_subscribers_id_after_tag_attach').body.subscriber;
    const afterList = capture('GET_subscribers_id_after_list_attach').body.subscriber;
    expect(attach.body.contact.updated_at).toBe(before.updated_at);
    expect(detach.body.contact.updated_at).toBe(before.updated_at);
    expect(afterTag.updated_at).toBe(before.updated_at);
    expect(afterList.updated_at).toBe(before.updated_at);
    expect(afterTag.last_activity).toBe(before.last_activity);

    const { sim: s, clock } = await realSim();
    const call = api(s);
    const id = 12;
    const start = (await call('GET', `/subscribers/${id}`)).json.subscriber;
    const freeTag = [1, 2, 3, 4, 5, 6].find((t) => !start.tags.some((x: Json) => x.id === t)) as number;
    const freeList = [1, 2, 3, 4, 5].find((l) => !start.lists.some((x: Json) => x.id === l)) as number;
    clock.ms += 60_000;
    const put = await call('PUT', `/subscribers/${id}`, { attach_tags: [freeTag] });
    expect(put.status).toBe(attach.status);
    expect(put.json.contact.updated_at).toBe(start.updated_at);
    clock.ms += 60_000;
    await call('PUT', `/subscribers/${id}`, { attach_lists: [freeList] });
    await call('PUT', `/subscribers/${id}`, { detach_tags: [freeTag] });
    const after = (await call('GET', `/subscribers/${id}`)).json.subscriber;
    expect(after.updated_at).toBe(start.updated_at);
    expect(after.last_activity).toBe(start.last_activity);
    expect(after.lists.map((l: Json) => l.id)).toContain(freeList);
    // It does not rise in updated_at desc either (the capture after the attach: same first rows).
    const top = rowsOf((await call('GET', '/subscribers?per_page=3&sort_by=updated_at&sort_type=desc')).json);
    expect(top.map((r) => r.id)).not.toContain(id);

    // A field edit does move it.
    clock.ms += 60_000;
    await call('PUT', `/subscribers/${id}`, { first_name: 'Moved' });
    const edited = (await call('GET', `/subscribers/${id}`)).json.subscriber;
    expect(edited.updated_at).not.toBe(start.updated_at);
    expect(rowsOf((await call('GET', '/subscribers?per_page=1&sort_by=updated_at&sort_type=desc')).json)[0].id).toBe(id);
  });

  it('custom-value, status and email edits change updated_at', async () => {
    const { sim: s, clock } = await realSim();
    const call = api(s);
    const status = s.truth().contacts.find((c) => c.id === 12)?.status === 'subscribed' ? 'unsubscribed' : 'subscribed';
    for (const [i, patch] of [{ custom_values: { job_title: 'Engineer' } }, { status }, { email: 'moved.12@example.org' }].entries()) {
      const before = (await call('GET', '/subscribers/12')).json.subscriber.updated_at;
      clock.ms += 60_000 * (i + 1);
      const put = await call('PUT', '/subscribers/12', { subscriber: patch, ...patch });
      expect(put.status).toBe(200);
      const after = (await call('GET', '/subscribers/12?with[]=subscriber.custom_values')).json.subscriber;
      expect(after.updated_at).not.toBe(before);
      if (i === 0) expect(after.custom_values).toMatchObject({ job_title: 'Engineer' });
    }
  });
});

describe('simulator real mode: member counts in the tags and lists listings (site-ny)', () => {
  it('tags carry subscribersCount alone (subscribed members); lists carry totalCount and subscribersCount', async () => {
    const tagsCap = capture('GET_tags_per_page_50').body.tags.data as Json[];
    const listsCap = capture('GET_lists').body.lists as Json[];
    expect(Object.keys(tagsCap[0]).sort()).toEqual(
      Object.keys(tagsCap[0])
        .filter((k) => k !== 'totalCount')
        .sort(),
    );
    expect(tagsCap.every((t) => typeof t.subscribersCount === 'number' && !('totalCount' in t))).toBe(true);
    expect(listsCap.every((l) => typeof l.totalCount === 'number' && typeof l.subscribersCount === 'number' && l.totalCount >= l.subscribersCount)).toBe(true);

    const { sim: s } = await realSim();
    const call = api(s);
    const truth = s.truth().contacts;
    const tags = (await call('GET', '/tags?per_page=50')).json.tags.data as Json[];
    expect(Object.keys(tags[0]).sort()).toEqual(Object.keys(tagsCap[0]).sort());
    for (const t of tags) {
      expect(t.totalCount).toBeUndefined();
      expect(t.subscribersCount).toBe(truth.filter((c) => c.status === 'subscribed' && c.tags.includes(t.id)).length);
    }
    const lists = (await call('GET', '/lists')).json.lists as Json[];
    expect(Object.keys(lists[0]).sort()).toEqual(Object.keys(listsCap[0]).sort());
    for (const l of lists) {
      expect(l.totalCount).toBe(truth.filter((c) => c.lists.includes(l.id)).length);
      expect(l.subscribersCount).toBe(truth.filter((c) => c.status === 'subscribed' && c.lists.includes(l.id)).length);
    }
    // Some member is not subscribed, so the two counts differ somewhere (the capture: 741 vs 488).
    expect(lists.some((l) => l.totalCount > l.subscribersCount)).toBe(true);
  });
});
