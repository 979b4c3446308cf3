import type { ClientContext } from './client-context.js';
import { NotFoundError } from './errors.js';
import type { CallOptions } from './request-executor.js';
import type { HttpRequest } from './transport.js';

/**
 * For each operation the interface and fluentcrm-2.9 put on different routes, the index of the
 * route that answered last; one per client, shared by its `withSignal` views, so the CRM is probed
 * once and remembered (DESIGN.md, "Correct on real deployments").
 */
export type RouteMemory = Map<string, number>;

/**
 * One operation that the written interface and the real plugin serve on different routes (another
 * method or path: the plugin's route index, GET_wp-json_namespace_fluent-crm_v2). Sends them in
 * turn, the one that answered last first, and moves on only after a 404 `rest_no_route`: WordPress
 * found no handler for that method and path, so nothing ran and the next one is safe to send. Any
 * other answer, success or error, is the operation's. List the route whose meaning is surest first:
 * an unlisted route of the same path and method on a CRM may do something else.
 */
export async function execOneOf(ctx: ClientContext, op: string, routes: readonly HttpRequest[], opts?: CallOptions): Promise<{ body: unknown; route: string }> {
  const last = ctx.routes.get(op) ?? 0;
  const order = [last, ...routes.keys()].filter((i, k, all) => all.indexOf(i) === k);
  let missing: NotFoundError | undefined;
  for (const i of order) {
    const req = routes[i]!;
    try {
      const body = await ctx.exec(req, opts);
      ctx.routes.set(op, i);
      return { body, route: `${req.method} ${req.path}` };
    } catch (e) {
      if (!(e instanceof NotFoundError && e.routeMissing)) throw e;
      missing ??= e;
    }
  }
  const tried = routes.map((r) => `${r.method} ${r.path}`).join(' nor ');
  throw new NotFoundError(
    `The CRM has no route for ${op}: neither ${tried} exists (404 rest_no_route): check that CRM_BASE_URL ends with the API version segment (/v2) and that the plugin and module are installed`,
    true,
    { statusCode: 404, route: missing?.route, cause: missing },
  );
}
