import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate } from '../../src/simulator/auth.js';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { withTimingSafeEqualSpy } from '../helpers/timing-safe-equal-spy.js';
import { api, basic, isSpecError, withSim, type Api } from './helpers.js';

let sim: RunningSimulator;
let call: Api;

beforeAll(async () => {
  ({ sim, call } = await withSim({ contacts: 30, credentials: { username: 'admin-user', password: 'admin-pass-123' } }));
});
afterAll(async () => {
  await sim.close();
});

describe('Authentication (spec: Authentication 1, 6, 7, 10)', () => {
  it('401 without credentials and with a wrong password', async () => {
    const none = await api(sim, null)('GET', '/subscribers');
    expect(none.status).toBe(401);
    expect(isSpecError(none.json, 401)).toBe(true);
    const wrong = await api(sim, { username: 'admin-user', password: 'nope' })('GET', '/subscribers');
    expect(wrong.status).toBe(401);
    const unknown = await api(sim, { username: 'ghost', password: 'admin-pass-123' })('GET', '/subscribers');
    expect(unknown.status).toBe(401);
  });

  it('accepts HTTP Basic of the configured user', async () => {
    const r = await fetch(`${sim.baseUrl}/tags`, { headers: { authorization: basic('admin-user', 'admin-pass-123') } });
    expect(r.status).toBe(200);
    await r.body?.cancel();
  });

  it('accepts the testing-only _host_http_referer query parameter', async () => {
    const r = await fetch(`${sim.baseUrl}/tags?_host_http_referer=${encodeURIComponent('admin-user:admin-pass-123')}`);
    expect(r.status).toBe(200);
    await r.body?.cancel();
  });

  it('403 rest_forbidden for a valid user lacking the capability (manager cannot delete)', async () => {
    expect(sim.managerCredentials).toBeDefined();
    const manager = api(sim, sim.managerCredentials ?? null);
    expect((await manager('GET', '/subscribers/3')).status).toBe(200);
    const del = await manager('DELETE', '/subscribers/3');
    expect(del.status).toBe(403);
    expect(isSpecError(del.json, 403, 'rest_forbidden')).toBe(true);
    expect(sim.truth().contacts.some((c) => c.id === 3)).toBe(true);
    expect((await manager('DELETE', '/tags/1')).status).toBe(403);
    expect((await manager('GET', '/webhooks')).status).toBe(403);
  });

  it('404 for a wrong path, also without credentials', async () => {
    const r = await call('GET', '/no-such-thing');
    expect(r.status).toBe(404);
    expect(isSpecError(r.json, 404)).toBe(true);
    const anon = await api(sim, null)('GET', '/no-such-thing');
    expect(anon.status).toBe(404);
    const outside = await fetch(sim.baseUrl.replace(/\/v2$/, '/v1/subscribers'));
    expect(outside.status).toBe(404);
    await outside.body?.cancel();
  });

  it('the bounce handler is public and reports a bad security code as 200 with status false', async () => {
    const anon = api(sim, null);
    const bad = await anon('POST', '/public/bounce_handler/simulator?security_code=wrong', { email: 'x@example.test' });
    expect(bad.status).toBe(200);
    expect(bad.json.status).toBe(false);
    const email = sim.truth().contacts.find((c) => c.status === 'subscribed')?.email as string;
    const good = await anon('POST', '/public/bounce_handler/simulator?security_code=simulator-bounce-code', { email, type: 'bounce' });
    expect(good.json.status).toBe(true);
    expect(sim.truth().contacts.find((c) => c.email === email)?.status).toBe('bounced');
  });
});

describe('repair endpoint (spec: Other)', () => {
  it('POST /setting/db-index-health/repair answers 200 with pending true while another repair holds the lock', async () => {
    const first = await call('POST', '/setting/db-index-health/repair');
    expect(first.status).toBe(200);
    expect(first.json.pending).toBe(false);
    const second = await call('POST', '/setting/db-index-health/repair');
    expect(second.status).toBe(200);
    expect(second.json.pending).toBe(true);
    expect((await api(sim, sim.managerCredentials ?? null)('POST', '/setting/db-index-health/repair')).status).toBe(403);
  });
});

