import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { SimulatorUser } from './options.js';

/**
 * Compares digests of both, which have one length: a length check first would answer sooner for a
 * password of another length than the configured one, and so tell its length.
 */
function safeEqual(a: string, b: string): boolean {
  const x = createHash('sha256').update(a).digest();
  const y = createHash('sha256').update(b).digest();
  return timingSafeEqual(x, y);
}

/**
 * HTTP Basic against the configured users. The testing-only `_host_http_referer=user:password`
 * query parameter the spec mentions is honoured too. Returns the user, or undefined for 401.
 */
export function authenticate(users: readonly SimulatorUser[], headers: IncomingHttpHeaders, query: URLSearchParams): SimulatorUser | undefined {
  let pair: string | undefined;
  const h = headers.authorization;
  if (typeof h === 'string' && h.length < 4096 && /^basic /i.test(h)) {
    pair = Buffer.from(h.slice(6).trim(), 'base64').toString('utf8');
  } else {
    pair = query.get('_host_http_referer') ?? undefined;
  }
  if (!pair) return undefined;
  const i = pair.indexOf(':');
  if (i < 0) return undefined;
  const username = pair.slice(0, i);
  const password = pair.slice(i + 1);
  return users.find((u) => u.username === username && safeEqual(u.password, password));
}

/** The username a request claims (for per-credential rate limits), without checking it. */
export function claimedUser(headers: IncomingHttpHeaders): string {
  const h = headers.authorization;
  if (typeof h !== 'string' || !/^basic /i.test(h) || h.length > 4096) return '(anonymous)';
  const pair = Buffer.from(h.slice(6).trim(), 'base64').toString('utf8');
  return pair.slice(0, Math.max(0, pair.indexOf(':'))) || '(anonymous)';
}
