import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { allowHeader, routeAnswered } from './allow-header.js';
import { authenticate, claimedUser } from './auth.js';
import { readBody } from './body.js';
import type { FaultInjector } from './faults.js';
import type { RouteCtx, SimResponse } from './http-types.js';
import type { Marketing } from './marketing.js';
import type { ResolvedOptions } from './options.js';
import { restHeaders, htmlErrorPage, writeResponse } from './responses.js';
import type { Router } from './router.js';
import { deadlockMessage } from './deadlock-message.js';
import { Serializer } from './serialize.js';
import { NAMESPACE_INDEX_PATH } from './routes/namespace-index.js';
import { SimError } from './sim-error.js';
import { answerSiteWebhook, isSiteWebhookUrl } from './site-webhook.js';
import type { SimState } from './state.js';
import type { WebhookDispatcher } from './webhook-dispatcher.js';

export interface SimulatorStats {
  requests: number;
  byRoute: Record<string, number>;
  status429: number;
  status5xx: number;
  /** 423s: the real deployment's database exceptions (injected deadlocks included). */
  status423: number;
}

export interface ServerDeps {
  opts: ResolvedOptions;
  state: SimState;
  marketing: Marketing;
  webhooks: WebhookDispatcher;
  router: Router;
  faults: FaultInjector;
  stats: SimulatorStats;
  basePath: string;
  /** Ground-truth handler for the admin prefix, when enabled. */
  admin?: (req: IncomingMessage, path: string) => Promise<SimResponse | undefined>;
}

export const ADMIN_PREFIX = '/__simulator';

const noRoute = (): SimError => new SimError(404, 'rest_no_route', 'No route was found matching the URL and request method.');

function errorResponse(err: unknown, real: boolean, wantsJson: boolean): SimResponse {
  if (err instanceof SimError) {
    if (real && err.real) {
      if (err.real.status >= 500 && !wantsJson) return { status: err.real.status, body: null, raw: htmlErrorPage(), contentType: 'text/html; charset=UTF-8' };
      return { status: err.real.status, body: err.real.body, headers: err.extraHeaders };
    }
    return { status: err.status, body: err.specBody(), headers: err.extraHeaders };
  }
  // A bug in the simulator: answer like a server error rather than crash the process.
  const message = err instanceof Error ? err.message : String(err);
  return { status: 500, body: { code: 'internal_server_error', message: `Simulator error: ${message}`, data: { status: 500 } } };
}

/**
 * WordPress without pretty permalinks takes the REST route from the `rest_route` query parameter
 * (`/?rest_route=/fluent-crm/v2/subscribers&page=2`); the request is then served as if it had asked
 * for the `/wp-json` path (real mode) or the bare route (spec mode), with the rest of its query.
 */
function restRouteUrl(url: URL, real: boolean): URL {
  const route = url.searchParams.get('rest_route');
  if (route === null || (url.pathname !== '/' && url.pathname !== '/index.php') || !route.startsWith('/')) return url;
  const rest = new URLSearchParams(url.search);
  rest.delete('rest_route');
  const query = rest.toString();
  return new URL(`${real ? '/wp-json' : ''}${route}${query ? `?${query}` : ''}`, url.origin);
}