describe('users option and the capability table', () => {
  it('enforces per-route capabilities for custom users', async () => {
    const s = await withSim({
      contacts: 10,
      credentials: { username: 'root', password: 'root-password' },
      users: [
        { username: 'root', password: 'root-password', capabilities: ['crm_manage_settings', 'crm_read_contacts'] },
        { username: 'reader', password: 'reader-password', capabilities: ['crm_read_contacts'] },
        { username: 'analyst', password: 'analyst-password', capabilities: ['crm_view_dashboard'] },
      ],
    });
    try {
      const reader = api(s.sim, { username: 'reader', password: 'reader-password' });
      expect((await reader('GET', '/subscribers')).status).toBe(200);
      expect((await reader('POST', '/subscribers', { email: 'r@example.org', status: 'subscribed' })).status).toBe(403);
      expect((await reader('GET', '/reports/overview')).status).toBe(403);
      expect((await reader('GET', '/campaigns')).status).toBe(403);
      expect((await reader('GET', '/funnels')).status).toBe(403);
      const analyst = api(s.sim, { username: 'analyst', password: 'analyst-password' });
      expect((await analyst('GET', '/reports/automations/1/steps')).status).toBe(200);
      expect((await analyst('GET', '/subscribers')).status).toBe(403);
      expect((await analyst('GET', '/sequences')).status).toBe(403);
    } finally {
      await s.sim.close();
    }
  });
});

describe('admin ground-truth endpoint', () => {
  it('is off by default and outside /v2 when on; it needs the admin credentials', async () => {
    expect(sim.adminUrl).toBeUndefined();
    const off = await fetch(sim.baseUrl.replace(/\/v2$/, '/__simulator/truth'), { headers: { authorization: basic('admin-user', 'admin-pass-123') } });
    expect(off.status).toBe(404);
    await off.body?.cancel();
    const s = await withSim({ contacts: 15, admin: true });
    try {
      const url = s.sim.adminUrl as string;
      expect(url).not.toContain('/v2');
      const anon = await fetch(url);
      expect(anon.status).toBe(401);
      await anon.body?.cancel();
      const r = await fetch(url, { headers: { authorization: basic(s.sim.credentials.username, s.sim.credentials.password) } });
      const body = (await r.json()) as { contacts: unknown[] };
      expect(body.contacts).toHaveLength(15);
      expect(body).toEqual(JSON.parse(JSON.stringify(s.sim.truth())));
      // Control for a simulator in another process: faults and churn.
      const auth = { authorization: basic(s.sim.credentials.username, s.sim.credentials.password), 'content-type': 'application/json' };
      const admin = url.replace(/\/truth$/, '');
      const bad = await fetch(`${admin}/faults`, { method: 'POST', headers: auth, body: JSON.stringify({ errorRate: 7 }) });
      expect(bad.status).toBe(400);
      await bad.body?.cancel();
      await (await fetch(`${admin}/faults`, { method: 'POST', headers: auth, body: JSON.stringify({ errorRate: 1 }) })).body?.cancel();
      expect((await s.call('GET', '/tags')).status).toBeGreaterThanOrEqual(500);
      await (await fetch(`${admin}/faults`, { method: 'POST', headers: auth, body: '{}' })).body?.cancel();
      expect((await s.call('GET', '/tags')).status).toBe(200);
      await (await fetch(`${admin}/churn`, { method: 'POST', headers: auth, body: JSON.stringify({ insertsPerSec: 200 }) })).body?.cancel();
      await new Promise((r) => setTimeout(r, 150));
      const stopped = (await (await fetch(`${admin}/churn`, { method: 'DELETE', headers: auth })).json()) as { inserts: number };
      expect(stopped.inserts).toBeGreaterThan(0);
      expect(s.sim.truth().contacts).toHaveLength(15 + stopped.inserts);
    } finally {
      await s.sim.close();
    }
  });

  // As for webhook signatures (verify-signature.test.ts): what decides is checked, not timing.
  it('compares passwords by crypto.timingSafeEqual on equal-length digests, whatever the length given', async () => {
    const users = [{ username: 'admin-user', password: 'admin-pass-123', capabilities: [] }];
    const as = (password: string) => authenticate(users, { authorization: basic('admin-user', password) }, new URLSearchParams());
    await withTimingSafeEqualSpy((calls) => {
      expect(as('admin-pass-123')?.username).toBe('admin-user');
      for (const wrong of ['x', 'admin-pass-12', 'admin-pass-1234', 'y'.repeat(300)]) expect(as(wrong), wrong).toBeUndefined();
      // One comparison per attempt, a short or long password included, never skipped for its length.
      expect(calls).toHaveLength(5);
      for (const [a, b] of calls) expect([a.length, b.length]).toEqual([32, 32]);
    });
    await withTimingSafeEqualSpy(
      () => expect(as('not-the-password')?.username).toBe('admin-user'),
      () => true,
    );
  });
});
