import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';
import { createCrmClient, crmClientFromConfig, ForbiddenError, withCrmClient } from '../../src/crm/index.js';
import { buildSchemas } from '../../src/crm/schemas/index.js';
import { createTimestampNormalizer } from '../../src/crm/timestamps.js';
import { ALL_CAPABILITIES, startSimulator } from '../../src/simulator/index.js';

describe('client construction', () => {
  it('from configuration: CRM_* variables, with a ConfigError naming what is missing', async () => {
    const sim = await startSimulator({ contacts: 12, seed: 4, timezone: 'Europe/Berlin' });
    try {
      const config = loadConfig({
        CRM_BASE_URL: sim.baseUrl,
        CRM_USERNAME: sim.credentials.username,
        CRM_PASSWORD: sim.credentials.password,
        CRM_TIMEZONE: 'Europe/Berlin',
        CRM_MAX_RPS: '500',
        CRM_MAX_CONCURRENCY: '3',
      });
      const client = crmClientFromConfig(config);
      try {
        await client.verifyCredentials();
        const page = await client.contacts.listPage({ page: 1, perPage: 50, order: 'asc' });
        expect(page.total).toBe(12);
        const truth = sim.truth().contacts.find((c) => c.id === page.items[0]!.id)!;
        // The simulator writes site time (Berlin); the client reads it back to the same instant.
        expect(truth.created_at).not.toContain('T'); // zone-less, in Berlin time
        expect(page.items[0]!.created_at).toBe(truth.created_at_iso);
        expect(client.limiter.snapshot().rps).toBe(500);
      } finally {
        await client.close();
      }
      expect(() => crmClientFromConfig(loadConfig({ CRM_BASE_URL: sim.baseUrl }))).toThrow(ConfigError);
      expect(() => crmClientFromConfig(loadConfig({ CRM_BASE_URL: sim.baseUrl }))).toThrow(/CRM_USERNAME, CRM_PASSWORD/);
    } finally {
      await sim.close();
    }
  });

  it('clients of one CRM user share one process-wide limiter; other users get their own', async () => {
    const opts = { baseUrl: 'https://crm.example.com/v2', username: 'shared-user', password: 'pw-123456' };
    const a = createCrmClient(opts);
    const b = createCrmClient(opts);
    const c = createCrmClient({ ...opts, username: 'other-user' });
    try {
      expect(a.limiter).toBe(b.limiter);
      expect(a.limiter).not.toBe(c.limiter);
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });

  it('verifyCredentials takes a 403 on reports as good credentials, and names what a user who may read nothing lacks', async () => {
    const sim = await startSimulator({
      contacts: 3,
      users: [
        { username: 'admin', password: 'admin-pass-1', capabilities: [...ALL_CAPABILITIES] },
        { username: 'no-dash', password: 'no-dash-pass-1', capabilities: ['crm_read_contacts'] },
        { username: 'nothing', password: 'nothing-pass-1', capabilities: [] },
      ],
      credentials: { username: 'admin', password: 'admin-pass-1' },
    });
    try {
      // A contacts-only user: the reports route refuses (403), so the credentials are proven by a contact read.
      await withCrmClient({ baseUrl: sim.baseUrl, username: 'no-dash', password: 'no-dash-pass-1' }, async (client) => {
        await client.verifyCredentials();
        expect((await client.contacts.listPage({ page: 1, perPage: 5 })).total).toBe(3);
        await expect(client.reports.options(['statuses'])).rejects.toMatchObject({ capabilities: ['crm_view_dashboard'] });
      });
      await withCrmClient({ baseUrl: sim.baseUrl, username: 'nothing', password: 'nothing-pass-1' }, async (client) => {
        const e = await client.verifyCredentials().catch((x: unknown) => x);
        expect(e).toBeInstanceOf(ForbiddenError);
        expect((e as ForbiddenError).capabilities).toContain('crm_read_contacts');
        expect((e as Error).message).toMatch(/"nothing" but refused to read \(403\)/);
        expect((e as Error).message).not.toContain('nothing-pass-1');
      });
    } finally {
      await sim.close();
    }
  });
});

describe('schemas keep what they do not know and tolerate what is missing', () => {
  const s = buildSchemas(createTimestampNormalizer('UTC'));
  it('a minimal contact parses with nulls; unknown keys stay in raw; bad ids are named', () => {
    const minimal = s.Contact.parse({ id: '7', email: 'a@b.c', brand_new_field: { x: 1 } });
    expect(minimal).toMatchObject({ id: 7, email: 'a@b.c', first_name: null, tags: [], lists: [], custom_values: {}, created_at: null, status: '' });
    expect(minimal.raw).toMatchObject({ brand_new_field: { x: 1 } });
    const bad = s.Contact.safeParse({ id: 'seven', email: 'a@b.c', tags: [{ id: 'x' }] });
    expect(bad.success).toBe(false);
    const paths = bad.error!.issues.map((i) => i.path.join('.'));
    expect(paths).toEqual(expect.arrayContaining(['id', 'tags.0.id']));
  });
  it('counts as strings, [] for objects, flags as "0"/"1"', () => {
    expect(s.List.parse({ id: '3', title: 'L', is_public: '0', subscribersCount: '12' })).toMatchObject({ id: 3, is_public: false, subscribers_count: 12 });
    expect(s.Campaign.parse({ id: 1, title: 'C', stats: [] }).stats).toEqual({});
    expect(s.Campaign.parse({ id: 1, title: 'C', stats: { sent: '5', views: 2 } }).stats).toEqual({ sent: 5, views: 2 });
    expect(
      s.FunnelSubscriber.parse({ id: 1, funnel_id: '2', subscriber_id: '3', metrics: [{ id: 1, funnel_id: '2', sequence_id: '4', subscriber_id: '3', benchmark_value: '1.5' }] }).metrics[0],
    ).toMatchObject({
      sequence_id: 4,
      benchmark_value: 1.5,
    });
  });
});
