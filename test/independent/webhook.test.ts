/**
 * `crmsync webhooks serve` as docs/webhooks.md runs it, fed by webhook-sender.ts: deliveries signed
 * and shaped from the interface specification alone (Events: payload, signature and headers,
 * delivery rules). Only 2xx counts as delivered for the service (Delivery rules 1); anything else is
 * retried (rule 2) and counts towards disabling the webhook (rule 3).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Buffer } from 'node:buffer';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPushServer, type PushServer } from './push-server.js';
import { ALL_SPEC_EVENTS, buildBody, deliver, delivered, isoUtc, sign, specData, type SendOptions } from './webhook-sender.js';

const ENTRY = fileURLToPath(new URL('../../src/cli/entry.ts', import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const SECRET = 'whsec-independent-0123456789abcdef';
const WEBHOOK_ID = 4;

interface Receiver {
  url: string;
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Starts `crmsync webhooks serve` and resolves once it prints the URL to post to. */
function serve(args: string[], env: Record<string, string>, timeoutMs = 45_000): Promise<Receiver> {
  const child = spawn(process.execPath, ['--import', TSX, ENTRY, 'webhooks', 'serve', '--port', '0', ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME, TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH, CRMSYNC_EMBEDDED_IDLE: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve printed no URL within ${timeoutMs} ms:\n${out}\n${err.slice(-3000)}`));
    }, timeoutMs);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      out += line + '\n';
      const m = /receiving on (http:\/\/\S+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1]!, child, stdout: () => out, stderr: () => err, exited });
      }
    });
    exited
      .then((code) => {
        clearTimeout(timer);
        reject(new Error(`serve exited ${code} before printing its URL:\n${out}\n${err.slice(-3000)}`));
      })
      .catch(() => undefined);
  });
}

async function stop(r: Receiver | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!r || r.child.exitCode !== null || r.child.signalCode !== null) return;
  r.child.kill(signal);
  const timer = setTimeout(() => r.child.kill('SIGKILL'), 20_000);
  await r.exited;
  clearTimeout(timer);
}

let counter = 0;
const newDeliveryId = (): string => `${Date.now()}${String(++counter).padStart(4, '0')}`;

/** A delivery as the service sends it: spec body, spec headers, signed with the secret. */
function specDelivery(url: string, event: string, extra: Partial<SendOptions> & { timestamp?: string; signatureField?: boolean } = {}): SendOptions {
  const body = extra.body ?? buildBody({ event, webhookId: WEBHOOK_ID, data: specData(event, counter), timestamp: extra.timestamp, secret: SECRET, signatureField: extra.signatureField });
  return { url, body, event, webhookId: WEBHOOK_ID, deliveryId: newDeliveryId(), secret: SECRET, ...extra };
}

const dirs: string[] = [];
function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function spoolBytes(dataDir: string): Buffer {
  const root = join(dataDir, 'webhook-spool');
  const parts: Buffer[] = [];
  const walk = (p: string): void => {
    for (const name of readdirSync(p)) {
      const full = join(p, name);
      if (statSync(full).isDirectory()) walk(full);
      else parts.push(readFileSync(full));
    }
  };
  walk(root);
  return Buffer.concat(parts);
}

function occurrences(haystack: Buffer, needle: string | Buffer): number {
  const n = typeof needle === 'string' ? Buffer.from(needle, 'utf8') : needle;
  let count = 0;
  for (let i = haystack.indexOf(n); i !== -1; i = haystack.indexOf(n, i + 1)) count++;
  return count;
}

/** A body of exactly `size` bytes: a spec payload whose data carries padding. */
function bodyOfSize(size: number, padChar = 'x', event = 'email.sent'): string {
  const make = (pad: number): string => buildBody({ event, webhookId: WEBHOOK_ID, data: { email: { id: 1, subject: padChar.repeat(pad), contact_id: 2, campaign_id: 3 } }, secret: SECRET });
  const body = make(size - Buffer.byteLength(make(0)));
  expect(Buffer.byteLength(body)).toBe(size);
  return body;
}

function receiverEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return { CRMSYNC_DATA_DIR: dataDir, CRMSYNC_DB: join(dataDir, 'crm.duckdb'), CRMSYNC_LAKE: join(dataDir, 'lake'), CRM_WEBHOOK_SECRET: SECRET, ...extra };
}

describe('crmsync webhooks serve --no-apply, fed by a sender that follows the spec', () => {
  let dataDir: string;
  let receiver: Receiver;
  let url: string;
  /** Bodies acknowledged with 2xx, by delivery id. */
  const acknowledged = new Map<string, string>();

  const send = async (o: SendOptions): Promise<Awaited<ReturnType<typeof deliver>>> => {
    const r = await deliver(o);
    if (delivered(r)) acknowledged.set(o.deliveryId, o.body.toString());
    return r;
  };

  beforeAll(async () => {
    dataDir = tempDir('crmsync-independent-hooks-');
    receiver = await serve(['--no-apply'], receiverEnv(dataDir));
    url = receiver.url;
  }, 60_000);
  afterAll(async () => {
    await stop(receiver);
  });

  it('acknowledges every event name of the spec, signed over the raw body, with a 2xx well within 30 s (Delivery rules 1)', async () => {
    for (const event of ALL_SPEC_EVENTS) {
      const r = await send(specDelivery(url, event));
      expect(r.status, `${event}: ${r.body}`).toBeGreaterThanOrEqual(200);
      expect(r.status, `${event}: ${r.body}`).toBeLessThan(300);
      expect(r.ms).toBeLessThan(30_000);
    }
  });

  it('acknowledges the payload with and without its own `signature` field', async () => {
    expect((await send(specDelivery(url, 'contact.updated', { signatureField: true }))).status).toBe(202);
    expect((await send(specDelivery(url, 'contact.updated', { signatureField: false }))).status).toBe(202);
  });

  it('acknowledges the ISO 8601 UTC forms of `timestamp`: Z, fractional seconds, +00:00', async () => {
    const now = Date.now();
    for (const timestamp of [isoUtc(now), new Date(now).toISOString(), isoUtc(now).replace('Z', '+00:00')]) {
      const r = await send(specDelivery(url, 'email.opened', { timestamp }));
      expect(r.status, `${timestamp}: ${r.body}`).toBe(202);
    }
  });

  it('verifies the exact bytes sent: PHP-style escapes, pretty whitespace and raw UTF-8 are accepted and stored byte for byte', async () => {
    const body = `{\n  "event": "contact.updated",\n  "timestamp": "${isoUtc(Date.now())}",\n  "webhook_id": ${WEBHOOK_ID},\n  "data": {"contact": {"id": 77, "email": "j\\u00fcrgen@example.test", "first_name": "J\u00fcrgen \\"JJ\\"", "last_name": "M\\u00fcller\\/Z\u00fcrich", "status": "subscribed", "created_at": "2026-11-21 04:55:36"}}\n}`;
    const d = specDelivery(url, 'contact.updated', { body });
    expect((await send(d)).status).toBe(202);
    expect(occurrences(spoolBytes(dataDir), body)).toBe(1);
  });

  it('acknowledges the last retry of the spec schedule: an event 26 h 40 min old (1 min + 5 min + 30 min + 2 h + 24 h after the first attempt)', async () => {
    const r = await send(specDelivery(url, 'email.bounced', { timestamp: isoUtc(Date.now() - (26 * 60 + 40) * 60_000) }));
    expect(r.status, r.body).toBe(202);
  });

  it('refuses a wrong signature with a non-2xx and stores nothing under its delivery id', async () => {
    const base = specDelivery(url, 'contact.status_changed');
    const bodyWithoutField = JSON.parse(base.body.toString()) as Record<string, unknown>;
    const inner = bodyWithoutField.signature as string;
    const forged: SendOptions[] = [
      { ...base, deliveryId: newDeliveryId(), signature: sign(base.body, 'another-secret-0123456789') },
      { ...base, deliveryId: newDeliveryId(), body: base.body.toString().replace('"subscribed"', '"unsubscribed"'), signature: sign(base.body, SECRET) },
      { ...base, deliveryId: newDeliveryId(), headers: { 'X-Service-Signature': undefined } },
      // The payload's own `signature` field signs the payload without it, not the raw body: not the header's value.
      { ...base, deliveryId: newDeliveryId(), signature: inner },
    ];
    for (const f of forged) {
      const r = await deliver(f);
      expect(delivered(r), `${r.status} ${r.body}`).toBe(false);
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
    }
    // Nothing was stored under those ids: a correctly signed delivery under each is new (202, not a duplicate).
    for (const f of forged) {
      const fresh = specDelivery(url, 'contact.status_changed', { deliveryId: f.deliveryId });
      expect((await send(fresh)).status).toBe(202);
    }
  });

  it('refuses a stale event (72 h old, past every retry of the spec schedule) with a non-2xx, and stores nothing', async () => {
    const stale = specDelivery(url, 'email.opened', { timestamp: isoUtc(Date.now() - 72 * 3600_000) });
    const r = await deliver(stale);
    expect(r.status, r.body).toBe(400);
    expect(occurrences(spoolBytes(dataDir), stale.body)).toBe(0);
  });

  it('takes a body of exactly 1 MiB and refuses one byte more with 413 (the spec sets no size; crmsync documents 1 MiB)', async () => {
    const exact = specDelivery(url, 'email.sent', { body: bodyOfSize(1024 * 1024) });
    expect((await send(exact)).status).toBe(202);
    const over = specDelivery(url, 'email.sent', { body: bodyOfSize(1024 * 1024 + 1, 'y') });
    const r = await deliver(over).catch((e: Error) => ({ status: -1, body: e.message, headers: {}, ms: 0 }));
    expect(r.status, r.body).toBe(413);
    expect(occurrences(spoolBytes(dataDir), 'y'.repeat(1000))).toBe(0);
  });

  it('answers a retry of the same delivery id (sequential and concurrent) with a 2xx, so the service stops retrying, and stores it once', async () => {
    const d = specDelivery(url, 'email.clicked');
    expect((await send(d)).status).toBe(202);
    const again = await Promise.all([send(d), send(d), send(d)]);
    for (const r of again) expect(delivered(r), `${r.status} ${r.body}`).toBe(true);
    expect(occurrences(spoolBytes(dataDir), d.body)).toBe(1);
  });

  // The signature covers only the body, so a captured delivery can be sent again under a new
  // X-Service-Delivery: crmsync takes the body as the event's identity. The spec's payloads carry no
  // event id, so two genuine events in one second with identical bodies are stored once too (a
  // contact event is applied by refetching the contact, so nothing is lost there): documented in
  // docs/webhooks.md, "Dedup".
  it('answers the same signed body under a new delivery id (a replay) with a 2xx and stores it once', async () => {
    const d = specDelivery(url, 'email.unsubscribed');
    expect((await send(d)).status).toBe(202);
    const replay = await send({ ...d, deliveryId: newDeliveryId() });
    expect(delivered(replay)).toBe(true);
    expect(occurrences(spoolBytes(dataDir), d.body)).toBe(1);
  });

  it('acknowledges a burst of 60 concurrent deliveries, all within 30 s', async () => {
    const burst = Array.from({ length: 60 }, (_, i) => specDelivery(url, ALL_SPEC_EVENTS[i % ALL_SPEC_EVENTS.length]!));
    const results = await Promise.all(burst.map(send));
    for (const r of results) {
      expect(r.status, r.body).toBe(202);
      expect(r.ms).toBeLessThan(30_000);
    }
  });

  it('is durable: after SIGKILL a restarted receiver holds every acknowledged delivery (their ids are duplicates) and its bytes', { timeout: 60_000 }, async () => {
    const last = specDelivery(url, 'commerce.order_completed');
    expect((await send(last)).status).toBe(202);
    receiver.child.kill('SIGKILL'); // right after the 202: no graceful flush
    await receiver.exited;
    const bytes = spoolBytes(dataDir);
    for (const [id, body] of acknowledged) expect(occurrences(bytes, body), id).toBeGreaterThanOrEqual(1);
    receiver = await serve(['--no-apply'], receiverEnv(dataDir));
    for (const [id, body] of acknowledged) {
      const r = await deliver({ url: receiver.url, body, event: (JSON.parse(body) as { event: string }).event, webhookId: WEBHOOK_ID, deliveryId: id, secret: SECRET });
      expect(delivered(r), `${id}: ${r.status} ${r.body}`).toBe(true);
      expect(r.body, id).toMatch(/duplicate/);
    }
    expect((await deliver(specDelivery(receiver.url, 'email.sent'))).status).toBe(202);
  });

  // The spec sets no minimum length for a webhook secret; crmsync refuses CRM_WEBHOOK_SECRET under 16
  // characters and a secrets-file entry under 8. An 8-character secret works through the file.
  it('verifies with a short webhook secret (8 characters) given in the secrets file', { timeout: 60_000 }, async () => {
    const dir = tempDir('crmsync-independent-short-secret-');
    const short = 'k3y-8chr';
    const file = join(dir, 'webhook-secrets.json');
    writeFileSync(file, JSON.stringify({ [String(WEBHOOK_ID)]: [short] }), { mode: 0o600 });
    const r = await serve(['--no-apply'], { CRMSYNC_DATA_DIR: dir, CRMSYNC_DB: join(dir, 'crm.duckdb'), CRMSYNC_LAKE: join(dir, 'lake'), CRMSYNC_WEBHOOK_SECRETS_FILE: file });
    try {
      const body = buildBody({ event: 'email.sent', webhookId: WEBHOOK_ID, data: specData('email.sent', 1), secret: short });
      const ok = await deliver({ url: r.url, body, event: 'email.sent', webhookId: WEBHOOK_ID, deliveryId: newDeliveryId(), secret: short });
      expect(ok.status, ok.body).toBe(202);
    } finally {
      await stop(r);
    }
  });
});

describe('crmsync webhooks serve applying to the warehouse, with a spec CRM for refetches', () => {
  const USER = 'hooks-manager';
  const PASSWORD = 'hooks app password 0001';
  let crm: PushServer;
  let dataDir: string;
  let receiver: Receiver | undefined;
  const sent: { d: SendOptions; status: number; responseBody: string }[] = [];
  let events: Record<string, unknown>[];
  let emailEvents: Record<string, unknown>[];
  let deadLetters: Record<string, unknown>[];
  let contacts: Record<string, unknown>[];
  let readyz: string;

  beforeAll(async () => {
    crm = await startPushServer({ username: USER, password: PASSWORD, tags: [], lists: [], fields: [], maxPerSecond: 100, retryAfterSeconds: 1 });
    crm.contacts.set('ada@example.test', {
      id: 101,
      email: 'ada@example.test',
      status: 'subscribed',
      fields: { first_name: 'Ada', last_name: 'Lovelace' },
      tags: [],
      lists: [],
      custom_values: {},
      created_at: '2026-11-21 04:55:36',
      updated_at: '2026-11-21 04:55:36',
    });
    dataDir = tempDir('crmsync-independent-apply-');
    receiver = await serve([], receiverEnv(dataDir, { CRM_BASE_URL: crm.baseUrl, CRM_USERNAME: USER, CRM_PASSWORD: PASSWORD }), 60_000);
    const url = receiver.url;
    const ada = { contact: { id: 101, email: 'ada@example.test', first_name: 'Ada', last_name: 'Lovelace', status: 'subscribed', created_at: '2026-11-21 04:55:36' } };
    const gone = { contact: { id: 202, email: 'gone@example.test', first_name: 'Gone', last_name: 'Away', status: 'unsubscribed', created_at: '2026-11-21 04:55:36' } };
    const deliveries: SendOptions[] = [
      specDelivery(url, 'email.opened'),
      specDelivery(url, 'email.clicked'),
      specDelivery(url, 'contact.created', { body: buildBody({ event: 'contact.created', webhookId: WEBHOOK_ID, data: ada, secret: SECRET }) }),
      specDelivery(url, 'contact.deleted', { body: buildBody({ event: 'contact.deleted', webhookId: WEBHOOK_ID, data: gone, secret: SECRET }) }),
      specDelivery(url, 'commerce.order_created'),
      specDelivery(url, 'campaign.sent'),
      specDelivery(url, 'funnel.subscriber_added'),
      specDelivery(url, 'contact.merged'), // not a spec event name: stored and flagged, per docs
    ];
    for (const d of deliveries) {
      const r = await deliver(d);
      sent.push({ d, status: r.status, responseBody: r.body });
    }
    // A retry of the first delivery, a forged one and a stale one: none may add a row.
    for (const d of [deliveries[0]!, { ...specDelivery(url, 'email.sent'), signature: sign('{}', SECRET) }, specDelivery(url, 'email.sent', { timestamp: isoUtc(Date.now() - 72 * 3600_000) })]) {
      const r = await deliver(d);
      sent.push({ d, status: r.status, responseBody: r.body });
    }
    const base = url.replace(/\/webhooks\/crm$/, '');
    const deadline = Date.now() + 40_000;
    for (;;) {
      readyz = await (await fetch(`${base}/readyz`)).text();
      const ready = JSON.parse(readyz) as { spool?: { committedSeq?: number }; applier?: { appliedSeq?: number; lag?: number } | null };
      if (ready.applier && ready.applier.appliedSeq === ready.spool?.committedSeq && ready.applier.lag === 0) break;
      if (Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    await stop(receiver, 'SIGINT');
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const instance = await DuckDBInstance.create(join(dataDir, 'crm.duckdb'), { access_mode: 'READ_ONLY' });
    const con = await instance.connect();
    const rows = async (sql: string): Promise<Record<string, unknown>[]> => (await con.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
    try {
      events = await rows('SELECT * FROM webhook_events ORDER BY spool_seq');
      emailEvents = await rows('SELECT * FROM email_events');
      deadLetters = await rows('SELECT * FROM webhook_dead_letters');
      contacts = await rows('SELECT * FROM contacts');
    } finally {
      con.closeSync();
      instance.closeSync();
    }
  }, 85_000);

  afterAll(async () => {
    await stop(receiver);
    await crm?.close();
  });

  it('acknowledges the eight deliveries and the retry with 2xx; the forged and the stale one without', () => {
    expect(sent.map((s) => s.status)).toEqual([202, 202, 202, 202, 202, 202, 202, 202, 200, 401, 400]);
    expect(readyz).toMatch(/"lag":0/);
  });

  it('stores each acknowledged delivery once in webhook_events, with its payload, event, webhook id and delivery id', () => {
    const accepted = sent.slice(0, 8);
    expect(events.map((e) => e.delivery_id)).toEqual(accepted.map((s) => s.d.deliveryId));
    for (const [i, e] of events.entries()) {
      const d = accepted[i]!.d;
      expect(JSON.parse(String(e.payload))).toEqual(JSON.parse(d.body.toString()));
      expect(e).toMatchObject({ event: d.event, webhook_id: String(WEBHOOK_ID) });
      expect(e.known_event, d.event).toBe(ALL_SPEC_EVENTS.includes(d.event));
      expect(e.status, `${d.event}: ${String(e.error)}`).toBe(ALL_SPEC_EVENTS.includes(d.event) ? 'applied' : 'unknown_event');
    }
    expect(deadLetters).toEqual([]);
  });

  it('keeps the email events with the spec fields of data.email', () => {
    const byEvent = new Map(emailEvents.map((e) => [e.event, e]));
    for (const event of ['email.opened', 'email.clicked']) {
      const d = sent.find((s) => s.d.event === event)!.d;
      const email = (JSON.parse(d.body.toString()) as { data: { email: { id: number; contact_id: number; campaign_id: number; subject: string } } }).data.email;
      expect(byEvent.get(event)).toMatchObject({
        delivery_id: d.deliveryId,
        email_id: String(email.id),
        contact_id: String(email.contact_id),
        campaign_id: String(email.campaign_id),
        subject: email.subject,
      });
    }
  });

  it('refetches the contact through the spec route with HTTP Basic and loads what the CRM holds', () => {
    const refetches = crm.requests.filter((r) => r.method === 'GET' && /^\/subscribers\/\d+$/.test(r.path));
    expect(refetches.map((r) => r.path)).toContain('/subscribers/101');
    for (const r of crm.requests) expect(r.headers.authorization).toBe('Basic ' + Buffer.from(`${USER}:${PASSWORD}`).toString('base64'));
    expect(contacts.find((c) => String(c.id) === '101')).toMatchObject({ email: 'ada@example.test', first_name: 'Ada', last_name: 'Lovelace' });
  });
});
