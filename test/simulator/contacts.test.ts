import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { isSpecError, withSim, type Api, type Json } from './helpers.js';

let sim: RunningSimulator;
let call: Api;

beforeAll(async () => {
  ({ sim, call } = await withSim({ contacts: 120, seed: 11 }));
});
afterAll(async () => {
  await sim.close();
});

const PAGINATOR_KEYS = ['total', 'per_page', 'current_page', 'last_page', 'from', 'to', 'next_page_url', 'prev_page_url', 'data'];

describe('GET /subscribers (spec: Contacts)', () => {
  it('returns a paginator with per_page 10 and page 1 by default, ordered by id DESC', async () => {
    const r = await call('GET', '/subscribers');
    expect(r.status).toBe(200);
    const p = r.json.subscribers;
    for (const k of PAGINATOR_KEYS) expect(p).toHaveProperty(k);
    expect(p.per_page).toBe(10);
    expect(p.current_page).toBe(1);
    expect(p.total).toBe(120);
    expect(p.last_page).toBe(12);
    expect(p.data).toHaveLength(10);
    const ids = p.data.map((c: Json) => c.id);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => b - a));
    expect(ids[0]).toBe(120);
  });

  it('contact objects carry the fields of the Contact table with tags and lists as {id,title,slug}', async () => {
    const r = await call('GET', '/subscribers?per_page=50');
    const c = r.json.subscribers.data.find((x: Json) => x.tags.length > 0 && x.lists.length > 0);
    expect(c).toBeDefined();
    for (const k of [
      'id',
      'user_id',
      'hash',
      'email',
      'first_name',
      'last_name',
      'full_name',
      'status',
      'contact_type',
      'phone',
      'address_line_1',
      'address_line_2',
      'city',
      'state',
      'postal_code',
      'country',
      'date_of_birth',
      'photo',
      'tags',
      'lists',
      'created_at',
      'updated_at',
    ]) {
      expect(c).toHaveProperty(k);
    }
    expect(typeof c.id).toBe('number');
    expect(c.full_name).toBe(`${c.first_name} ${c.last_name}`);
    expect(c.created_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(c.tags[0]).toMatchObject({ id: expect.any(Number), title: expect.any(String), slug: expect.any(String) });
    expect(['subscribed', 'unsubscribed', 'pending', 'bounced', 'complained']).toContain(c.status);
    expect(c).not.toHaveProperty('custom_values');
  });

  it('pages with per_page and page, and from/to/next/prev agree', async () => {
    const r = await call('GET', '/subscribers?per_page=7&page=3');
    const p = r.json.subscribers;
    expect(p.from).toBe(15);
    expect(p.to).toBe(21);
    expect(p.data).toHaveLength(7);
    expect(p.next_page_url).toContain('page=4');
    expect(p.prev_page_url).toContain('page=2');
    const next = await fetch(p.next_page_url, { headers: { authorization: `Basic ${Buffer.from(`${sim.credentials.username}:${sim.credentials.password}`).toString('base64')}` } });
    const nextBody = (await next.json()) as Json;
    expect(nextBody.subscribers.from).toBe(22);
    const past = await call('GET', '/subscribers?per_page=50&page=9');
    expect(past.json.subscribers.data).toEqual([]);
    expect(past.json.subscribers.from).toBeNull();
  });

  it('rejects an invalid per_page with 400', async () => {
    const r = await call('GET', '/subscribers?per_page=0');
    expect(r.status).toBe(400);
    expect(isSpecError(r.json, 400)).toBe(true);
  });

  it('orders by order_by/order_type (email ASC) and tolerates sort_by/sort_type', async () => {
    const a = await call('GET', '/subscribers?order_by=email&order_type=ASC&per_page=20');
    const emails = a.json.subscribers.data.map((c: Json) => c.email);
    expect(emails).toEqual([...emails].sort());
    const b = await call('GET', '/subscribers?sort_by=id&sort_type=ASC&per_page=5');
    expect(b.json.subscribers.data.map((c: Json) => c.id)).toEqual([1, 2, 3, 4, 5]);
    const bad = await call('GET', '/subscribers?order_by=bogus');
    expect(bad.status).toBe(400);
  });

  it('filters by statuses[], tags[], lists[], company_ids[] and search, matching the truth', async () => {
    const truth = sim.truth().contacts;
    const st = await call('GET', '/subscribers?statuses[]=pending&statuses[]=bounced&per_page=200');
    expect(st.json.subscribers.total).toBe(truth.filter((c) => c.status === 'pending' || c.status === 'bounced').length);
    expect(st.json.subscribers.data.every((c: Json) => c.status === 'pending' || c.status === 'bounced')).toBe(true);
    const tg = await call('GET', '/subscribers?tags[]=2&per_page=200');
    expect(tg.json.subscribers.total).toBe(truth.filter((c) => c.tags.includes(2)).length);
    const ls = await call('GET', '/subscribers?lists[]=1&lists[]=3&per_page=200');
    expect(ls.json.subscribers.total).toBe(truth.filter((c) => c.lists.includes(1) || c.lists.includes(3)).length);
    const co = await call('GET', '/subscribers?company_ids[]=1&per_page=200');
    expect(co.json.subscribers.total).toBe(truth.filter((c) => c.company_ids.includes(1)).length);
    const name = truth[5]?.last_name as string;
    const se = await call('GET', `/subscribers?search=${encodeURIComponent(name.toLowerCase())}&per_page=200`);
    expect(se.json.subscribers.total).toBe(truth.filter((c) => `${c.first_name} ${c.last_name} ${c.email}`.toLowerCase().includes(name.toLowerCase())).length);
    expect(se.json.subscribers.total).toBeGreaterThan(0);
  });

  it('a filtered or sorted listing read page by page sees the writes made between its pages', async () => {
    const own = await withSim({ contacts: 60, seed: 12 });
    try {
      const ids = async (query: string): Promise<{ total: number; ids: number[] }> => {
        const r = await own.call('GET', `/subscribers?${query}`);
        return { total: r.json.subscribers.total, ids: r.json.subscribers.data.map((c: Json) => c.id) };
      };
      const members = () => own.sim.truth().contacts.filter((c) => c.tags.includes(2));
      const before = await ids('tags[]=2&per_page=5&page=1');
      expect(before.total).toBe(members().length);
      // The listing's pages are served from its order computed once; a write must end that.
      const outsider = own.sim.truth().contacts.find((c) => !c.tags.includes(2))!;
      own.sim.mutate.addTag(outsider.id, 2);
      const after = await ids('tags[]=2&per_page=100&page=1');
      expect(after.total).toBe(before.total + 1);
      expect(after.ids).toContain(outsider.id);
      expect(after.ids.sort((a, b) => a - b)).toEqual(
        members()
          .map((c) => c.id)
          .sort((a, b) => a - b),
      );

      const byEmail = await ids('order_by=email&order_type=ASC&per_page=3&page=1');
      own.sim.mutate.updateContact(byEmail.ids[2]!, { email: 'aaaa-first@example.com' });
      expect((await ids('order_by=email&order_type=ASC&per_page=3&page=1')).ids[0]).toBe(byEmail.ids[2]);
    } finally {
      await own.sim.close();
    }
  });

  it('adds custom_values only with custom_fields=true', async () => {
    const r = await call('GET', '/subscribers?custom_fields=true&per_page=30');
    const withValues = r.json.subscribers.data.filter((c: Json) => Object.keys(c.custom_values).length > 0);
    expect(withValues.length).toBeGreaterThan(0);
    const t = sim.truth().contacts.find((c) => c.id === withValues[0].id);
    expect(withValues[0].custom_values).toEqual(t?.custom_values);
  });
});

