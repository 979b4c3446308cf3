import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { latencyAt } from '../../src/simulator/faults.js';
import { REAL_DEPLOYMENT_LATENCY, SimulatorOptionsError, type RunningSimulator } from '../../src/simulator/index.js';
import { validateFaults } from '../../src/simulator/options.js';
import { api, basic, withSim, type Api } from './helpers.js';

/** Status codes of `n` sequential requests (0 for a dropped or truncated response). */
async function statuses(call: Api, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    try {
      const r = await call('GET', '/tags?exclude_counts=true');
      out.push(r.json === undefined && r.status === 200 ? 0 : r.status);
    } catch {
      out.push(0);
    }
  }
  return out;
}

describe('faults (deterministic by seed)', () => {
  let a: RunningSimulator;
  let b: RunningSimulator;
  let c: RunningSimulator;
  beforeAll(async () => {
    const faults = { errorRate: 0.2, dropRate: 0.05, truncateRate: 0.05 };
    a = (await withSim({ contacts: 5, seed: 99, faults })).sim;
    b = (await withSim({ contacts: 5, seed: 99, faults })).sim;
    c = (await withSim({ contacts: 5, seed: 100, faults })).sim;
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close(), c.close()]);
  });

  it('the same seed gives the same sequence of 5xx, drops and truncations; another seed differs', async () => {
    const sa = await statuses(api(a), 60);
    const sb = await statuses(api(b), 60);
    const sc = await statuses(api(c), 60);
    expect(sa).toEqual(sb);
    expect(sa).not.toEqual(sc);
    expect(sa.filter((s) => s >= 500).length).toBeGreaterThan(3);
    expect(sa.filter((s) => s === 0).length).toBeGreaterThan(0);
    expect(sa.filter((s) => s === 200).length).toBeGreaterThan(30);
    expect(a.stats().status5xx).toBe(sa.filter((s) => s >= 500).length);
  });

  it('setFaults replaces the faults and replays the stream from the start', async () => {
    a.setFaults({ errorRate: 0.3 });
    const first = await statuses(api(a), 20);
    a.setFaults({ errorRate: 0.3 });
    const second = await statuses(api(a), 20);
    expect(first).toEqual(second);
    a.setFaults({});
    expect(await statuses(api(a), 10)).toEqual(Array(10).fill(200));
  });
});

