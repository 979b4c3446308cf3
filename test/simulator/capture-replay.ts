import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { sharedFixtureDir } from '../helpers/shared-fixtures.js';
import { api, type ApiResponse, type Json } from './helpers.js';
import { shapeDiff } from './shape.js';

/** One captured exchange of fixtures/fluentcrm-2.9 (its README describes the fields). */
export interface Capture {
  name: string;
  request: {
    method: string;
    path: string;
    query_string: string | null;
    body: unknown;
    body_encoding: 'json' | 'form' | 'raw' | null;
    headers?: Record<string, string>;
    /** Who asked, e.g. `none` or `Basic admin:<application password>` (no credentials are stored). */
    auth?: string;
  };
  status: number;
  headers: Record<string, string>;
  body_is_json: boolean;
  body: Json;
}

const BASE = '/wp-json/fluent-crm/v2';

/** `name` is a file name without `.json`, `site-ny/...` for the second site; a missing file fails the test. */
export function loadCapture(name: string): Capture {
  return { ...(JSON.parse(readFileSync(join(sharedFixtureDir(), `${name}.json`), 'utf8')) as Omit<Capture, 'name'>), name };
}

/** The names of every capture of the UTC site, or of `site` (`site-ny`), for loadCapture. */
export function captureNames(site?: string): string[] {
  return readdirSync(sharedFixtureDir(site))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => `${site ? `${site}/` : ''}${f.slice(0, -'.json'.length)}`);
}

/** The captured request's route below the base URL, with its query string. */
export function routeOf(c: Capture): string {
  const path = c.request.path.startsWith(BASE) ? c.request.path.slice(BASE.length) : c.request.path;
  return `${path}${c.request.query_string ? `?${c.request.query_string}` : ''}`;
}

/** The captured request body as sent: JSON, a form (`[[key, value], ...]`) or raw text. */
function bodyOf(c: Capture): unknown {
  const b = c.request.body;
  if (b === null || b === undefined) return undefined;
  if (c.request.body_encoding === 'form') return new URLSearchParams((b as [string, unknown][]).map(([k, v]): [string, string] => [k, String(v)])).toString();
  return b;
}

export interface ReplayOptions {
  /** Another route (an id of the simulator's data), with its query string. */
  path?: string;
  /** Another body (data of the simulator), sent in the capture's encoding. */
  body?: unknown;
  /** Another caller; null for none. Default: the simulator's admin. */
  who?: { username: string; password: string } | null;
}

/** Sends the captured request (method, route, body, headers, Accept included) to the simulator. */
export async function replay(sim: RunningSimulator, c: Capture, o: ReplayOptions = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(c.request.headers ?? {})) headers[k.toLowerCase()] = v;
  let body = o.body === undefined ? bodyOf(c) : o.body;
  if (o.body !== undefined && c.request.body_encoding === 'form') body = new URLSearchParams(o.body as Record<string, string>).toString();
  return api(sim, o.who === undefined ? sim.credentials : o.who)(c.request.method, o.path ?? routeOf(c), body, headers);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What a client relies on: the captured status and content type; for an error the very body; for
 * a success the body's shape (keys of the capture present with the same JSON types, except the
 * keys in `ignore`) and `__bench` exactly where the capture has it.
 */
export function expectLike(c: Capture, r: ApiResponse, ignore: ReadonlySet<string> = new Set()): void {
  expect({ name: c.name, status: r.status, type: r.headers.get('content-type') }).toEqual({ name: c.name, status: c.status, type: c.headers['content-type'] });
  if (!c.body_is_json) {
    if (typeof c.body === 'string' && c.body === '') expect(r.text).toBe('');
    return;
  }
  if (c.status >= 400) {
    expect(r.json).toEqual(c.body);
    return;
  }
  expect({ name: c.name, diff: shapeDiff(c.body, r.json, '$', ignore) }).toEqual({ name: c.name, diff: [] });
  if (isObject(c.body)) expect({ name: c.name, bench: '__bench' in (r.json as object) }).toEqual({ name: c.name, bench: '__bench' in c.body });
}

/** The capture's body without the server's timing field. */
export function withoutBench(body: Json): Json {
  if (!isObject(body)) return body;
  const { __bench: _b, ...rest } = body;
  return rest;
}