describe('GET /subscribers/{id} and get_by_email', () => {
  it('returns object subscriber; with[]=stats adds integer emails/opens/clicks', async () => {
    const r = await call('GET', '/subscribers/5?with[]=stats&with[]=subscriber.custom_values');
    expect(r.status).toBe(200);
    expect(r.json.subscriber.id).toBe(5);
    expect(r.json.subscriber.stats).toEqual({ emails: expect.any(Number), opens: expect.any(Number), clicks: expect.any(Number) });
    expect(r.json.subscriber).toHaveProperty('custom_values');
    const plain = await call('GET', '/subscribers/5');
    expect(plain.json.subscriber).not.toHaveProperty('stats');
  });

  it('finds a contact by email at /subscribers/0?get_by_email=, case-insensitively', async () => {
    const email = sim.truth().contacts[3]?.email as string;
    const r = await call('GET', `/subscribers/0?get_by_email=${encodeURIComponent(email.toUpperCase())}`);
    expect(r.status).toBe(200);
    expect(r.json.subscriber.email).toBe(email);
    const miss = await call('GET', '/subscribers/0?get_by_email=nobody%40nowhere.test');
    expect(miss.status).toBe(404);
  });

  it('answers 404 rest_post_invalid_id for an unknown contact id', async () => {
    const r = await call('GET', '/subscribers/999999');
    expect(r.status).toBe(404);
    expect(isSpecError(r.json, 404, 'rest_post_invalid_id')).toBe(true);
  });
});

