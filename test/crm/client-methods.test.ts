import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CrmClient, DuplicateError, NotFoundError, ValidationError } from '../../src/crm/index.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { clientFor } from './helpers/sim-client.js';

/** Every client method against the simulator, checked against the simulator's ground truth. */
for (const mode of ['spec', 'real'] as const) {
  describe(`client methods against the simulator (${mode} mode)`, () => {
    let sim: RunningSimulator;
    let client: CrmClient;

    beforeAll(async () => {
      sim = await startSimulator({ mode, contacts: 60, seed: 7, allowHttpWebhookUrls: true });
      client = clientFor(sim, { methodOverride: mode === 'real' });
    });
    afterAll(async () => {
      await client.close();
      await sim.close();
    });

    it('contacts: listPage in id order with filters, get, getByEmail, misses are null', async () => {
      const truth = sim.truth();
      const page = await client.contacts.listPage({ page: 1, perPage: 10, order: 'asc', orderBy: 'id' });
      expect(page.total).toBe(truth.contacts.length);
      expect(page.lastPage).toBe(Math.ceil(truth.contacts.length / 10));
      const ids = truth.contacts.map((c) => c.id).sort((a, b) => a - b);
      expect(page.items.map((c) => c.id)).toEqual(ids.slice(0, 10));
      const desc = await client.contacts.listPage({ page: 1, perPage: 5, order: 'desc' });
      expect(desc.items.map((c) => c.id)).toEqual([...ids].reverse().slice(0, 5));

      const subscribed = await client.contacts.listPage({ page: 1, perPage: 100, statuses: ['subscribed'] });
      expect(subscribed.total).toBe(truth.contacts.filter((c) => c.status === 'subscribed').length);
      expect(subscribed.items.every((c) => c.status === 'subscribed')).toBe(true);

      const first = truth.contacts.find((c) => c.id === ids[0])!;
      const got = await client.contacts.get(first.id, { with: ['stats'] });
      expect(got?.email).toBe(first.email);
      expect(got?.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/);
      expect((await client.contacts.getByEmail(first.email.toUpperCase()))?.id).toBe(first.id);
      expect(await client.contacts.get(999_999)).toBeNull();
      expect(await client.contacts.getByEmail('nobody-here@example.test')).toBeNull();
    });

    it('contacts: create, duplicate, upsert, update with tag changes, delete', async () => {
      const email = `client.${mode}@example.test`;
      const created = await client.contacts.create({ email, status: 'subscribed', first_name: 'Cli', custom_values: {} });
      expect(created.actionType).toBe('created');
      // The real plugin's answer has no tags or lists when the create set none: nothing is claimed.
      expect(['tags' in created.contact, 'lists' in created.contact, 'custom_values' in created.contact]).toEqual(mode === 'spec' ? [true, true, false] : [false, false, false]);
      expect(sim.truth().contacts.find((c) => c.id === created.contact.id)?.email).toBe(email);
      await expect(client.contacts.create({ email, status: 'subscribed' })).rejects.toBeInstanceOf(DuplicateError);

      const up = await client.contacts.upsert({ email, status: 'subscribed', last_name: 'Upserted' });
      expect(up.actionType).toBe('updated');
      expect(up.contact.id).toBe(created.contact.id);
      expect(up.contact.last_name).toBe('Upserted');

      const tag = (await client.tags.list())[0]!;
      const updated = await client.contacts.update(created.contact.id, { first_name: 'Changed', attach_tags: [tag.id] });
      expect(updated.first_name).toBe('Changed');
      const truthRow = sim.truth().contacts.find((c) => c.id === created.contact.id)!;
      expect(truthRow.tags).toContain(tag.id);

      await expect(client.contacts.update(999_999, { first_name: 'x' })).rejects.toBeInstanceOf(NotFoundError);
      await expect(client.contacts.create({ email: 'not-an-email', status: 'subscribed' })).rejects.toBeInstanceOf(ValidationError);

      await client.contacts.delete(created.contact.id);
      expect(sim.truth().contacts.some((c) => c.id === created.contact.id)).toBe(false);
      expect(await client.contacts.get(created.contact.id)).toBeNull();
    });

    it('contacts: notes list, create, update', async () => {
      const id = sim.truth().contacts[0]!.id;
      const note = await client.contacts.notes.create(id, { title: 'Call', description: '<p>hello</p>', type: 'call' });
      expect(note.title).toBe('Call');
      const changed = await client.contacts.notes.update(id, note.id, { title: 'Call 2', description: '<p>x</p>', type: 'call' });
      expect(changed.title).toBe('Call 2');
      const page = await client.contacts.notes.listPage(id, { page: 1, perPage: 10 });
      expect(page.items.some((n) => n.id === note.id && n.title === 'Call 2')).toBe(true);
    });

    it('tags and lists: list all pages, get, create, duplicate, update, delete', async () => {
      for (const api of [client.tags, client.lists] as const) {
        const before = await api.list();
        const kind = api === client.tags ? 'tags' : 'lists';
        expect(before.map((t) => t.id).sort()).toEqual(
          sim
            .truth()
            [kind].map((t) => Number(t.id))
            .sort(),
        );
        const made = await api.create({ title: `Made ${kind} ${mode}`, description: 'd' });
        expect(made.title).toBe(`Made ${kind} ${mode}`);
        await expect(api.create({ title: `Made ${kind} ${mode}` })).rejects.toBeInstanceOf(DuplicateError);
        await api.update(made.id, { title: `Renamed ${kind} ${mode}` });
        expect((await api.get(made.id))?.title).toBe(`Renamed ${kind} ${mode}`);
        await api.delete(made.id);
        expect(await api.get(made.id)).toBeNull();
        expect(await api.get(999_999)).toBeNull();
      }
    });

    it('companies: listPage, get, create, update, attach, delete', async () => {
      const made = await client.companies.create({ name: `Client Co ${mode}`, employees_number: 12, type: 'Partner' });
      expect(made.name).toBe(`Client Co ${mode}`);
      const page = await client.companies.listPage({ page: 1, perPage: 50 });
      expect(page.items.some((c) => c.id === made.id)).toBe(true);
      expect((await client.companies.get(made.id))?.employees_number).toBe(12);
      await client.companies.update(made.id, { industry: 'Testing' });
      expect((await client.companies.get(made.id))?.industry).toBe('Testing');
      const contactId = sim.truth().contacts[1]!.id;
      await client.companies.attachSubscribers({ subscriberIds: [contactId], companyIds: [made.id] });
      expect(sim.truth().contacts.find((c) => c.id === contactId)?.company_ids).toContain(made.id);
      await client.companies.delete(made.id);
      expect(await client.companies.get(made.id)).toBeNull();
    });

    it('custom fields, campaigns and their status report, templates, sequences', async () => {
      const fields = await client.customFields.list();
      expect(fields.length).toBeGreaterThan(0);
      expect(fields.every((f) => f.slug && f.type)).toBe(true);

      const campaigns = await client.campaigns.listPage({ page: 1, perPage: 50, withStats: true });
      expect(campaigns.total).toBe(sim.truth().campaigns.length);
      const c = campaigns.items[0]!;
      expect((await client.campaigns.get(c.id))?.title).toBe(c.title);
      const status = await client.campaigns.status(c.id, 1);
      expect(status.campaign.id).toBe(c.id);
      expect(Array.isArray(status.stat)).toBe(true);
      const dup = await client.campaigns.duplicate(c.id);
      expect(dup?.id).not.toBe(c.id);
      await client.campaigns.setTitle(c.id, `Retitled ${mode}`);
      expect((await client.campaigns.get(c.id))?.title).toBe(`Retitled ${mode}`);
      const working = sim.truth().campaigns.find((x) => x.status === 'working');
      if (working) {
        await client.campaigns.pause(Number(working.id));
        expect((await client.campaigns.get(Number(working.id)))?.status).toBe('paused');
        await client.campaigns.resume(Number(working.id));
      }
      await expect(client.campaigns.pause(c.id)).rejects.toBeInstanceOf(c.status === 'working' ? Error : ValidationError);
      expect(await client.campaigns.get(999_999)).toBeNull();
      const before = sim.truth().campaigns.length;
      const copyId = dup!.id;
      await client.campaigns.delete(copyId);
      expect(sim.truth().campaigns.length).toBe(before - 1);
      expect(await client.campaigns.get(copyId)).toBeNull();

      const templates = await client.templates.listPage({ page: 1, perPage: 5, order: 'asc' });
      expect(templates.total).toBe(sim.truth().templates.length);
      expect(templates.items.every((t) => Number.isInteger(t.id) && t.id > 0 && t.title)).toBe(true);
      if (mode === 'real') {
        // Email sequences are the pro add-on's: the captured free plugin has no /sequences route.
        await expect(client.sequences.listPage({ page: 1, perPage: 50 })).rejects.toMatchObject({ code: 'CRM_NOT_FOUND', routeMissing: true });
        return;
      }
      const sequences = await client.sequences.listPage({ page: 1, perPage: 50, withStats: true });
      expect(sequences.total).toBe(sim.truth().sequences.length);
      const s = sequences.items[0]!;
      expect((await client.sequences.get(s.id))?.title).toBe(s.title);
      expect(await client.sequences.get(999_999)).toBeNull();
      const subs = await client.sequences.subscribersPage(s.id, { page: 1, perPage: 100 });
      const live = new Set(sim.truth().contacts.map((c) => c.id));
      expect(subs.items.every((x) => x.subscriber_id !== null && live.has(x.subscriber_id))).toBe(true);
    });

    it('funnels: listPage with counts, get, status, subscribers page, one subscriber, add and remove', async () => {
      const page = await client.funnels.listPage({ page: 1, perPage: 10, withSubscribersCount: true });
      expect(page.total).toBe(sim.truth().funnels.length);
      const f = page.items[0]!;
      expect((await client.funnels.get(f.id))?.title).toBe(f.title);
      await client.funnels.setStatus(f.id, 'paused');
      expect((await client.funnels.get(f.id))?.status).toBe('paused');
      await client.funnels.setStatus(f.id, 'published');
      expect(sim.truth().funnels.find((x) => Number(x.id) === f.id)?.status).toBe('published');
      let fid = f.id;
      let contact: number;
      if (mode === 'spec') {
        contact = sim.truth().contacts[2]!.id;
        await client.funnels.addSubscribers(fid, [contact]);
      } else {
        // The plugin has no route that adds contacts to a funnel (its route index): a seeded one.
        await expect(client.funnels.addSubscribers(fid, [sim.truth().contacts[2]!.id])).rejects.toMatchObject({ code: 'CRM_NOT_FOUND', routeMissing: true });
        const run = sim.truth().funnelSubscribers.find((s) => s.status === 'active')!;
        [fid, contact] = [Number(run.funnelId), Number(run.subscriberId)];
      }
      // No status: every subscriber on both (the real CRM takes status=all literally and returns none).
      const subs = await client.funnels.subscribersPage(fid, { page: 1, perPage: 100 });
      const mine = subs.items.find((s) => s.subscriber_id === contact);
      expect(mine?.funnel_id).toBe(fid);
      const detail = await client.funnels.subscriber(fid, contact);
      expect(detail?.subscriber.subscriber_id).toBe(contact);
      await client.funnels.removeSubscriber(fid, contact);
      expect(sim.truth().funnelSubscribers.some((s) => s.funnelId === fid && s.subscriberId === contact)).toBe(false);
      expect(await client.funnels.subscriber(fid, contact)).toBeNull();
      expect(await client.funnels.get(999_999)).toBeNull();
    });

    it('reports: each returns a snapshot with its parameters', async () => {
      const campaignId = Number(sim.truth().campaigns[0]!.id);
      const funnelId = Number(sim.truth().funnels[0]!.id);
      // Each kind of CRM has its own report routes (the real plugin lacks the interface's).
      const snaps =
        mode === 'spec'
          ? [
              await client.reports.options(['tags', 'lists', 'statuses']),
              await client.reports.overview({ dateRange: '30_days' }),
              await client.reports.subscriberGrowth({ groupBy: 'day' }),
              await client.reports.topSubscribers({ limit: 5 }),
              await client.reports.campaignEmailStats(campaignId),
              await client.reports.funnelConversionStats(funnelId),
              await client.reports.automationSteps(funnelId),
            ]
          : [
              await client.reports.options(['tags', 'lists', 'statuses']),
              await client.reports.dashboardStats(),
              await client.reports.series('subscribers'),
              await client.reports.series('email-opens'),
              await client.reports.funnelReport(funnelId),
            ];
      if (mode === 'real') {
        expect(snaps[4]!.params).toEqual({ funnel_id: funnelId });
        expect(snaps[2]!.data.stats).toBeTypeOf('object');
      }
      for (const s of snaps) {
        expect(s.report).toMatch(/^[a-z_]+$/);
        expect(s.data).toBeTypeOf('object');
        expect('__bench' in s.data).toBe(false);
      }
      if (mode === 'spec') {
        expect(snaps[3]!.params).toEqual({ limit: 5 });
        expect(snaps[4]!.params).toEqual({ campaign_id: campaignId });
      }
      await client.verifyCredentials();
    });

    it('webhooks: create, list, update, test, deliveries, delete; the secret never shows', async () => {
      const made = await client.webhooks.create({ name: `hook ${mode}`, url: 'https://example.test/hook', events: ['contact.created'], secret: 'whsec-very-secret-1' });
      expect(made?.name).toBe(`hook ${mode}`);
      const all = await client.webhooks.list();
      const mine = all.find((w) => w.id === made!.id)!;
      expect(mine).toBeDefined();
      expect(JSON.stringify(mine)).not.toContain('whsec-very-secret-1');
      const upd = await client.webhooks.update(mine.id, { name: `hook ${mode} 2` });
      expect(upd?.name ?? (await client.webhooks.list()).find((w) => w.id === mine.id)?.name).toBe(`hook ${mode} 2`);
      if (mode === 'spec') {
        await client.webhooks.test(mine.id);
        const deliveries = await client.webhooks.deliveriesPage(mine.id, { page: 1, perPage: 10 });
        expect(Array.isArray(deliveries.items)).toBe(true);
      } else {
        // The free plugin's webhooks are incoming ones: no test delivery, no delivery log, and the
        // stored URL is the site's own (site-ny/GET_webhooks.json).
        expect(mine.url).toMatch(/\/\?fluentcrm=1&route=contact&hash=/);
        await expect(client.webhooks.test(mine.id)).rejects.toMatchObject({ code: 'CRM_NOT_FOUND', routeMissing: true });
        await expect(client.webhooks.deliveriesPage(mine.id, { page: 1, perPage: 10 })).rejects.toMatchObject({ code: 'CRM_NOT_FOUND', routeMissing: true });
      }
      await client.webhooks.delete(mine.id);
      expect((await client.webhooks.list()).some((w) => w.id === mine.id)).toBe(false);
    });

    it('counts requests for run accounting', () => {
      const s = client.stats();
      expect(s.requests).toBeGreaterThan(40);
      expect(s.status429).toBe(0);
    });
  });
}
