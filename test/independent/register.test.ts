/**
 * `crmsync webhooks register` as a user runs it (README "Webhooks", docs/webhooks.md "Registering
 * and rotating", docs/security.md), against register-server.ts: a CRM written from
 * ../shared/spec/crm-rest-api.md alone. What the CRM holds and received is judged from the
 * server's side; where the secret went, from the files and the command's output.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Buffer } from 'node:buffer';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../cli/run-cli.js';
import { SPEC_EVENT_NAMES, startRegisterServer, type RecordedRequest, type RegisterServer, type RegisterServerOptions } from './register-server.js';

const USER = 'api-manager';
const PASSWORD = 'abcd EFGH 1234 ijkl MNOP 5678';
const HOOK_URL = 'https://hooks.example.test/webhooks/crm';
/** A webhook of someone else's, present in the CRM: register must leave it and its secret alone. */
const FOREIGN = { id: 3, name: 'zapier', url: 'https://zap.example.test/catch', events: ['contact.created'], status: 'active', secret: 'foreign-secret-Zq81-not-ours' };

const scratch: string[] = [];
const servers: RegisterServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  for (const d of scratch) rmSync(d, { recursive: true, force: true });
});

async function setup(opts: Partial<RegisterServerOptions> = {}): Promise<{ server: RegisterServer; dir: string; file: string; env: Record<string, string> }> {
  const server = await startRegisterServer({ username: USER, password: PASSWORD, webhooks: [FOREIGN], ...opts });
  servers.push(server);
  const dir = mkdtempSync(join(tmpdir(), 'crmsync-register-'));
  scratch.push(dir);
  const env = { CRM_BASE_URL: server.baseUrl, CRM_USERNAME: USER, CRM_PASSWORD: PASSWORD, CRMSYNC_DATA_DIR: dir, CRMSYNC_LOG_LEVEL: 'trace' };
  // docs/webhooks.md, Configuration: CRMSYNC_WEBHOOK_SECRETS_FILE defaults to $CRMSYNC_DATA_DIR/webhook-secrets.json.
  return { server, dir, file: join(dir, 'webhook-secrets.json'), env };
}

function register(args: string[], env: Record<string, string>): Promise<CliResult> {
  return runCli(['webhooks', 'register', ...args], env, 50_000);
}

function readSecrets(file: string): Record<string, string[]> {
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, string[]>;
}

function bodyOf(r: RecordedRequest): Record<string, unknown> {
  return typeof r.body === 'object' && r.body !== null ? (r.body as Record<string, unknown>) : {};
}

const isWebhookWrite = (r: RecordedRequest): boolean => (r.method === 'POST' && r.path === '/webhooks') || (r.method === 'PUT' && /^\/webhooks\/\d+$/.test(r.path));

/**
 * Every secret that was in play (sent by crmsync, held by the CRM, in the file) and the password
 * appear in no output; a webhook secret travels only in a create or update body (never a URL, a
 * header or another request); the foreign webhook's secret is never sent or stored.
 */
function expectNoLeaks(server: RegisterServer, outputs: CliResult[], files: string[] = []): void {
  const secrets = new Set<string>([FOREIGN.secret]);
  for (const r of server.requests) if (typeof bodyOf(r).secret === 'string' && bodyOf(r).secret !== '') secrets.add(bodyOf(r).secret as string);
  for (const w of server.webhooks.values()) if (w.secret) secrets.add(w.secret);
  for (const f of files) if (existsSync(f)) for (const list of Object.values(readSecrets(f))) for (const s of list) secrets.add(s);
  const token = Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
  for (const out of outputs) {
    const text = out.stdout + out.stderr;
    for (const s of secrets) expect(text.includes(s), `a webhook secret was printed: ${text.slice(0, 300)}`).toBe(false);
    expect(text.includes(PASSWORD) || text.includes(token) || text.includes(encodeURIComponent(PASSWORD)), 'the password was printed').toBe(false);
  }
  for (const r of server.requests) {
    const headerText = JSON.stringify(r.headers);
    for (const s of secrets) {
      expect(r.url.includes(s) || headerText.includes(s), `a secret in the URL or headers of ${r.method} ${r.path}`).toBe(false);
      if (!isWebhookWrite(r) || s === FOREIGN.secret) expect(r.raw.includes(s), `a secret in the body of ${r.method} ${r.path}`).toBe(false);
    }
    expect(r.url.includes(PASSWORD) || r.url.includes(encodeURIComponent(PASSWORD)) || r.raw.includes(PASSWORD), 'the password outside the Authorization header').toBe(false);
  }
  for (const f of files) if (existsSync(f)) expect(readFileSync(f, 'utf8').includes(FOREIGN.secret), 'the foreign secret was stored').toBe(false);
}

