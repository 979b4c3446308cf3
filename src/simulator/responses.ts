import type { ServerResponse } from 'node:http';
import type { SimResponse } from './http-types.js';

/** The page WordPress sends for a fatal error when the client did not ask for JSON. */
export function htmlErrorPage(): string {
  return `<!DOCTYPE html>
<html lang="en-US">
<head>
	<meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />
	<meta name="viewport" content="width=device-width">
	<meta name='robots' content='noindex, nofollow' />
	<title>WordPress &rsaquo; Error</title>
</head>
<body id="error-page">
	<div class="wp-die-message"><p>There has been a critical error on this website.</p><p><a href="https://wordpress.org/support/article/faq-troubleshooting/">Learn more about troubleshooting WordPress.</a></p></div></body>
</html>
`;
}

export function encode(res: SimResponse): { text: string; contentType: string } {
  if (res.raw !== undefined) return { text: res.raw, contentType: res.contentType ?? 'application/json; charset=UTF-8' };
  return { text: JSON.stringify(res.body), contentType: res.contentType ?? 'application/json; charset=UTF-8' };
}

const NO_CACHE = { 'cache-control': 'no-cache, must-revalidate, max-age=0' };

/** WordPress's nocache_headers(). */
const WP_NO_CACHE = { ...NO_CACHE, expires: 'Wed, 11 Jan 1984 05:00:00 GMT' };

/**
 * WordPress's REST server names its paging headers on every REST answer (errors, 401s and
 * fatal-error pages included), although fluentcrm-2.9 never sends them (no X-WP-Total).
 */
const WP_EXPOSE_HEADERS = { 'access-control-expose-headers': 'X-WP-Total, X-WP-TotalPages, Link' };

/**
 * The headers WordPress's REST server adds to an answer: its caching headers and, in real mode,
 * WP_EXPOSE_HEADERS. Spec mode: no-cache always. Real mode, as captured: WordPress's REST server sends its no-cache
 * headers to a logged-in caller only (none on the 401s, nor on the unknown route asked without
 * credentials), and to the public bounce handler; a GET by anyone else gets `Vary: Origin`
 * (rest_send_cors_headers) instead.
 */
export function restHeaders(real: boolean, loggedIn: boolean, publicRoute: boolean, httpMethod: string | undefined): Record<string, string> {
  if (!real) return NO_CACHE;
  const vary: Record<string, string> = !loggedIn && httpMethod === 'GET' ? { vary: 'Origin' } : {};
  return loggedIn || publicRoute ? { ...WP_EXPOSE_HEADERS, ...WP_NO_CACHE, ...vary } : { ...WP_EXPOSE_HEADERS, ...vary };
}

export interface WriteOptions {
  /** Cut the body short and close the connection (fault injection). */
  truncate?: boolean;
  headers?: Record<string, string>;
  /** Instead of no-cache (see restHeaders). */
  caching?: Record<string, string>;
}

export function writeResponse(out: ServerResponse, res: SimResponse, opts: WriteOptions = {}): void {
  const { text, contentType } = encode(res);
  const buf = Buffer.from(text, 'utf8');
  const headers: Record<string, string> = {
    'content-type': contentType,
    'content-length': String(buf.length),
    ...(opts.caching ?? NO_CACHE),
    ...opts.headers,
    ...res.headers,
  };
  out.writeHead(res.status, headers);
  if (opts.truncate && buf.length > 1) {
    out.write(buf.subarray(0, Math.floor(buf.length / 2)), () => out.destroy());
    return;
  }
  out.end(buf);
}
