import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { parseFaults } from '../../src/cli/simulator.js';
import { REAL_DEPLOYMENT_LATENCY } from '../../src/simulator/index.js';
import { ConfigError } from '../../src/errors.js';
import { basic } from './helpers.js';

describe('crmsync simulator (CLI)', () => {
  it('prints its base URL ending in /v2 and serves with CRM_USERNAME / CRM_PASSWORD', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/entry.ts', 'simulator', '--contacts', '1000', '--port', '0', '--seed', '3', '--per-page-cap', '250'], {
      env: { ...process.env, CRM_USERNAME: 'cli-user', CRM_PASSWORD: 'cli-password-123' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once('line', (l) => resolve(l.trim()));
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
      });
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v2$/);
      const res = await fetch(`${url}/subscribers?per_page=1`, { headers: { authorization: basic('cli-user', 'cli-password-123') } });
      const body = (await res.json()) as { subscribers: { total: number } };
      expect(body.subscribers.total).toBe(1000);
      const capped = await fetch(`${url}/subscribers?per_page=500`, { headers: { authorization: basic('cli-user', 'cli-password-123') } });
      const page = (await capped.json()) as { subscribers: { per_page: number; last_page: number; data: unknown[] } };
      expect(page.subscribers).toMatchObject({ per_page: 250, last_page: 4 });
      expect(page.subscribers.data).toHaveLength(250);
      const bad = await fetch(`${url}/subscribers`, { headers: { authorization: basic('cli-user', 'wrong') } });
      expect(bad.status).toBe(401);
      await bad.body?.cancel();
      expect(stderr).not.toContain('cli-password-123');
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });

  it('parses --faults as JSON or key=value pairs and names the fix for bad input', () => {
    expect(parseFaults('{"errorRate":0.1,"latencyMs":{"min":1,"max":5}}')).toEqual({ errorRate: 0.1, latencyMs: { min: 1, max: 5 } });
    expect(parseFaults('errorRate=0.05,rateLimitRps=20,latency=5-50')).toEqual({ errorRate: 0.05, rateLimitRps: 20, latencyMs: { min: 5, max: 50 } });
    expect(parseFaults('deadlockRate=0.02,rateLimitRps=25')).toEqual({ deadlockRate: 0.02, rateLimitRps: 25 });
    expect(parseFaults('latency=real')).toEqual({ latencyMs: { byPerPage: REAL_DEPLOYMENT_LATENCY } });
    expect(parseFaults('{"latencyMs":{"byPerPage":[{"perPage":10,"min":1,"max":2}]}}')).toEqual({ latencyMs: { byPerPage: [{ perPage: 10, min: 1, max: 2 }] } });
    expect(() => parseFaults('deadlockRate=1.5')).toThrow(ConfigError);
    expect(() => parseFaults('errorRate=2')).toThrow(ConfigError);
    expect(() => parseFaults('bogus=1')).toThrow(/known keys/);
    expect(() => parseFaults('{not json')).toThrow(/--faults/);
  });
});
