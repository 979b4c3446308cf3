import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createCrmClient } from '../../src/crm/index.js';
import { startSimulator } from '../../src/simulator/index.js';
import { KNOWN_EVENTS } from '../../src/webhooks/event-names.js';
import { registerWebhook } from '../../src/webhooks/register-webhook.js';
import { withTempDir } from './helpers.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');

describe('webhooks register', () => {
  it('creates, then updates idempotently, rotates keeping the previous secret, and writes the file 0600', async () => {
    await withTempDir(async (dir) => {
      const sim = await startSimulator({ seed: 3, contacts: 5, allowHttpWebhookUrls: true });
      const client = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password });
      const file = join(dir, 'nested', 'secrets.json');
      const read = () => JSON.parse(readFileSync(file, 'utf8')) as Record<string, string[]>;
      const crmSecret = (id: number) => sim.truth().webhooks.find((w) => w.id === id)!.secret;
      try {
        await expect(registerWebhook(client, { url: 'http://127.0.0.1:1/hook' }, file)).rejects.toThrow(/HTTPS/);
        const first = await registerWebhook(client, { url: 'http://127.0.0.1:1/hook', allowHttp: true }, file);
        expect(first).toMatchObject({ action: 'created', newSecret: true });
        expect(statSync(file).mode & 0o777).toBe(0o600);
        const s1 = read()[String(first.id)]!;
        expect(s1).toHaveLength(1);
        const hook = sim.truth().webhooks.find((w) => w.id === first.id)!;
        expect(hook).toMatchObject({ status: 'active', url: 'http://127.0.0.1:1/hook', name: 'crmsync' });
        expect([...hook.events].sort()).toEqual([...KNOWN_EVENTS].sort());
        expect(crmSecret(first.id)).toBe(s1[0]);

        // Same URL again: matched, nothing new.
        const again = await registerWebhook(client, { url: 'http://127.0.0.1:1/hook', allowHttp: true }, file);
        expect(again).toMatchObject({ id: first.id, action: 'updated', newSecret: false });
        expect(read()[String(first.id)]).toEqual(s1);
        expect(sim.truth().webhooks).toHaveLength(1);

        // Same name, new URL: the webhook moves; rotation keeps the previous secret valid.
        const rotated = await registerWebhook(client, { url: 'http://127.0.0.1:2/hook', allowHttp: true, rotate: true }, file);
        expect(rotated).toMatchObject({ id: first.id, action: 'updated', newSecret: true });
        const s2 = read()[String(first.id)]!;
        expect(s2).toHaveLength(2);
        expect(s2[1]).toBe(s1[0]);
        expect(crmSecret(first.id)).toBe(s2[0]);
        expect(sim.truth().webhooks.map((w) => w.url)).toEqual(['http://127.0.0.1:2/hook']);

        // Through the command line, with configuration from the environment.
        const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli/entry.ts', 'webhooks', 'register', '--url', 'http://127.0.0.1:2/hook', '--allow-http'], {
          cwd: ROOT,
          env: {
            ...process.env,
            CRM_BASE_URL: sim.baseUrl,
            CRM_USERNAME: sim.credentials.username,
            CRM_PASSWORD: sim.credentials.password,
            CRMSYNC_WEBHOOK_SECRETS_FILE: file,
            CRMSYNC_LOG_LEVEL: 'silent',
          },
        });
        expect(stdout).toContain(`Webhook ${first.id} updated`);
        expect(stdout).not.toContain(s2[0]!);
        expect(read()[String(first.id)]).toEqual(s2);
      } finally {
        await client.close();
        await sim.close();
      }
    });
  });
});
