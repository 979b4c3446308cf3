import type { ServerResponse } from 'node:http';
import { bodyText, type Fixture, fixtureNamed } from './fixtures.js';
import type { SeenRequest } from './replay-server.js';

const NAMESPACE = '/fluent-crm/v2';

/**
 * fluentcrm-2.9's routes as its captured namespace index lists them (GET_wp-json_namespace_fluent-crm_v2):
 * `methodsOf(path)` are the methods the plugin registers on the route a path (below the base URL)
 * matches, as WordPress matches it (`^route$`, case-insensitive); empty when no route matches.
 */
export function pluginRoutes(fixtures: readonly Fixture[]): { methodsOf(path: string): string[] } {
  const index = fixtureNamed(fixtures, 'GET_wp-json_namespace_fluent-crm_v2.json').body as { routes: Record<string, { endpoints: Array<{ methods: string[] }> }> };
  const routes = Object.entries(index.routes).map(([route, r]) => ({
    re: new RegExp(`^${route.replace(/\(\?P</g, '(?<')}$`, 'i'),
    methods: [...new Set(r.endpoints.flatMap((e) => e.methods))],
  }));
  return {
    methodsOf(path) {
      return routes.find((r) => r.re.test(`${NAMESPACE}${path}`))?.methods ?? [];
    },
  };
}

/**
 * A replay handler that answers as the plugin would route: a method and path its index lacks get
 * the captured 404 rest_no_route (PATCH_subscribers_id), the X-HTTP-Method-Override header
 * honoured; the others get `answer(method, path)`'s capture, byte for byte.
 */
export function routedReplay(fixtures: readonly Fixture[], prefix: string, answer: (method: string, path: string) => Fixture): (req: SeenRequest, res: ServerResponse) => void {
  const index = pluginRoutes(fixtures);
  const noRoute = fixtureNamed(fixtures, 'PATCH_subscribers_id.json');
  return (req, res) => {
    const override = req.headers['x-http-method-override'];
    const method = req.method === 'POST' && typeof override === 'string' ? override.toUpperCase() : req.method;
    const path = new URL(req.url, 'http://replay').pathname.slice(prefix.length);
    const f = index.methodsOf(path).includes(method) ? answer(method, path) : noRoute;
    res.writeHead(f.status, { 'content-type': f.headers['content-type'] ?? 'application/json; charset=UTF-8' });
    res.end(bodyText(f));
  };
}