/** The request pipeline: route, faults, auth, capability, body, handler, response. */
export function createSimServer(deps: ServerDeps): Server {
  const { opts, stats } = deps;
  const real = opts.mode === 'real';
  /**
   * The site-URL incoming webhook (site-webhook.ts): outside the base path, without faults
   * (they stand for the REST API's), and without WordPress's REST headers: as captured, its
   * answers carry only PHP's and their content type.
   */
  const serveSiteWebhook = async (req: IncomingMessage, res: ServerResponse, url: URL, wantsJson: boolean): Promise<void> => {
    const key = `${req.method ?? 'GET'} /?fluentcrm=1&route=contact`;
    stats.byRoute[key] = (stats.byRoute[key] ?? 0) + 1;
    let out: SimResponse;
    try {
      out = await answerSiteWebhook({ method: (req.method ?? 'GET').toUpperCase(), query: url.searchParams, readBody: () => readBody(req, opts.maxBodyBytes) }, deps.state, deps.webhooks.incoming);
    } catch (err) {
      out = errorResponse(err, real, wantsJson);
    }
    req.resume();
    writeResponse(res, out, { caching: {} });
  };
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = restRouteUrl(new URL(req.url ?? '/', 'http://sim.invalid'), real);
    const wantsJson = String(req.headers.accept ?? '').includes('json');
    if (deps.admin && url.pathname.startsWith(ADMIN_PREFIX)) {
      const out = await deps.admin(req, url.pathname.slice(ADMIN_PREFIX.length));
      writeResponse(res, out ?? errorResponse(noRoute(), false, true));
      return;
    }
    stats.requests++;
    if (real && isSiteWebhookUrl(url)) {
      await serveSiteWebhook(req, res, url, wantsJson);
      return;
    }
    let method = (req.method ?? 'GET').toUpperCase();
    if (method === 'POST') {
      const override = req.headers['x-http-method-override'] ?? url.searchParams.get('_method');
      if (typeof override === 'string' && ['PUT', 'DELETE', 'PATCH', 'GET'].includes(override.toUpperCase())) method = override.toUpperCase();
    }
    const path = url.pathname.startsWith(deps.basePath) ? url.pathname.slice(deps.basePath.length) || '/' : undefined;
    const match = path === undefined ? undefined : deps.router.match(method, path);
    if (!match || path === undefined) {
      stats.byRoute['(no route)'] = (stats.byRoute['(no route)'] ?? 0) + 1;
      req.resume();
      const loggedIn = real && authenticate(opts.users, req.headers, url.searchParams) !== undefined;
      writeResponse(res, errorResponse(noRoute(), real, true), { caching: restHeaders(real, loggedIn, false, req.method) });
      return;
    }
    const routeKey = `${match.def.method} ${match.def.path}`;
    stats.byRoute[routeKey] = (stats.byRoute[routeKey] ?? 0) + 1;
    const perPage = Number(url.searchParams.get('per_page'));
    const decision = deps.faults.decide(claimedUser(req.headers), match.def.report === true, real, perPage > 0 ? perPage : undefined);
    if (decision.kind === 'drop') {
      req.socket.destroy();
      return;
    }
    // Real mode: whether the caller is logged in also decides the caching headers, on every route.
    const user = real || match.def.caps.length > 0 ? authenticate(opts.users, req.headers, url.searchParams) : undefined;
    // The public bounce handlers send no-cache whoever asks (captured); WordPress's namespace
    // index, public too, follows the logged-in rule (GET_wp-json_namespace_fluent-crm_v2).
    const selfNoCache = match.def.caps.length === 0 && match.def.path !== NAMESPACE_INDEX_PATH;
    const caching = restHeaders(real, user !== undefined, selfNoCache, req.method);
    // Real mode names the route's methods only on what its handler answered (see allowHeader): not
    // on a rate limit or fatal error injected before it runs; a deadlock is the handler's query failing.
    const send = (out: SimResponse, truncate = false, routed = true): void => {
      if (out.status === 429) stats.status429++;
      if (out.status >= 500) stats.status5xx++;
      if (out.status === 423) stats.status423++;
      const allow = routed || !real ? allowHeader(deps.router, match.def.path, real, user) : undefined;
      writeResponse(res, out, { truncate, caching, headers: allow === undefined ? {} : { allow } });
    };
    if (decision.kind === 'rate_limited') {
      req.resume();
      send(
        {
          status: 429,
          body: { code: 'rest_rate_limited', message: `Too many requests; retry after ${decision.retryAfterSec} s.`, data: { status: 429 } },
          headers: { 'retry-after': String(decision.retryAfterSec) },
        },
        false,
        false,
      );
      return;
    }
    if (decision.kind === 'error') {
      req.resume();
      send(
        real && !wantsJson
          ? { status: decision.status, body: null, raw: htmlErrorPage(), contentType: 'text/html; charset=UTF-8' }
          : { status: decision.status, body: { code: 'internal_server_error', message: 'Injected server error; retry the request.', data: { status: decision.status } } },
        false,
        false,
      );
      return;
    }
    if (decision.kind === 'deadlock') {
      req.resume();
      send({ status: 423, body: { message: deadlockMessage(path, decision.lockWait) } });
      return;
    }
    if (decision.latencyMs > 0) await new Promise((r) => setTimeout(r, decision.latencyMs));
    const started = performance.now();
    let out: SimResponse;
    let routed = true;
    let permitted = false;
    try {
      let username: string | undefined;
      if (match.def.caps.length > 0) {
        if (!user) {
          req.resume();
          throw new SimError(401, real ? 'rest_forbidden' : 'rest_not_logged_in', 'Sorry, you are not allowed to do that. Send valid HTTP Basic credentials.', {
            status: 401,
            body: { code: 'rest_forbidden', message: 'Sorry, you are not allowed to do that.', data: { status: 401 } },
          });
        }
        if (!match.def.caps.some((c) => user.capabilities.includes(c))) {
          req.resume();
          throw new SimError(403, 'rest_forbidden', `Sorry, you are not allowed to do that. This route needs one of: ${match.def.caps.join(', ')}.`, {
            status: 403,
            body: { code: 'rest_forbidden', message: 'Sorry, you are not allowed to do that.', data: { status: 403 } },
          });
        }
        username = user.username;
      }
      permitted = true;
      const body = method === 'GET' ? (req.resume(), {}) : await readBody(req, opts.maxBodyBytes);
      const ctx: RouteCtx = {
        method,
        path,
        query: url.searchParams,
        params: match.params,
        body,
        headers: req.headers,
        state: deps.state,
        marketing: deps.marketing,
        webhooks: deps.webhooks,
        ser: new Serializer(deps.state),
        basePath: deps.basePath,
        origin: `http://${req.headers.host ?? 'localhost'}`,
        real,
        perPageCap: opts.perPageCap,
        tiesByWindow: opts.tiesByWindow,
        username,
      };
      out = await match.def.handler(ctx);
      routed = routeAnswered(out);
      if (real && match.def.bench !== false && out.raw === undefined && out.status < 300 && typeof out.body === 'object' && out.body !== null && !Array.isArray(out.body)) {
        out = { ...out, body: { ...(out.body as object), __bench: (performance.now() - started) / 1000 } };
      }
    } catch (err) {
      out = errorResponse(err, real, wantsJson);
      // A failed permission check above keeps the Allow of what the caller may use (none for a 401).
      if (permitted) routed = routeAnswered(out);
    }
    send(out, decision.truncate, routed);
  };
  return createServer({ keepAlive: true }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) writeResponse(res, errorResponse(err, false, true));
      else res.destroy();
    });
  });
}

export async function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server.address() as AddressInfo;
}
