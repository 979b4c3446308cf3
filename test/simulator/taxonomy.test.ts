import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { isSpecError, withSim, type Api, type Json } from './helpers.js';

let sim: RunningSimulator;
let call: Api;

beforeAll(async () => {
  ({ sim, call } = await withSim({ contacts: 150, seed: 3 }));
});
afterAll(async () => {
  await sim.close();
});

describe('Tags (spec: Tags)', () => {
  it('GET /tags: object tags, array, id DESC by default, with totalCount and subscribersCount from the truth', async () => {
    const r = await call('GET', '/tags');
    expect(r.status).toBe(200);
    expect(Array.isArray(r.json.tags)).toBe(true);
    const ids = r.json.tags.map((t: Json) => t.id);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => b - a));
    const truth = sim.truth().contacts;
    for (const t of r.json.tags) {
      expect(t.totalCount).toBe(truth.filter((c) => c.tags.includes(t.id)).length);
      expect(t.subscribersCount).toBe(truth.filter((c) => c.tags.includes(t.id) && c.status === 'subscribed').length);
    }
  });

  it('counts stay exact after creates, updates, status changes and deletes', async () => {
    await call('POST', '/subscribers', { email: 'count.me@example.org', status: 'subscribed', tags: [1, 2], lists: [3] });
    const victim = sim.truth().contacts.find((c) => c.tags.includes(2)) as { id: number };
    await call('PUT', `/subscribers/${victim.id}`, { subscriber: { detach_tags: [2], attach_tags: [1], status: 'subscribed' } });
    const gone = sim.truth().contacts.find((c) => c.tags.includes(1) && c.id !== victim.id) as { id: number };
    await call('DELETE', `/subscribers/${gone.id}`);
    sim.mutate.setStatus(sim.truth().contacts[0]?.id as number, 'bounced');
    const truth = sim.truth().contacts;
    for (const t of (await call('GET', '/tags')).json.tags) {
      expect(t.totalCount).toBe(truth.filter((c) => c.tags.includes(t.id)).length);
      expect(t.subscribersCount).toBe(truth.filter((c) => c.tags.includes(t.id) && c.status === 'subscribed').length);
    }
    for (const l of (await call('GET', '/lists')).json.lists) {
      expect(l.totalCount).toBe(truth.filter((c) => c.lists.includes(l.id)).length);
    }
  });

  it('sorts by title and subscribers, searches, excludes counts and adds all_tags', async () => {
    const byTitle = await call('GET', '/tags?sort_by=title&sort_order=ASC');
    const titles = byTitle.json.tags.map((t: Json) => t.title.toLowerCase());
    expect(titles).toEqual([...titles].sort());
    const bySubs = await call('GET', '/tags?sort_by=subscribers&sort_order=DESC');
    const counts = bySubs.json.tags.map((t: Json) => t.totalCount);
    expect(counts).toEqual([...counts].sort((a: number, b: number) => b - a));
    const search = await call('GET', '/tags?search=webinar');
    expect(search.json.tags.map((t: Json) => t.slug)).toEqual(['webinar-2026']);
    const nocount = await call('GET', '/tags?exclude_counts=true');
    expect(nocount.json.tags[0]).not.toHaveProperty('totalCount');
    const all = await call('GET', '/tags?all_tags=true');
    expect(Object.keys(all.json.all_tags[0]).sort()).toEqual(['id', 'slug', 'title']);
  });

  it('creates (slug generated), gets, updates (id as string) and deletes a tag; duplicate title is 400 rest_invalid_param', async () => {
    const c = await call('POST', '/tags', { title: 'Spring Promo', description: 'promo' });
    expect(c.status).toBe(200);
    expect(c.json.tags).toMatchObject({ title: 'Spring Promo', slug: 'spring-promo' });
    expect(typeof c.json.message).toBe('string');
    const id = c.json.tags.id;
    const dup = await call('POST', '/tags', { title: 'Spring Promo' });
    expect(dup.status).toBe(400);
    expect(isSpecError(dup.json, 400, 'rest_invalid_param')).toBe(true);
    const missing = await call('POST', '/tags', { description: 'no title' });
    expect(missing.status).toBe(400);
    const got = await call('GET', `/tags/${id}`);
    expect(got.json.tag.title).toBe('Spring Promo');
    const upd = await call('PUT', `/tags/${id}`, { description: 'changed' });
    expect(upd.json.tags).toBe(String(id));
    const del = await call('DELETE', `/tags/${id}`);
    expect(typeof del.json.message).toBe('string');
    expect((await call('GET', `/tags/${id}`)).status).toBe(404);
    expect(isSpecError((await call('DELETE', `/tags/${id}`)).json, 404, 'rest_post_invalid_id')).toBe(true);
  });

  it('deleting a tag removes it from all contacts and keeps the contacts', async () => {
    const before = sim.truth().contacts;
    const tagged = before.filter((c) => c.tags.includes(4)).map((c) => c.id);
    expect(tagged.length).toBeGreaterThan(0);
    await call('DELETE', '/tags/4');
    const after = sim.truth().contacts;
    expect(after).toHaveLength(before.length);
    expect(after.some((c) => c.tags.includes(4))).toBe(false);
    const page = await call('GET', `/subscribers/${tagged[0]}`);
    expect(page.json.subscriber.tags.some((t: Json) => t.id === 4)).toBe(false);
  });
});

