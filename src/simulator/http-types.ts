import type { IncomingHttpHeaders } from 'node:http';
import type { Serializer } from './serialize.js';
import type { SimState } from './state.js';
import type { Marketing } from './marketing.js';
import type { WebhookDispatcher } from './webhook-dispatcher.js';

export interface SimResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Send this text as-is instead of JSON-encoding `body`. */
  raw?: string;
  contentType?: string;
}

export interface RouteCtx {
  method: string;
  path: string;
  query: URLSearchParams;
  params: Record<string, string>;
  body: Record<string, unknown>;
  headers: IncomingHttpHeaders;
  state: SimState;
  marketing: Marketing;
  webhooks: WebhookDispatcher;
  ser: Serializer;
  /** Path prefix of the interface, e.g. /v2 (spec) or /wp-json/fluent-crm/v2 (real). */
  basePath: string;
  /** http://host:port, for absolute URLs. */
  origin: string;
  real: boolean;
  /** Largest page served whatever `per_page` asks (a server that caps it); undefined: no cap. */
  perPageCap: number | undefined;
  /** Tied rows of a listing sorted by another column in an order of each page's window (SimulatorOptions.tiesByWindow). */
  tiesByWindow: boolean;
  username: string | undefined;
}

export type Handler = (ctx: RouteCtx) => SimResponse | Promise<SimResponse>;

export interface RouteDef {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  /** Any one of these capabilities grants access; empty means public. */
  caps: readonly string[];
  handler: Handler;
  /** Real mode adds a `__bench` float to most success bodies; false where fluentcrm-2.9 does not. */
  bench?: boolean;
  /** Reports are slowed by faults.slowReportsMs. */
  report?: boolean;
}

export const ok = (body: unknown, status = 200): SimResponse => ({ status, body });
