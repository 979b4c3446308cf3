import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCrmClient } from '../../src/crm/index.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { NoOutboundWebhooksError } from '../../src/webhooks/no-outbound-webhooks-error.js';
import { registerWebhook } from '../../src/webhooks/register-webhook.js';
import { runCli } from '../cli/run-cli.js';
import { startReplayServer } from '../crm/helpers/replay-server.js';
import { api, type Json } from '../simulator/helpers.js';
import { withTempDir } from './helpers.js';

const SITE_NY = join(import.meta.dirname, '../../../shared/fixtures/fluentcrm-2.9/site-ny');

function captured(name: string): { status: number; body: Json } {
  const file = join(SITE_NY, `${name}.json`);
  if (!existsSync(file)) throw new Error(`missing fixture ${file}: this test needs ../shared/fixtures next to the repository`);
  return JSON.parse(readFileSync(file, 'utf8')) as { status: number; body: Json };
}

const keysOf = (o: object): string[] => Object.keys(o).sort();

/** A receiver that counts what it is sent (the free plugin must send it nothing). */
async function withReceiver<T>(fn: (url: string, hits: () => number) => Promise<T>): Promise<T> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits++;
    req.resume();
    res.end('ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    return await fn(`http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/crm`, () => hits);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

async function withRealSim<T>(fn: (sim: RunningSimulator) => Promise<T>): Promise<T> {
  const sim = await startSimulator({ contacts: 5, seed: 7, mode: 'real', timezone: 'America/New_York' });
  try {
    return await fn(sim);
  } finally {
    await sim.close();
  }
}

/** Issue 14 item 9: the free plugin's POST /webhooks creates an incoming webhook. */
describe('webhooks on a CRM without outbound webhooks', () => {
  it('the simulator in real mode has incoming-webhook semantics, as captured in site-ny', async () => {
    const list = captured('GET_webhooks');
    const one = captured('GET_webhooks_id');
    const real = list.body.webhooks[0];
    await withRealSim(async (sim) =>
      withReceiver(async (ours, hits) => {
        const call = api(sim);
        const created = await call('POST', '/webhooks', { name: 'crmsync', url: ours, events: real.value.events, status: 'active', secret: 's3cret' });
        expect(created.status).toBe(200);
        const got = (await call('GET', '/webhooks')).json.webhooks[0];
        expect(keysOf(got)).toEqual(keysOf(real));
        expect(keysOf(got.value)).toEqual(keysOf(real.value));
        const origin = new URL(sim.baseUrl).origin;
        expect(got.value.url).toMatch(new RegExp(`^${origin.replace(/[.]/g, '\\.')}/\\?fluentcrm=1&route=contact&hash=\\w+$`));
        expect(got).toMatchObject({ object_type: real.object_type, object_id: real.object_id });
        expect(got.value).toMatchObject({ name: 'crmsync', status: 'active', secret: 's3cret', events: real.value.events, tags: [], lists: [], companies: [] });
        expect(got.created_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);

        const put = await call('PUT', `/webhooks/${got.id}`, { url: ours, status: 'inactive' });
        expect(put.status).toBe(200);
        const after = (await call('GET', '/webhooks')).json.webhooks[0];
        expect(after.value.url).toBe(got.value.url); // PUT ignores url
        expect(after.value.status).toBe('inactive'); // and stores the rest

        const single = await call('GET', `/webhooks/${got.id}`);
        expect(single.status).toBe(one.status);
        expect(single.json).toEqual(one.body);

        await call('PUT', `/webhooks/${got.id}`, { status: 'active' });
        await call('POST', '/subscribers', { email: 'nobody.hears@example.test', status: 'subscribed' });
        await sim.settleWebhooks(2_000);
        expect(hits()).toBe(0); // nothing is sent outbound
      }),
    );
  });

  it('`crmsync webhooks register` undoes the incoming webhook it created, exits non-zero and says how to stay fresh', async () => {
    await withTempDir(async (dir) =>
      withRealSim(async (sim) => {
        const file = join(dir, 'secrets.json');
        const res = await runCli(['webhooks', 'register', '--url', 'https://hooks.example.test/webhooks/crm'], {
          CRM_BASE_URL: sim.baseUrl,
          CRM_USERNAME: sim.credentials.username,
          CRM_PASSWORD: sim.credentials.password,
          CRMSYNC_DATA_DIR: dir,
          CRMSYNC_WEBHOOK_SECRETS_FILE: file,
          CRMSYNC_LOG_LEVEL: 'silent',
        });
        expect(res.code, res.stderr).not.toBe(0);
        expect(res.stdout).not.toMatch(/created/);
        expect(res.stderr).toMatch(/sends no outbound webhooks/);
        expect(res.stderr).toMatch(/deleted it again/);
        expect(res.stderr).toMatch(/crmsync sync/);
        expect(res.stderr).toMatch(/--reconcile/);
        expect(res.stderr).toMatch(/CRM_NO_OUTBOUND_WEBHOOKS/);
        expect(res.stderr).not.toMatch(/hash=/); // the site's hash is a credential
        expect((await api(sim)('GET', '/webhooks')).json.webhooks).toEqual([]); // nothing left on the site
        expect(existsSync(file)).toBe(false); // no secret for a webhook that cannot exist
      }),
    );
  });

  it('an incoming webhook of the same name is left alone, and a CRM without /webhooks is reported the same way', async () => {
    await withTempDir(async (dir) => {
      const file = join(dir, 'secrets.json');
      await withRealSim(async (sim) => {
        const call = api(sim);
        await call('POST', '/webhooks', { name: 'crmsync', url: 'https://old.example.test/hook', status: 'active' });
        const before = (await call('GET', '/webhooks')).json.webhooks;
        const client = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password });
        try {
          const err = await registerWebhook(client, { url: 'https://hooks.example.test/webhooks/crm' }, file).catch((e: unknown) => e);
          expect(err).toBeInstanceOf(NoOutboundWebhooksError);
          expect((err as Error).message).toMatch(/left it unchanged/);
        } finally {
          await client.close();
        }
        expect((await call('GET', '/webhooks')).json.webhooks).toEqual(before);
      });

      const replay = await startReplayServer('/wp-json/fluent-crm/v2');
      replay.respond({ status: 404, body: JSON.stringify({ code: 'rest_no_route', message: 'No route was found matching the URL and request method.', data: { status: 404 } }) });
      const client = createCrmClient({ baseUrl: replay.baseUrl, username: 'u', password: 'p' });
      try {
        const err = await registerWebhook(client, { url: 'https://hooks.example.test/webhooks/crm' }, file).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(NoOutboundWebhooksError);
        expect((err as Error).message).toMatch(/no webhook endpoint/);
        expect(replay.requests.map((r) => r.method)).toEqual(['GET']);
      } finally {
        await client.close();
        await replay.close();
      }
    });
  });
});
