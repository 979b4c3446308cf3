import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { registerWebhook } from '../../src/webhooks/register-webhook.js';
import { backfillContacts, contactDifferences, withE2eEnv } from './e2e-helpers.js';

describe('webhooks end to end with the simulator', () => {
  it('turns CRM writes into signed deliveries that land in the warehouse equal to the truth, once each', async () => {
    await withE2eEnv(async (env) => {
      const { sim, service } = env;
      expect(await backfillContacts(env)).toBe(30);
      const reg = await registerWebhook(env.client, { url: service.url, allowHttp: true }, env.secretsFile);
      expect(reg.action).toBe('created');

      const t0 = sim.truth();
      const ids = t0.contacts.slice(0, 10).map((c) => c.id);
      const tagId = Number(t0.tags[0]!.id);
      const listId = Number(t0.lists[0]!.id);
      const created = sim.mutate.createContact({ email: 'webhook-new@example.com', status: 'subscribed', first_name: 'New', tags: [tagId] });
      sim.mutate.updateContact(ids[0]!, { first_name: 'Renamed', city: 'Lyon' });
      const c1 = t0.contacts[1]!;
      if (c1.tags.includes(tagId)) sim.mutate.removeTag(c1.id, tagId);
      else sim.mutate.addTag(c1.id, tagId);
      sim.mutate.addToList(ids[2]!, listId);
      sim.mutate.setStatus(ids[3]!, ids[3]! % 2 ? 'unsubscribed' : 'pending');
      sim.mutate.deleteContact(ids[4]!);
      sim.mutate.emailEvent('email.opened', ids[5]!);
      sim.mutate.emailEvent('email.clicked', ids[5]!);
      sim.mutate.emailEvent('email.bounced', ids[6]!);
      sim.mutate.commerceEvent('commerce.order_created', { order: { id: 'o-17', total: '12.50', currency: 'EUR', contact_id: ids[7]! } });
      const campaign = sim.mutate.createCampaign('Webhook campaign');
      const funnelId = Number(t0.funnels[0]!.id);
      sim.mutate.addFunnelSubscriber(funnelId, ids[9]!);
      // Several quick edits of one contact: coalesced into one refetch per batch, last state wins.
      for (let i = 0; i < 5; i++) sim.mutate.updateContact(ids[8]!, { last_name: `Edit ${i}` });

      await sim.settleWebhooks(20_000);
      const truth = sim.truth();
      const delivered = truth.deliveries.filter((d) => d.status === 'success');
      expect(truth.deliveries.filter((d) => d.status !== 'success')).toEqual([]);
      expect(delivered.length).toBeGreaterThanOrEqual(15);
      await env.applySpooled();

      const touched = [...ids.slice(0, 9), created.id];
      expect(await contactDifferences(env, touched, truth)).toEqual([]);

      const counts = await env.warehouse(async (w) => ({
        events: await w.query(`SELECT count(*)::INT AS n, count(DISTINCT delivery_id)::INT AS d, count(*) FILTER (WHERE status = 'applied')::INT AS ok FROM webhook_events`),
        email: await w.query(`SELECT event, contact_id FROM email_events ORDER BY event`),
        commerce: await w.query(`SELECT order_id, amount, currency, contact_id FROM commerce_events`),
      }));
      expect(counts.events[0]).toEqual({ n: delivered.length, d: delivered.length, ok: delivered.length });
      expect(counts.email.map((r) => [r.event, Number(r.contact_id)])).toEqual([
        ['email.bounced', ids[6]],
        ['email.clicked', ids[5]],
        ['email.opened', ids[5]],
      ]);
      expect(counts.commerce.map((r) => ({ ...r, contact_id: Number(r.contact_id) }))).toEqual([{ order_id: 'o-17', amount: 12.5, currency: 'EUR', contact_id: ids[7] }]);

      const marketing = await env.warehouse(async (w) => ({
        campaigns: await w.query(`SELECT id, title, status FROM campaigns WHERE id = $1`, [campaign.id]),
        subs: await w.query(`SELECT funnel_id, subscriber_id, status FROM funnel_subscribers WHERE funnel_id = $1 AND subscriber_id = $2`, [funnelId, ids[9]]),
      }));
      const tc = truth.campaigns.find((c) => Number(c.id) === campaign.id)!;
      expect(marketing.campaigns.map((r) => ({ id: Number(r.id), title: r.title, status: r.status }))).toEqual([{ id: campaign.id, title: tc.title, status: tc.status }]);
      const ts = truth.funnelSubscribers.find((r) => Number(r.funnel_id ?? r.funnelId) === funnelId && Number(r.subscriber_id ?? r.subscriberId) === ids[9])!;
      expect(marketing.subs.map((r) => [Number(r.funnel_id), Number(r.subscriber_id), r.status])).toEqual([[funnelId, ids[9], ts.status]]);

      // The CRM retrying deliveries it already made: acknowledged, not applied twice.
      for (const d of delivered.slice(0, 5)) {
        const res = await request(service.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-service-event': d.event,
            'x-service-signature': d.signature,
            'x-service-webhook-id': String(d.webhookId),
            'x-service-delivery': String(d.id),
          },
          body: d.body,
        });
        expect(res.statusCode).toBe(200);
        await res.body.dump();
      }
      expect(service.metrics.snapshot().received.duplicate).toBe(5);
      await env.applySpooled();
      const after = await env.warehouse((w) => w.query(`SELECT count(*)::INT AS n FROM webhook_events`));
      expect(after[0]!.n).toBe(delivered.length);

      // Rotating the secret while the CRM keeps sending: nothing is refused.
      const rotated = await registerWebhook(env.client, { url: service.url, allowHttp: true, rotate: true }, env.secretsFile);
      expect(rotated).toMatchObject({ id: reg.id, action: 'updated', newSecret: true });
      sim.mutate.updateContact(ids[0]!, { first_name: 'AfterRotation' });
      await sim.settleWebhooks(20_000);
      const final = sim.truth();
      expect(final.deliveries.filter((d) => d.status !== 'success')).toEqual([]);
      expect(service.metrics.snapshot().received.bad_signature ?? 0).toBe(0);
      expect(service.metrics.snapshot().received.unknown_webhook ?? 0).toBe(0);
      await env.applySpooled();
      expect(await contactDifferences(env, [ids[0]!], final)).toEqual([]);
    });
  });

  it('works against the quirks of the real deployment too (its base path, zone-less timestamps, string ids)', async () => {
    await withE2eEnv(
      async (env) => {
        const { sim, service } = env;
        expect(await backfillContacts(env)).toBe(12);
        await registerWebhook(env.client, { url: service.url, allowHttp: true }, env.secretsFile);
        const ids = sim
          .truth()
          .contacts.slice(0, 4)
          .map((c) => c.id);
        const created = sim.mutate.createContact({ email: 'real-mode@example.com', status: 'subscribed', first_name: 'Real' });
        sim.mutate.updateContact(ids[0]!, { last_name: 'Quirk' });
        sim.mutate.deleteContact(ids[1]!);
        sim.mutate.setStatus(ids[2]!, 'unsubscribed');
        await sim.settleWebhooks(20_000);
        const truth = sim.truth();
        expect(truth.deliveries.filter((d) => d.status !== 'success')).toEqual([]);
        await env.applySpooled();
        expect(await contactDifferences(env, [...ids, created.id], truth)).toEqual([]);
      },
      { mode: 'real', contacts: 12 },
    );
  });
});
