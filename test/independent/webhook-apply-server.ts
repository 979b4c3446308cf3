/**
 * A front for spec-server.ts's SpecServer that adds the by-id routes a webhook applier refetches
 * through and the spec-server does not serve, written from ../shared/spec/crm-rest-api.md
 * (Endpoints) and the captured real responses (../shared/fixtures/fluentcrm-2.9) alone:
 *
 * - `GET /campaigns/{id}`: "campaign" (Campaigns table); the real plugin wraps it as `{"campaign": {...}}`
 *   (fixtures GET_campaigns_id.json). No `stats`: the by-id route takes no `with[]` (spec).
 * - `GET /funnels/{id}`: "funnel object"; real: `{"funnel": {...}}` (fixtures GET_funnels_id.json).
 * - `GET /funnels/{id}/subscribers/{contact_id}`: object `funnel_subscriber` (with metrics) and array
 *   `sequences` (spec; fixtures site-ny GET_funnels_id_subscribers_contact_id.json).
 * - `GET /subscribers/{id}` for ids in `realGone`: the real plugin's answer for a deleted contact,
 *   422 `{"message":"Subscriber not found"}` (fixtures GET_subscribers_id_after_delete.json), instead
 *   of the spec's 404 `rest_post_invalid_id`.
 *
 * Everything else is passed to the SpecServer unchanged. Unknown ids answer the spec's 404
 * `rest_post_invalid_id` (Errors).
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { CAMPAIGNS, FUNNELS, PASSWORD, USER, type Json, type SpecServer } from './spec-server.js';
import { listenOnLoopback } from './loopback.js';

export interface FrontRequest {
  method: string;
  path: string;
  status: number;
}

export interface Front {
  baseUrl: string;
  /** Contact ids whose by-id read answers as the real plugin does for a deleted contact. */
  realGone: Set<number>;
  /**
   * Contact ids whose by-id read carries `custom_values: []` when it has none: the real plugin's
   * empty value (fixtures README, "Custom fields": "A contact without values gets `[]`").
   */
  customAsArray: Set<number>;
  /** The next `count` by-id contact reads answer `status` (429 or 503 with `Retry-After: 1`): the CRM rate limited or down. */
  failContactReads: { count: number; status: number };
  requests: FrontRequest[];
  close: () => Promise<void>;
}

export async function startFront(spec: SpecServer): Promise<Front> {
  const target = new URL(spec.baseUrl);
  const realGone = new Set<number>();
  const customAsArray = new Set<number>();
  const failContactReads = { count: 0, status: 503 };
  const requests: FrontRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const entry: FrontRequest = { method: req.method ?? '', path: url.pathname, status: 0 };
    requests.push(entry);
    const send = (status: number, body: Json): void => {
      entry.status = status;
      res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
      res.end(JSON.stringify(body));
    };
    const authorized = req.headers.authorization === `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
    const notFound = (what: string): void => send(404, { code: 'rest_post_invalid_id', message: `Invalid ${what} id.`, data: { status: 404 } });
    let m: RegExpMatchArray | null;
    if (req.method === 'GET' && authorized) {
      const path = url.pathname.replace(/^\/v2/, '');
      if ((m = path.match(/^\/subscribers\/(\d+)$/)) && failContactReads.count > 0) {
        failContactReads.count--;
        res.setHeader('retry-after', '1');
        const code = failContactReads.status === 429 ? 'too_many_requests' : 'service_unavailable';
        return send(failContactReads.status, { code, message: 'Try again later.', data: { status: failContactReads.status } });
      }
      if ((m = path.match(/^\/subscribers\/(\d+)$/)) && realGone.has(Number(m[1]))) return send(422, { message: 'Subscriber not found' });
      if ((m = path.match(/^\/subscribers\/(\d+)$/)) && customAsArray.has(Number(m[1]))) {
        const c = spec.contacts.get(Number(m[1]));
        if (c && Object.keys(c.custom).length === 0) return send(200, { subscriber: { ...(spec.render(c, true) as Record<string, Json>), custom_values: [] } });
      }
      if ((m = path.match(/^\/campaigns\/(\d+)$/))) {
        const c = CAMPAIGNS.find((x) => Number((x as { id: Json }).id) === Number(m![1]));
        return c ? send(200, { campaign: c }) : notFound('campaign');
      }
      if ((m = path.match(/^\/funnels\/(\d+)$/))) {
        const f = FUNNELS.find((x) => Number((x as { id: Json }).id) === Number(m![1]));
        return f ? send(200, { funnel: f }) : notFound('funnel');
      }
      if ((m = path.match(/^\/funnels\/(\d+)\/subscribers\/(\d+)$/))) {
        const [fid, cid] = [Number(m[1]), Number(m[2])];
        if (!FUNNELS.some((x) => Number((x as { id: Json }).id) === fid)) return notFound('funnel');
        // The contact's newest enrolment in the funnel.
        const rows = spec.funnelSubscriberRows.filter((r) => Number((r as { funnel_id: Json }).funnel_id) === fid && Number((r as { subscriber_id: Json }).subscriber_id) === cid);
        const row = rows.sort((a, b) => Number((b as { id: Json }).id) - Number((a as { id: Json }).id))[0];
        return row ? send(200, { funnel_subscriber: row, sequences: [] }) : notFound('funnel subscriber');
      }
    }
    // Everything else: to the SpecServer as it came.
    const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } }, (up) => {
      entry.status = up.statusCode ?? 0;
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', (e) => {
      entry.status = 502;
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: 'bad_gateway', message: e.message, data: { status: 502 } }));
    });
    req.pipe(upstream);
  });
  const { port, close } = await listenOnLoopback(server);
  return { baseUrl: `http://127.0.0.1:${port}/v2`, realGone, customAsArray, failContactReads, requests, close };
}
