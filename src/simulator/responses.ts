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

export interface WriteOptions {
  /** Cut the body short and close the connection (fault injection). */
  truncate?: boolean;
  headers?: Record<string, string>;
}

export function writeResponse(out: ServerResponse, res: SimResponse, opts: WriteOptions = {}): void {
  const { text, contentType } = encode(res);
  const buf = Buffer.from(text, 'utf8');
  const headers: Record<string, string> = {
    'content-type': contentType,
    'content-length': String(buf.length),
    'cache-control': 'no-cache, must-revalidate, max-age=0',
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