describe('POST /subscribers', () => {
  it('creates: message, contact, action_type created; tags and lists by id; custom values kept', async () => {
    const r = await call('POST', '/subscribers', {
      email: 'new.person@example.org',
      status: 'pending',
      first_name: 'New',
      tags: [1, 3],
      lists: [2],
      custom_values: { favorite_color: 'Green', interests: ['Sales'] },
    });
    expect(r.status).toBe(200);
    expect(typeof r.json.message).toBe('string');
    expect(r.json.action_type).toBe('created');
    expect(r.json.contact.email).toBe('new.person@example.org');
    expect(r.json.contact.tags.map((t: Json) => t.id).sort()).toEqual([1, 3]);
    const t = sim.truth().contacts.find((c) => c.id === r.json.contact.id);
    expect(t?.custom_values).toEqual({ favorite_color: 'Green', interests: ['Sales'] });
    expect(t?.status).toBe('pending');
  });

  it('409 with message and data only for a duplicate email without __force_update', async () => {
    const email = sim.truth().contacts[10]?.email as string;
    const r = await call('POST', '/subscribers', { email, status: 'subscribed' });
    expect(r.status).toBe(409);
    expect(typeof r.json.message).toBe('string');
    expect(r.json.data.status).toBe(409);
    expect(r.json).not.toHaveProperty('code');
  });

  it('with __force_update "yes" updates the existing contact (create-or-update by email)', async () => {
    const before = sim.truth().contacts[12];
    const r = await call('POST', '/subscribers', { email: before?.email, status: 'subscribed', first_name: 'Upserted', __force_update: 'yes' });
    expect(r.status).toBe(200);
    expect(r.json.contact.id).toBe(before?.id);
    expect(r.json.action_type).not.toBe('created');
    expect(sim.truth().contacts.find((c) => c.id === before?.id)?.first_name).toBe('Upserted');
    expect(sim.truth().contacts).toHaveLength(sim.truth().contacts.length);
  });

  it('400 rest_invalid_param for an invalid email; status is required', async () => {
    const bad = await call('POST', '/subscribers', { email: 'not-an-email', status: 'subscribed' });
    expect(bad.status).toBe(400);
    expect(isSpecError(bad.json, 400, 'rest_invalid_param')).toBe(true);
    const noStatus = await call('POST', '/subscribers', { email: 'no.status@example.org' });
    expect(noStatus.status).toBe(400);
    expect(noStatus.json.message).toContain('status');
    const badStatus = await call('POST', '/subscribers', { email: 'bad.status@example.org', status: 'subscirbed' });
    expect(badStatus.status).toBe(400);
  });

  it('400 rest_invalid_param for an unknown custom field or an option not defined for a select field', async () => {
    const unknown = await call('POST', '/subscribers', { email: 'cf1@example.org', status: 'subscribed', custom_values: { shoe_size: '42' } });
    expect(unknown.status).toBe(400);
    expect(isSpecError(unknown.json, 400, 'rest_invalid_param')).toBe(true);
    const option = await call('POST', '/subscribers', { email: 'cf2@example.org', status: 'subscribed', custom_values: { favorite_color: 'Purple' } });
    expect(option.status).toBe(400);
    expect(isSpecError(option.json, 400, 'rest_invalid_param')).toBe(true);
    expect(sim.truth().contacts.some((c) => c.email === 'cf1@example.org' || c.email === 'cf2@example.org')).toBe(false);
  });

  it('rejects a body over the size limit with 413', async () => {
    const r = await call('POST', '/subscribers', { email: 'big@example.org', status: 'subscribed', first_name: 'x'.repeat(2 * 1024 * 1024) });
    expect(r.status).toBe(413);
  });
});

