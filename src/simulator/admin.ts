import type { IncomingMessage } from 'node:http';
import { authenticate } from './auth.js';
import { readBody } from './body.js';
import type { ChurnHandle, ChurnOptions } from './churn.js';
import type { SimResponse } from './http-types.js';
import type { FaultOptions, ResolvedOptions } from './options.js';
import type { SimulatorStats } from './server.js';
import { SimError } from './sim-error.js';
import type { SimulatorTruth } from './truth.js';

export interface AdminDeps {
  opts: ResolvedOptions;
  truth(): SimulatorTruth;
  stats: SimulatorStats;
  setFaults(f: FaultOptions): void;
  churn(o: ChurnOptions): ChurnHandle;
}

/**
 * The ground-truth and control endpoint outside the interface (off unless `admin: true`), for a
 * simulator running in another process: GET truth and stats, POST faults, POST/DELETE churn.
 * Only the admin credentials are accepted.
 */
export function createAdminHandler(deps: AdminDeps): (req: IncomingMessage, path: string) => Promise<SimResponse | undefined> {
  let churn: ChurnHandle | undefined;
  const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 100_000 ? v : undefined);
  return async (req, path) => {
    const admin = deps.opts.users.filter((u) => u.username === deps.opts.credentials.username);
    if (!authenticate(admin, req.headers, new URLSearchParams())) {
      req.resume();
      return { status: 401, body: { code: 'unauthorized', message: 'The admin endpoint needs the admin credentials.', data: { status: 401 } } };
    }
    const body = req.method === 'POST' ? await readBody(req, 64 * 1024) : (req.resume(), {});
    const route = `${req.method} ${path}`;
    try {
      switch (route) {
        case 'GET /truth':
          return { status: 200, body: deps.truth() };
        case 'GET /stats':
          return { status: 200, body: deps.stats };
        case 'POST /faults':
          deps.setFaults(body as FaultOptions);
          return { status: 200, body: { message: 'Faults replaced', faults: body } };
        case 'POST /churn': {
          await churn?.stop();
          churn = deps.churn({ insertsPerSec: num(body.insertsPerSec), updatesPerSec: num(body.updatesPerSec), deletesPerSec: num(body.deletesPerSec) });
          return { status: 200, body: { message: 'Churn started' } };
        }
        case 'DELETE /churn': {
          const done = churn?.counts() ?? { inserts: 0, updates: 0, deletes: 0 };
          await churn?.stop();
          churn = undefined;
          return { status: 200, body: { message: 'Churn stopped', ...done } };
        }
        default:
          return undefined;
      }
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return { status: 400, body: { code: err instanceof SimError ? err.code : 'invalid_admin_request', message, data: { status: 400 } } };
    }
  };
}