/** The foreign webhook is neither addressed nor changed. */
function expectForeignUntouched(server: RegisterServer): void {
  expect(server.requests.filter((r) => r.path.startsWith(`/webhooks/${FOREIGN.id}`))).toEqual([]);
  const w = server.webhooks.get(FOREIGN.id)!;
  expect({ name: w.name, url: w.url, events: w.events, status: w.status, secret: w.secret }).toEqual({
    name: FOREIGN.name,
    url: FOREIGN.url,
    events: FOREIGN.events,
    status: FOREIGN.status,
    secret: FOREIGN.secret,
  });
}

function ours(server: RegisterServer, url: string) {
  return [...server.webhooks.values()].filter((w) => w.url === url);
}

/** A listener where the receiver would be: register must not send anything there. */
async function listenTcp(): Promise<{ server: TcpServer; port: number; connections: () => number }> {
  let n = 0;
  const server = createTcpServer((s) => {
    n += 1;
    s.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, connections: () => n };
}

describe.concurrent('crmsync webhooks register against a CRM built from the interface specification', () => {
  it('creates exactly one webhook with the URL, every event the spec names and a secret; created inactive, activated once the 0600 file holds the secret', async ({ expect }) => {
    const receiver = await listenTcp();
    const url = `https://127.0.0.1:${receiver.port}/webhooks/crm`;
    let fileAtActivation: string | null | undefined;
    let filePath = '';
    const { server, file, env } = await setup({
      onRequest: (r) => {
        if (r.method === 'PUT' && bodyOf(r).status === 'active' && fileAtActivation === undefined) fileAtActivation = existsSync(filePath) ? readFileSync(filePath, 'utf8') : null;
      },
    });
    filePath = file;
    const res = await register(['--url', url], env);
    receiver.server.close();
    expect(res.code, res.stderr).toBe(0);

    const mine = ours(server, url);
    expect(mine).toHaveLength(1);
    const w = mine[0]!;
    expect(server.webhooks.size).toBe(2);
    // Events, "Event names": every one, once.
    expect([...w.events].sort()).toEqual([...SPEC_EVENT_NAMES].sort());
    expect(w.status).toBe('active');
    expect(w.name).toBe('crmsync'); // docs/webhooks.md: "--name, default crmsync"
    // README: a secret of "at least 16 characters".
    expect(w.secret.length).toBeGreaterThanOrEqual(16);

    const creates = server.requests.filter((r) => r.method === 'POST' && r.path === '/webhooks');
    expect(creates).toHaveLength(1);
    // docs/webhooks.md: "A new webhook is created inactive, its secret written to the secrets file ... then activated".
    expect(bodyOf(creates[0]!).status).toBe('inactive');
    expect(bodyOf(creates[0]!).secret).toBe(w.secret);
    expect(fileAtActivation, 'the file held the secret when the webhook was activated').toBeTruthy();
    expect(JSON.parse(fileAtActivation!)[String(w.id)]?.[0]).toBe(w.secret);

    // docs/webhooks.md: `{"<webhook id>": ["current", "previous"]}`, mode 0600.
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readSecrets(file)).toEqual({ [String(w.id)]: [w.secret] });
    expect(receiver.connections()).toBe(0);
    expectForeignUntouched(server);
    expectNoLeaks(server, [res], [file]);
  });

  it('running it again for the same URL updates that webhook (no duplicate) and keeps the secret', async ({ expect }) => {
    const { server, file, env } = await setup();
    const first = await register(['--url', HOOK_URL], env);
    expect(first.code, first.stderr).toBe(0);
    const [w] = ours(server, HOOK_URL);
    const secret = w!.secret;
    // The CRM disabled it meanwhile (States: "5 consecutive failures"), and its events were trimmed in the admin.
    w!.status = 'failed';
    w!.events = ['contact.created'];
    const before = server.requests.length;

    const second = await register(['--url', HOOK_URL], env);
    expect(second.code, second.stderr).toBe(0);
    expect(ours(server, HOOK_URL)).toHaveLength(1);
    expect(server.webhooks.size).toBe(2);
    const again = ours(server, HOOK_URL)[0]!;
    expect(again.id).toBe(w!.id);
    expect(server.requests.slice(before).filter((r) => r.method === 'POST' || r.method === 'DELETE')).toEqual([]);
    // docs/webhooks.md: "Running it again changes nothing but the webhook's fields".
    expect(again.status).toBe('active');
    expect([...again.events].sort()).toEqual([...SPEC_EVENT_NAMES].sort());
    expect(again.secret).toBe(secret);
    expect(readSecrets(file)).toEqual({ [String(again.id)]: [secret] });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expectForeignUntouched(server);
    expectNoLeaks(server, [first, second], [file]);
  });

  it('--rotate writes the new secret first with the previous kept second, then gives it to the CRM; the next rotation drops the oldest', async ({ expect }) => {
    const fileAtSecretPut: Array<{ sent: string; file: Record<string, string[]> | null }> = [];
    let filePath = '';
    const { server, file, env } = await setup({
      onRequest: (r) => {
        if (r.method === 'PUT' && typeof bodyOf(r).secret === 'string') fileAtSecretPut.push({ sent: bodyOf(r).secret as string, file: existsSync(filePath) ? readSecrets(filePath) : null });
      },
    });
    filePath = file;
    const first = await register(['--url', HOOK_URL], env);
    expect(first.code, first.stderr).toBe(0);
    const w = ours(server, HOOK_URL)[0]!;
    const s0 = w.secret;
    const id = String(w.id);
    fileAtSecretPut.length = 0;

    const rot1 = await register(['--url', HOOK_URL, '--rotate'], env);
    expect(rot1.code, rot1.stderr).toBe(0);
    const s1 = server.webhooks.get(w.id)!.secret;
    expect(s1).not.toBe(s0);
    expect(fileAtSecretPut.find((p) => p.sent === s1)?.file?.[id]).toEqual([s1, s0]);
    expect(readSecrets(file)).toEqual({ [id]: [s1, s0] });

    const rot2 = await register(['--url', HOOK_URL, '--rotate'], env);
    expect(rot2.code, rot2.stderr).toBe(0);
    const s2 = server.webhooks.get(w.id)!.secret;
    expect(new Set([s0, s1, s2]).size).toBe(3);
    expect(fileAtSecretPut.find((p) => p.sent === s2)?.file?.[id]).toEqual([s2, s1]);
    expect(readSecrets(file)).toEqual({ [id]: [s2, s1] });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(ours(server, HOOK_URL)).toHaveLength(1);
    expectForeignUntouched(server);
    expectNoLeaks(server, [first, rot1, rot2], [file]);
  });

  it('with no webhook at the URL, updates the one with the same --name, gives it a secret the file did not hold, and writes CRMSYNC_WEBHOOK_SECRETS_FILE', async ({ expect }) => {
    const old = { id: 7, name: 'crm-hooks', url: 'https://old.example.test/webhooks/crm', events: ['contact.created'], status: 'failed', secret: 'secret-from-before-crmsync' };
    const { server, dir, file: defaultFile, env } = await setup({ webhooks: [FOREIGN, old] });
    const custom = join(dir, 'elsewhere', 'secrets.json');
    const res = await register(['--url', HOOK_URL, '--name', 'crm-hooks'], { ...env, CRMSYNC_WEBHOOK_SECRETS_FILE: custom });
    expect(res.code, res.stderr).toBe(0);
    expect(server.requests.filter((r) => r.method === 'POST' || r.method === 'DELETE')).toEqual([]);
    expect(server.webhooks.size).toBe(2);
    const w = server.webhooks.get(7)!;
    expect({ name: w.name, url: w.url, status: w.status }).toEqual({ name: 'crm-hooks', url: HOOK_URL, status: 'active' });
    expect([...w.events].sort()).toEqual([...SPEC_EVENT_NAMES].sort());
    expect(w.secret).not.toBe(old.secret);
    expect(existsSync(defaultFile)).toBe(false);
    expect(readSecrets(custom)).toEqual({ '7': [w.secret] });
    expect(statSync(custom).mode & 0o777).toBe(0o600);
    expectForeignUntouched(server);
    expectNoLeaks(server, [res], [custom]);
  });

  it('takes what the spec leaves open: numeric-string ids, a create answer with only a message, PUT sent as POST with X-HTTP-Method-Override', async ({ expect }) => {
    // Response conventions 4: "Identifiers appear as integers or as numeric strings ... Treat both as valid."
    // Endpoints, Webhooks: POST /webhooks "not shown: response body"; Response conventions 7: method override.
    const { server, file, env } = await setup({ idsAsStrings: true, createResponse: 'message' });
    const res = await register(['--url', HOOK_URL], { ...env, CRM_METHOD_OVERRIDE: 'true' });
    expect(res.code, res.stderr).toBe(0);
    const mine = ours(server, HOOK_URL);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.status).toBe('active');
    expect(readSecrets(file)).toEqual({ [String(mine[0]!.id)]: [mine[0]!.secret] });
    const puts = server.requests.filter((r) => r.method === 'PUT');
    expect(puts.length).toBeGreaterThan(0);
    for (const p of puts) expect([p.wireMethod, p.headers['x-http-method-override']]).toEqual(['POST', 'PUT']);
    expectNoLeaks(server, [res], [file]);
  });

  it('refuses an http:// URL before sending anything, saying HTTPS is needed', async ({ expect }) => {
    const { server, file, env } = await setup();
    const res = await register(['--url', 'http://hooks.example.test/webhooks/crm'], env);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/https/i);
    expect(res.stderr).toContain('--allow-http');
    expect(res.stderr).not.toMatch(/unexpected error|\n\s+at /);
    expect(server.requests).toEqual([]);
    expect(existsSync(file)).toBe(false);
  });

  // Spec, Endpoints, Webhooks: POST /webhooks "url (required, valid HTTPS URL)"; Errors: "Webhook URL
  // not a valid HTTPS URL | 400 | invalid_webhook_url". A URL that does not parse (a forgotten
  // scheme, or a scheme alone) is refused before any request, as http:// is.
  it.for(['hooks.example.test/webhooks/crm', 'https://'])('refuses a --url that is not a URL at all (%s) as it refuses http://: exit 1, naming --url, no stack trace', async (url, { expect }) => {
    const { server, file, env } = await setup();
    const res = await register(['--url', url], env);
    expect(server.requests).toEqual([]);
    expect(existsSync(file)).toBe(false);
    expect(res.stderr).not.toMatch(/unexpected error|\n\s+at /);
    expect(res.stderr).toContain('--url');
    expect(res.code).toBe(1);
  });

  it('with --allow-http, reports the CRM’s 400 invalid_webhook_url with its message, creates nothing and writes no secret', async ({ expect }) => {
    const { server, file, env } = await setup({ echoInErrors: true });
    const res = await register(['--url', 'http://hooks.example.test/webhooks/crm', '--allow-http'], env);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('invalid_webhook_url');
    expect(res.stderr).toMatch(/HTTPS/);
    expect(res.stderr).not.toMatch(/unexpected error|\n\s+at /);
    expect(server.webhooks.size).toBe(1);
    expect(existsSync(file)).toBe(false);
    expectNoLeaks(server, [res], [file]);
  });

  it('wrong credentials: the 401 names CRM_USERNAME / CRM_PASSWORD and echoes no password, even when the CRM quotes the request', async ({ expect }) => {
    const { server, file, env } = await setup({ echoInErrors: true });
    const wrong = 'wrong PASS 9999 word';
    const res = await register(['--url', HOOK_URL], { ...env, CRM_PASSWORD: wrong });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('401');
    expect(res.stderr).toContain('CRM_USERNAME');
    expect(res.stderr).toContain('CRM_PASSWORD');
    const text = res.stdout + res.stderr;
    for (const p of [wrong, Buffer.from(`${USER}:${wrong}`).toString('base64'), encodeURIComponent(wrong)]) expect(text.includes(p), 'the password was printed').toBe(false);
    expect(server.requests.every((r) => r.method === 'GET')).toBe(true);
    expect(server.webhooks.size).toBe(1);
    expect(existsSync(file)).toBe(false);
    expectNoLeaks(server, [res], [file]);
  });

  it('403 without the capability: reported naming crm_manage_settings, nothing created, no secret written, none printed', async ({ expect }) => {
    // Authentication 7 and 10: crm_manage_settings covers settings; "a valid user without the capability gives 403".
    const { server, file, env } = await setup({ forbidWrites: true, echoInErrors: true });
    const res = await register(['--url', HOOK_URL], env);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('403');
    expect(res.stderr).toContain('crm_manage_settings');
    expect(server.webhooks.size).toBe(1);
    expect(existsSync(file)).toBe(false);
    expectNoLeaks(server, [res], [file]);
  });

  it('an update the CRM refuses (403) leaves the secrets file as it was: a webhook it did not list stays verified as before', async ({ expect }) => {
    const old = { id: 7, name: 'crmsync', url: HOOK_URL, events: ['contact.created'], status: 'failed', secret: 'secret-from-before-crmsync' };
    const { server, file, env } = await setup({ webhooks: [FOREIGN, old], forbidWrites: true });
    writeFileSync(file, JSON.stringify({ '3': ['foreign-file-secret-1234'] }), { mode: 0o600 });
    const res = await register(['--url', HOOK_URL], env);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('403');
    expect(server.webhooks.get(7)!.secret).toBe(old.secret);
    expect(readSecrets(file)).toEqual({ '3': ['foreign-file-secret-1234'] });
  });

  it('a CRM that refuses an event (400 invalid_webhook_event) is reported with the code and the event; nothing created, no secret written', async ({ expect }) => {
    const { server, file, env } = await setup({ unsupportedEvents: ['commerce.revenue_recorded'], echoInErrors: true });
    const res = await register(['--url', HOOK_URL], env);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('invalid_webhook_event');
    expect(res.stderr).toContain('commerce.revenue_recorded');
    // No option of register chooses events: the message says what is wrong instead of "fix the request parameters".
    expect(res.stderr).toMatch(/knows fewer events than its interface names, so no webhook was registered.*\[CRM_WEBHOOK_EVENT_REFUSED\]/s);
    expect(res.stderr).not.toMatch(/unexpected error|\n\s+at /);
    expect(server.webhooks.size).toBe(1);
    expect(existsSync(file)).toBe(false);
    expectNoLeaks(server, [res], [file]);
  });

  it('a CRM whose /webhooks are inbound webhooks (the spec’s second shape) or that has no /webhooks route: CRM_NO_OUTBOUND_WEBHOOKS, what it created deleted, no secret written', async ({
    expect,
  }) => {
    // Resources, Webhook: the {id, object_type, key, value {…, url}} form "belongs to inbound webhooks
    // that create contacts. Which of the two shapes each webhook endpoint returns: not shown."
    const inbound = await setup({ inbound: true });
    const a = await register(['--url', HOOK_URL], inbound.env);
    expect(a.code).toBe(1);
    expect(a.stderr).toContain('CRM_NO_OUTBOUND_WEBHOOKS');
    expect(a.stderr).toMatch(/crmsync sync/);
    const created = inbound.server.requests.filter((r) => r.method === 'POST' && r.path === '/webhooks' && r.status === 200);
    const deleted = inbound.server.requests.filter((r) => r.method === 'DELETE' && r.status === 200);
    expect(deleted.length).toBe(created.length);
    expect(inbound.server.webhooks.size).toBe(1);
    expect(existsSync(inbound.file)).toBe(false);
    expectForeignUntouched(inbound.server);
    expectNoLeaks(inbound.server, [a], [inbound.file]);

    // Authentication 10: "a wrong path, missing plugin or disabled REST gives 404".
    const none = await setup({ noWebhooksRoute: true });
    const b = await register(['--url', HOOK_URL], none.env);
    expect(b.code).toBe(1);
    expect(b.stderr).toContain('CRM_NO_OUTBOUND_WEBHOOKS');
    expect(none.server.requests.filter((r) => r.method !== 'GET')).toEqual([]);
    expect(existsSync(none.file)).toBe(false);
  });
});
