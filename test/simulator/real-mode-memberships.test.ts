import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../src/simulator/index.js';
import { api, type Api, type Json } from './helpers.js';

// Tag and list memberships live in fluentcrm-2.9's pivot table, not the subscriber row: what a
// membership-only PUT answers and what the pivot rows carry, each checked against its capture.
const FIXTURES = join(import.meta.dirname, '../../../shared/fixtures/fluentcrm-2.9');

function capture(name: string): { request: { body: Json }; status: number; body: Json } {
  const file = join(FIXTURES, `${name}.json`);
  if (!existsSync(file)) throw new Error(`fixture ${file} is missing: these tests compare the simulator with it (check out shared/ beside the repository)`);
  return JSON.parse(readFileSync(file, 'utf8')) as { request: { body: Json }; status: number; body: Json };
}

let sim: RunningSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

/** A simulator in site-ny's timezone whose clock the test moves by hand. */
async function startAt(iso: string, mode: SimulatorOptions['mode'] = 'real'): Promise<{ call: Api; clock: { ms: number } }> {
  const clock = { ms: Date.parse(iso) };
  sim = await startSimulator({ contacts: 40, seed: 11, mode, timezone: 'America/New_York', now: () => clock.ms });
  return { call: api(sim), clock };
}

const ID = 12;
const ids = (xs: Json[]): number[] => xs.map((x) => x.id as number);
const pivotTimes = (xs: Json[]): Record<number, [string, string]> => Object.fromEntries(xs.map((x) => [x.id, [x.pivot.created_at, x.pivot.updated_at]]));

/** A tag and a list contact `ID` does not have, and one tag it has. */
async function memberships(call: Api): Promise<{ start: Json; freeTag: number; freeList: number; heldTag: number }> {
  const start = (await call('GET', `/subscribers/${ID}`)).json.subscriber;
  const freeTag = [1, 2, 3, 4, 5, 6].find((t) => !ids(start.tags).includes(t)) as number;
  const freeList = [1, 2, 3, 4, 5].find((l) => !ids(start.lists).includes(l)) as number;
  expect(start.tags.length).toBeGreaterThan(0);
  return { start, freeTag, freeList, heldTag: start.tags[0].id as number };
}

describe('simulator real mode: isDirty of a PUT that only changes memberships', () => {
  it('attach or detach alone answers isDirty false and still applies; a field change with it answers true; no change answers false', async () => {
    expect(capture('site-ny/PUT_subscribers_id_attach_tags_only').body.isDirty).toBe(false);
    expect(capture('site-ny/PUT_subscribers_id_detach_tags_only').body.isDirty).toBe(false);
    const mixed = capture('PUT_subscribers_id_detach_tags_attach_lists');
    expect(Object.keys(mixed.request.body).sort()).toEqual(['attach_lists', 'detach_tags']);
    expect(mixed.body.isDirty).toBe(false);
    const withField = capture('PUT_subscribers_id_attach_tags');
    expect(withField.request.body).toHaveProperty('first_name');
    expect(withField.body.isDirty).toBe(true);

    const { call } = await startAt('2026-11-25T18:06:00Z');
    const { freeTag, freeList, heldTag } = await memberships(call);
    const put = async (body: Json): Promise<Json> => (await call('PUT', `/subscribers/${ID}`, body)).json;
    const attached = await put({ attach_tags: [freeTag] });
    expect(attached.isDirty).toBe(false);
    expect(ids(attached.contact.tags)).toContain(freeTag);
    expect((await put({ attach_lists: [freeList] })).isDirty).toBe(false);
    expect((await put({ detach_tags: [heldTag], detach_lists: [freeList] })).isDirty).toBe(false);
    const now = (await call('GET', `/subscribers/${ID}`)).json.subscriber;
    expect(ids(now.tags)).toContain(freeTag);
    expect(ids(now.tags)).not.toContain(heldTag);
    expect(ids(now.lists)).not.toContain(freeList);

    expect((await put({ attach_tags: [heldTag], first_name: 'Put' })).isDirty).toBe(true);
    expect((await put({ attach_tags: [heldTag], first_name: 'Put' })).isDirty).toBe(false);
  });

  it('spec mode keeps answering isDirty true for any change', async () => {
    const { call } = await startAt('2026-11-25T18:06:00Z', 'spec');
    const { freeTag } = await memberships(call);
    expect((await call('PUT', `/subscribers/${ID}`, { attach_tags: [freeTag] })).json.isDirty).toBe(true);
  });
});