describe('PUT /subscribers/{id}', () => {
  it('attaches and detaches tags and lists; reports isDirty; bumps updated_at', async () => {
    const c = sim.truth().contacts.find((x) => x.tags.includes(1) && !x.lists.includes(5));
    expect(c).toBeDefined();
    const r = await call('PUT', `/subscribers/${c?.id}`, { subscriber: { detach_tags: [1], attach_tags: [8], attach_lists: [5], city: 'Oslo' } });
    expect(r.status).toBe(200);
    expect(r.json.isDirty).toBe(true);
    expect(r.json.contact.id).toBe(c?.id);
    const after = sim.truth().contacts.find((x) => x.id === c?.id);
    expect(after?.tags).not.toContain(1);
    expect(after?.tags).toContain(8);
    expect(after?.lists).toContain(5);
    expect(after?.city).toBe('Oslo');
    expect(after && c && after.updated_at_iso >= c.updated_at_iso).toBe(true);
    const again = await call('PUT', `/subscribers/${c?.id}`, { subscriber: { city: 'Oslo' } });
    expect(again.json.isDirty).toBe(false);
  });

  it('404 for an unknown id', async () => {
    const r = await call('PUT', '/subscribers/999999', { subscriber: { city: 'x' } });
    expect(r.status).toBe(404);
    expect(isSpecError(r.json, 404, 'rest_post_invalid_id')).toBe(true);
  });
});

describe('DELETE /subscribers/{id}', () => {
  it('deletes with a message; the contact is gone from get, list and truth', async () => {
    const r = await call('DELETE', '/subscribers/20');
    expect(r.status).toBe(200);
    expect(typeof r.json.message).toBe('string');
    expect((await call('GET', '/subscribers/20')).status).toBe(404);
    expect(sim.truth().contacts.some((c) => c.id === 20)).toBe(false);
    expect((await call('DELETE', '/subscribers/20')).status).toBe(404);
  });
});

describe('notes', () => {
  it('creates, lists (paginator, search) and updates notes; 15 note types; required fields', async () => {
    const created = await call('POST', '/subscribers/30/notes', { note: { title: 'Call summary', description: '<p>Talked</p>', type: 'call', created_at: '2026-01-02 10:00:00' } });
    expect(created.status).toBe(200);
    expect(created.json.note).toMatchObject({ title: 'Call summary', type: 'call' });
    expect(typeof created.json.message).toBe('string');
    await call('POST', '/subscribers/30/notes', { note: { title: 'Meeting', description: 'x', type: 'meeting', created_at: '2026-01-03 10:00:00' } });
    const listed = await call('GET', '/subscribers/30/notes?search=call');
    expect(listed.json.notes.total).toBe(1);
    expect(listed.json.notes.per_page).toBe(10);
    for (const k of ['current_page', 'per_page', 'total', 'last_page', 'data']) expect(listed.json.notes).toHaveProperty(k);
    expect(listed.json.notes.data[0].added_by).toHaveProperty('display_name');
    const upd = await call('PUT', `/subscribers/30/notes/${created.json.note.id}`, { note: { title: 'Call summary v2', description: 'y', type: 'call', created_at: '2026-01-02 10:00:00' } });
    expect(upd.json.note.title).toBe('Call summary v2');
    const missing = await call('POST', '/subscribers/30/notes', { note: { description: 'x', type: 'note' } });
    expect(missing.status).toBe(400);
    const badType = await call('POST', '/subscribers/30/notes', { note: { title: 't', description: 'x', type: 'fax', created_at: '2026-01-02 10:00:00' } });
    expect(badType.status).toBe(400);
  });
});

describe('method override (Response conventions 7)', () => {
  it('POST with X-HTTP-Method-Override PUT or DELETE acts as that verb', async () => {
    const put = await call('POST', '/subscribers/40', { subscriber: { city: 'Override City' } }, { 'X-HTTP-Method-Override': 'PUT' });
    expect(put.status).toBe(200);
    expect(sim.truth().contacts.find((c) => c.id === 40)?.city).toBe('Override City');
    const del = await call('POST', '/subscribers/41', undefined, { 'X-HTTP-Method-Override': 'DELETE' });
    expect(del.status).toBe(200);
    expect(sim.truth().contacts.some((c) => c.id === 41)).toBe(false);
    const plain = await call('POST', '/subscribers/42', { subscriber: { city: 'x' } });
    expect(plain.status).toBe(404);
  });
});
