import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadResponseError, createCrmClient, createRateLimiter, type CrmError } from '../../src/crm/index.js';
import { startReplayServer, type ReplayServer } from './helpers/replay-server.js';

/**
 * A body of declared length is read in one go (undici's text()); a chunked one chunk by chunk under
 * the size cap. Both must give the same text, skip a UTF-8 BOM, keep multi-byte characters split
 * across chunks, and turn a body cut short into a retryable `truncated` error.
 */
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const contact = { id: 1, email: 'zoe@example.test', first_name: 'Zoë', last_name: '日本語', status: 'subscribed' };
const json = Buffer.from(JSON.stringify({ subscriber: contact }), 'utf8');

function send(res: ServerResponse, body: Buffer, declared: boolean, cutAt?: number) {
  res.writeHead(200, { 'content-type': 'application/json', ...(declared ? { 'content-length': String(body.length) } : {}) });
  if (cutAt !== undefined) {
    res.write(body.subarray(0, cutAt), () => res.socket?.destroy());
    return;
  }
  // Split inside the multi-byte "ë" and again inside "日", flushing between writes.
  const a = body.indexOf(Buffer.from('ë')) + 1;
  const b = body.indexOf(Buffer.from('日')) + 2;
  res.write(body.subarray(0, a), () => res.write(body.subarray(a, b), () => res.end(body.subarray(b))));
}

describe('reading response bodies', () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer('/v2');
  });
  afterAll(async () => {
    await server.close();
  });
  const client = (maxBodyBytes?: number) =>
    createCrmClient({ baseUrl: server.baseUrl, username: 'u', password: 'p', limiter: createRateLimiter({ maxRps: 1000, adaptive: false }), retry: { maxRetries: 0 }, maxBodyBytes });

  it.each([
    ['declared length', true],
    ['chunked', false],
  ])('%s: same text, BOM skipped, split characters kept', async (_name, declared) => {
    const c = client();
    try {
      for (const body of [json, Buffer.concat([BOM, json])]) {
        server.respond((_req, res) => send(res, body, declared));
        const got = await c.contacts.get(1);
        expect(got).toMatchObject({ id: 1, first_name: 'Zoë', last_name: '日本語' });
        expect(got!.raw).toEqual(contact);
      }
    } finally {
      await c.close();
    }
  });

  it.each([
    ['declared length', true],
    ['chunked', false],
  ])('%s: a body cut short is a retryable truncated error', async (_name, declared) => {
    const c = client();
    try {
      server.respond((_req, res) => send(res, json, declared, 20));
      const e = await c.contacts.get(1).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(e).toBeInstanceOf(BadResponseError);
      expect((e as BadResponseError).kind).toBe('truncated');
      expect((e as CrmError).retryable).toBe(true);
      expect((e as Error).message).toMatch(declared ? /cut off before its declared \d+ bytes/ : /cut off after 20 bytes/);
    } finally {
      await c.close();
    }
  });

  // The cap is checked twice: against a declared Content-Length before any byte is read (undici
  // would otherwise read all of it), and while counting the chunks of a body without one. The
  // refused body is destroyed unread: an abort error nobody listens to fails this file (vitest
  // reports it), as it would end a worker.
  it.each([
    ['declared length', true],
    ['chunked', false],
  ])('%s: a body over maxBodyBytes is refused as too_large, parsed or raw', async (_name, declared) => {
    const c = client(1000);
    try {
      const big = Buffer.from(JSON.stringify({ subscriber: { ...contact, notes: 'x'.repeat(4000) } }), 'utf8');
      const page = Buffer.from(JSON.stringify({ subscribers: { total: 1, per_page: 10, current_page: 1, last_page: 1, data: [{ ...contact, notes: 'x'.repeat(4000) }] } }), 'utf8');
      for (const [body, call] of [
        [big, () => c.contacts.get(1)],
        [page, () => c.contacts.listPageRaw({ page: 1, perPage: 10 })],
      ] as const) {
        server.respond((_req, res) => {
          res.writeHead(200, { 'content-type': 'application/json', ...(declared ? { 'content-length': String(body.length) } : {}) });
          res.end(body);
        });
        const e = await (call as () => Promise<unknown>)().then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(e).toBeInstanceOf(BadResponseError);
        expect((e as BadResponseError).kind).toBe('too_large');
        expect((e as CrmError).retryable).toBe(false);
        expect((e as Error).message).toMatch(/larger than 1000 bytes.*per_page/);
      }
    } finally {
      await c.close();
    }
  });
});