describe('rate limit', () => {
  it('429 with Retry-After above rateLimitRps, per credential', async () => {
    const { sim, call } = await withSim({ contacts: 5, faults: { rateLimitRps: 5 } });
    try {
      const codes = await Promise.all(Array.from({ length: 12 }, () => call('GET', '/tags')));
      const limited = codes.filter((r) => r.status === 429);
      expect(limited.length).toBeGreaterThanOrEqual(5);
      expect(codes.filter((r) => r.status === 200).length).toBeLessThanOrEqual(5);
      const retryAfter = Number(limited[0]?.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(sim.stats().status429).toBe(limited.length);
      // Another credential has its own budget.
      const manager = api(sim, sim.managerCredentials ?? null);
      expect((await manager('GET', '/tags')).status).toBe(200);
      await new Promise((r) => setTimeout(r, retryAfter * 1000 + 50));
      expect((await call('GET', '/tags')).status).toBe(200);
    } finally {
      await sim.close();
    }
  });
});

describe('latency, slow reports, truncation, drops', () => {
  it('adds latency within the range and extra delay on report endpoints only', async () => {
    const { sim, call } = await withSim({ contacts: 5, faults: { latencyMs: { min: 40, max: 60 }, slowReportsMs: 150 } });
    try {
      const fastest = async (path: string): Promise<number> => {
        let best = Infinity;
        for (let i = 0; i < 3; i++) {
          const t = performance.now();
          await call('GET', path);
          best = Math.min(best, performance.now() - t);
        }
        return best;
      };
      const plain = await fastest('/tags');
      const report = await fastest('/reports/overview');
      expect(plain).toBeGreaterThanOrEqual(39);
      expect(report).toBeGreaterThanOrEqual(189);
      // The fastest of three: scheduling noise on a busy machine only ever adds time.
      expect(report).toBeGreaterThan(plain);
    } finally {
      await sim.close();
    }
  });

  it('latency by page size: interpolated between points, the first below them, the last segment above', () => {
    const points = [
      { perPage: 15, min: 28, max: 36 },
      { perPage: 100, min: 47, max: 71 },
      { perPage: 1000, min: 202, max: 311 },
    ];
    expect(latencyAt(points, undefined)).toEqual({ min: 28, max: 36 });
    expect(latencyAt(points, 1)).toEqual({ min: 28, max: 36 });
    expect(latencyAt(points, 100)).toEqual({ min: 47, max: 71 });
    const at500 = latencyAt(points, 500);
    expect(at500.min).toBeCloseTo(47 + (155 * 400) / 900, 6);
    expect(at500.max).toBeCloseTo(71 + (240 * 400) / 900, 6);
    expect(latencyAt(points, 1900)).toEqual({ min: 357, max: 551 });
    // The captured deployment's points are the fixtures README's.
    expect(REAL_DEPLOYMENT_LATENCY).toEqual(points);
    expect(() => validateFaults({ latencyMs: { byPerPage: [] } })).toThrow(SimulatorOptionsError);
    expect(() => validateFaults({ latencyMs: { byPerPage: [points[1]!, points[0]!] } })).toThrow(/ascending/);
  });

  it('answers a small page before a large one asked for first, with latency by page size', async () => {
    const byPerPage = [
      { perPage: 1, min: 0, max: 0 },
      { perPage: 20, min: 400, max: 400 },
    ];
    const { sim, call } = await withSim({ contacts: 30, faults: { latencyMs: { byPerPage } } });
    try {
      const order: string[] = [];
      const started = performance.now();
      const large = call('GET', '/subscribers?per_page=20').then((r) => {
        order.push('large');
        return { r, ms: performance.now() - started };
      });
      const small = call('GET', '/subscribers?per_page=1').then((r) => {
        order.push('small');
        return r;
      });
      const [l, s] = await Promise.all([large, small]);
      expect(l.r.status).toBe(200);
      expect(s.status).toBe(200);
      expect(order).toEqual(['small', 'large']);
      expect(l.ms).toBeGreaterThanOrEqual(399);
    } finally {
      await sim.close();
    }
  });

  it('a truncated body is shorter than its Content-Length; a dropped request gets no response', async () => {
    const { sim } = await withSim({ contacts: 20, faults: { truncateRate: 1 } });
    try {
      const url = new URL(`${sim.baseUrl}/subscribers?per_page=20`);
      const result = await new Promise<{ declared: number; got: number; error: boolean }>((resolve) => {
        const req = request(url, { headers: { authorization: basic(sim.credentials.username, sim.credentials.password) } }, (res) => {
          let got = 0;
          res.on('data', (c: Buffer) => (got += c.length));
          const done = (error: boolean): void => resolve({ declared: Number(res.headers['content-length']), got, error });
          res.on('end', () => done(false));
          res.on('error', () => done(true));
          res.on('aborted', () => done(true));
        });
        req.on('error', () => resolve({ declared: -1, got: 0, error: true }));
        req.end();
      });
      expect(result.declared).toBeGreaterThan(0);
      expect(result.got).toBeLessThan(result.declared);
      sim.setFaults({ dropRate: 1 });
      await expect(fetch(`${sim.baseUrl}/tags`, { headers: { authorization: basic(sim.credentials.username, sim.credentials.password) } })).rejects.toThrow();
    } finally {
      await sim.close();
    }
  });

  it('stats count requests by route and resetStats clears them', async () => {
    const { sim, call } = await withSim({ contacts: 5 });
    try {
      await call('GET', '/tags');
      await call('GET', '/subscribers/1');
      await call('GET', '/subscribers/2');
      expect(sim.stats().byRoute).toEqual({ 'GET /tags': 1, 'GET /subscribers/:id': 2 });
      expect(sim.stats().requests).toBe(3);
      sim.resetStats();
      expect(sim.stats()).toEqual({ requests: 0, byRoute: {}, status429: 0, status5xx: 0, status423: 0 });
    } finally {
      await sim.close();
    }
  });
});