describe('Lists (spec: Lists)', () => {
  it('GET /lists is an array under lists; GET /lists/{id} is the bare list object with is_public', async () => {
    const r = await call('GET', '/lists?sort_by=title&sort_order=ASC');
    expect(Array.isArray(r.json.lists)).toBe(true);
    const titles = r.json.lists.map((l: Json) => l.title);
    expect(titles).toEqual([...titles].sort());
    const one = await call('GET', '/lists/2');
    expect(one.json).toMatchObject({ id: 2, title: 'Prospects', slug: 'prospects' });
    expect(['0', '1']).toContain(one.json.is_public);
    expect(one.json).not.toHaveProperty('list');
  });

  it('create, duplicate title 400, update returns the id as a string, delete removes memberships', async () => {
    const c = await call('POST', '/lists', { title: 'VIP Customers', slug: 'vip-customers', is_public: '1' });
    expect(c.json.lists).toMatchObject({ title: 'VIP Customers', slug: 'vip-customers' });
    const dup = await call('POST', '/lists', { title: 'VIP Customers' });
    expect(dup.status).toBe(400);
    expect(dup.json.code).toBe('rest_invalid_param');
    const id = c.json.lists.id;
    await call('PUT', '/subscribers/7', { subscriber: { attach_lists: [id] } });
    expect(sim.truth().contacts.find((x) => x.id === 7)?.lists).toContain(id);
    const upd = await call('PUT', `/lists/${id}`, { title: 'VIP Customers 2' });
    expect(upd.json.lists).toBe(String(id));
    await call('DELETE', `/lists/${id}`);
    expect(sim.truth().contacts.find((x) => x.id === 7)?.lists).not.toContain(id);
    expect((await call('GET', `/lists/${id}`)).status).toBe(404);
  });
});

describe('Companies and custom fields', () => {
  it('lists companies (paginator, per_page 10), creates, updates, attaches subscribers, deletes', async () => {
    const r = await call('GET', '/companies');
    expect(r.json.companies.per_page).toBe(10);
    expect(r.json.companies.total).toBe(sim.truth().companies.length);
    const missing = await call('POST', '/companies', { industry: 'x' });
    expect(missing.status).toBe(400);
    const c = await call('POST', '/companies', { name: 'Initrode', email: 'hi@initrode.test', type: 'Partner', employees_number: 40 });
    expect(c.status).toBe(200);
    const id = c.json.company.id;
    const u = await call('PUT', `/companies/${id}`, { industry: 'Paper' });
    expect(u.json.company.industry).toBe('Paper');
    const a = await call('PUT', '/companies/attach-subscribers', { subscriber_ids: [1, 2], company_ids: [id] });
    expect(a.status).toBe(200);
    expect(sim.truth().contacts.find((x) => x.id === 1)?.company_ids).toContain(id);
    const filtered = await call('GET', `/subscribers?company_ids[]=${id}`);
    expect(filtered.json.subscribers.data.map((x: Json) => x.id).sort()).toEqual([1, 2]);
    const badAttach = await call('PUT', '/companies/attach-subscribers', { subscriber_ids: [1] });
    expect(badAttach.status).toBe(400);
    expect((await call('DELETE', `/companies/${id}`)).status).toBe(200);
    expect((await call('PUT', `/companies/${id}`, { industry: 'x' })).status).toBe(404);
  });

  it('GET /custom-fields/contacts returns fields; option types carry options; with[]=field_types adds definitions', async () => {
    const r = await call('GET', '/custom-fields/contacts');
    const fields = r.json.fields as Json[];
    const types = new Set(fields.map((f) => f.type));
    for (const t of ['text', 'textarea', 'number', 'date', 'url', 'email', 'select-one', 'checkbox', 'radio']) expect(types).toContain(t);
    for (const f of fields) {
      expect(f).toMatchObject({ field_key: expect.any(String), label: expect.any(String), slug: expect.any(String) });
      if (['select-one', 'checkbox', 'radio'].includes(f.type)) expect(f.options.length).toBeGreaterThan(0);
      else expect(f).not.toHaveProperty('options');
    }
    expect(r.json).not.toHaveProperty('field_types');
    expect((await call('GET', '/custom-fields/contacts?with[]=field_types')).json).toHaveProperty('field_types');
  });
});
