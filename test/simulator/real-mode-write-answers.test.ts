import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_CAPABILITIES, type RunningSimulator } from '../../src/simulator/index.js';
import { captureNames, loadCapture, replay, routeOf, type Capture } from './capture-replay.js';
import { withSim, type Json } from './helpers.js';

// The contact in fluentcrm-2.9's answers to contact writes (every 200 POST_subscribers_* and
// PUT_subscribers_* capture of both sites, method overrides included) holds the relations the write
// loaded and no others: `lists` only when it set lists, `tags` only when it set tags, `companies`
// on a force-update of an existing contact, never `company` or `custom_values`. Real mode must
// answer with exactly the captured keys, in the captured order; spec mode keeps the whole contact.

const ADMIN = { username: 'admin', password: 'captured-admin-password-1' };

const writes = [...captureNames(), ...captureNames('site-ny')]
  .filter((n) => /(^|\/)(POST|PUT)_subscribers_/.test(n))
  .map(loadCapture)
  .filter((c) => c.status === 200 && (c.body as Json)?.contact !== undefined);

describe('real mode: contact write answers hold exactly the captured keys', () => {
  let sim: RunningSimulator;
  let existing: { id: number; email: string };

  beforeAll(async () => {
    ({ sim } = await withSim({ contacts: 80, seed: 4, mode: 'real', credentials: ADMIN, users: [{ ...ADMIN, capabilities: [...ALL_CAPABILITIES] }] }));
    const c2 = sim.truth().contacts.find((c) => c.id === 2)!;
    existing = { id: c2.id, email: c2.email };
  });
  afterAll(async () => {
    await sim?.close();
  });

  /** The capture's request, on the simulator's contact 2 where it wrote to an existing contact. */
  function adapted(c: Capture): { path: string; body: unknown } {
    const path = routeOf(c).replace(/^\/subscribers\/\d+/, `/subscribers/${existing.id}`);
    const body = c.request.body as Json;
    if (c.request.body_encoding !== 'json' || body === null) return { path, body: undefined };
    const updates = (c.body as Json).action_type === 'updated';
    if (body.subscriber?.email) return { path, body: { ...body, subscriber: { ...body.subscriber, email: existing.email } } };
    if (typeof body.email === 'string' && updates) return { path, body: { ...body, email: existing.email } };
    return { path, body };
  }

  it('has the captures: creates, force-updates, PUTs and method overrides of both sites', () => {
    expect(writes.map((c) => c.name)).toEqual(
      expect.arrayContaining(['POST_subscribers_create', 'POST_subscribers_force_update_tags_additive', 'PUT_subscribers_id_status_unsubscribed', 'site-ny/PUT_subscribers_id_attach_tags_only']),
    );
    expect(writes.length).toBe(20);
  });

  it('each answer: the contact keys of its capture, in order', async () => {
    const report: string[] = [];
    for (const c of writes) {
      const { path, body } = adapted(c);
      const r = await replay(sim, c, body === undefined ? { path } : { path, body });
      const want = Object.keys((c.body as Json).contact as object);
      const got = r.status === 200 ? Object.keys(r.json.contact as object) : [`status ${r.status}: ${JSON.stringify(r.json).slice(0, 120)}`];
      if (JSON.stringify(got) !== JSON.stringify(want)) report.push(`${c.name}: got ${got.join(',')}; captured ${want.join(',')}`);
    }
    expect(report).toEqual([]);
  });

  it('spec mode answers every write with the whole contact', async () => {
    const { sim: spec, call } = await withSim({ contacts: 10, seed: 4 });
    try {
      const put = await call('PUT', '/subscribers/2', { subscriber: { first_name: 'Spec' } });
      expect(Object.keys(put.json.contact)).toEqual(expect.arrayContaining(['tags', 'lists']));
      const made = await call('POST', '/subscribers', { email: 'spec.write@example.test', status: 'subscribed' });
      expect(Object.keys(made.json.contact)).toEqual(expect.arrayContaining(['tags', 'lists']));
    } finally {
      await spec.close();
    }
  });
});