describe('simulator real mode: pivot created_at and updated_at are the attach time (site-ny)', () => {
  it('an attach dates its pivot by the clock, site-local, as captured; seeded pivots keep theirs; a detach removes the row', async () => {
    // The capture attached tag 7 at 18:10:02Z; the site is at UTC-5 in November.
    const cap = capture('site-ny/PUT_subscribers_id_attach_tags_only').body.contact;
    const captured = cap.tags.find((t: Json) => t.id === 7).pivot;
    expect([captured.created_at, captured.updated_at]).toEqual(['2026-11-25 13:10:02', '2026-11-25 13:10:02']);
    expect(cap.tags.find((t: Json) => t.id === 2).pivot.created_at).not.toBe(captured.created_at);
    expect(ids(capture('site-ny/PUT_subscribers_id_detach_tags_only').body.contact.tags)).not.toContain(7);

    const { call, clock } = await startAt('2026-11-25T18:06:00Z');
    const { start, freeTag, freeList } = await memberships(call);
    const seeded = pivotTimes(start.tags);
    const seededLists = pivotTimes(start.lists);
    for (const [created] of [...Object.values(seeded), ...Object.values(seededLists)]) expect(created >= start.created_at).toBe(true);

    clock.ms = Date.parse('2026-11-25T18:10:02Z');
    const attach = (await call('PUT', `/subscribers/${ID}`, { attach_tags: [freeTag] })).json.contact;
    expect(pivotTimes(attach.tags)).toEqual({ ...seeded, [freeTag]: [captured.created_at, captured.updated_at] });
    clock.ms = Date.parse('2026-11-25T18:11:30Z');
    await call('PUT', `/subscribers/${ID}`, { attach_lists: [freeList] });

    // An unrelated edit an hour later rewrites the row, not the pivots.
    clock.ms = Date.parse('2026-11-25T19:12:00Z');
    await call('PUT', `/subscribers/${ID}`, { first_name: 'Unrelated' });
    const after = (await call('GET', `/subscribers/${ID}`)).json.subscriber;
    expect(pivotTimes(after.tags)).toEqual({ ...seeded, [freeTag]: ['2026-11-25 13:10:02', '2026-11-25 13:10:02'] });
    expect(pivotTimes(after.lists)).toEqual({ ...seededLists, [freeList]: ['2026-11-25 13:11:30', '2026-11-25 13:11:30'] });

    // Detach deletes the row: attaching again is a new row with a new time.
    await call('PUT', `/subscribers/${ID}`, { detach_tags: [freeTag] });
    expect(ids((await call('GET', `/subscribers/${ID}`)).json.subscriber.tags)).not.toContain(freeTag);
    clock.ms = Date.parse('2026-11-25T19:30:45Z');
    const again = (await call('PUT', `/subscribers/${ID}`, { attach_tags: [freeTag] })).json.contact;
    expect(pivotTimes(again.tags)[freeTag]).toEqual(['2026-11-25 14:30:45', '2026-11-25 14:30:45']);
  });

  it('a create with tags and a later __force_update date each tag by its own write, as captured', async () => {
    const additive = capture('POST_subscribers_force_update_tags_additive').body.contact;
    const times = new Set(additive.tags.map((t: Json) => t.pivot.created_at as string));
    expect(times.size).toBeGreaterThan(1);

    const { call, clock } = await startAt('2026-11-25T18:00:05Z');
    const created = (await call('POST', '/subscribers', { email: 'pivot.times@example.test', status: 'subscribed', tags: [1] })).json.contact;
    expect(pivotTimes(created.tags)).toEqual({ 1: ['2026-11-25 13:00:05', '2026-11-25 13:00:05'] });
    clock.ms = Date.parse('2026-11-25T18:02:09Z');
    const upsert = await call('POST', '/subscribers', { email: 'pivot.times@example.test', status: 'subscribed', tags: [2], __force_update: 'yes' });
    expect(upsert.json.action_type).toBe('updated');
    const after = (await call('GET', `/subscribers/${created.id}`)).json.subscriber;
    expect(pivotTimes(after.tags)).toEqual({ 1: ['2026-11-25 13:00:05', '2026-11-25 13:00:05'], 2: ['2026-11-25 13:02:09', '2026-11-25 13:02:09'] });
  });
});
