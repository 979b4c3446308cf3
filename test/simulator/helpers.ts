import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../src/simulator/index.js';

// Response bodies are checked field by field against the spec's text, so a loose type is the point.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  json: Json;
}

export type Api = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<ApiResponse>;

export function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

/** A fetch-based caller (not the project's client) for one user. */
export function api(sim: RunningSimulator, creds: { username: string; password: string } | null = sim.credentials): Api {
  return async (method, path, body, headers = {}) => {
    const res = await fetch(sim.baseUrl + path, {
      method,
      headers: {
        accept: 'application/json',
        ...(creds ? { authorization: basic(creds.username, creds.password) } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let json: Json;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  };
}

/** Starts a simulator for one test file; close it in afterAll. */
export async function withSim(options: SimulatorOptions = {}): Promise<{ sim: RunningSimulator; call: Api }> {
  const sim = await startSimulator({ contacts: 120, seed: 7, ...options });
  return { sim, call: api(sim) };
}

/** The error body shape of the spec: code (string), message (string), data.status (integer). */
export function isSpecError(body: Json, status: number, code?: string): boolean {
  return typeof body === 'object' && body !== null && typeof body.message === 'string' && body.data?.status === status && (code === undefined ? typeof body.code === 'string' : body.code === code);
}
