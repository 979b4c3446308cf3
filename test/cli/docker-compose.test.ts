import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { missingWorkerLaunchSettings, WORKER_SEMI_SPACE_FLAG } from '../../src/worker/worker-launch-settings.js';

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  env_file?: string | string[];
  environment?: Record<string, string>;
  volumes?: string[];
  depends_on?: Record<string, unknown> | string[];
}

const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};

describe('docker-compose.yml', () => {
  it('runs Temporal on a persistent database with its UI, from the official images', () => {
    const { services } = compose;
    expect(services.temporal?.image).toMatch(/^temporalio\/auto-setup:\d/);
    expect(services['temporal-ui']?.image).toMatch(/^temporalio\/ui:\d/);
    expect(services.postgresql?.volumes?.some((v) => v.startsWith('temporal-db:'))).toBe(true);
    expect(services.temporal?.environment?.POSTGRES_SEEDS).toBe('postgresql');
  });

  it('runs one crmsync worker and the webhook receiver with the warehouse and lake volumes and the env file', () => {
    const { services, volumes } = compose;
    for (const name of ['worker', 'webhooks']) {
      const s = services[name];
      expect(s, name).toBeDefined();
      expect(s?.env_file).toBe('.env');
      expect(s?.volumes).toEqual(expect.arrayContaining(['warehouse:/data', 'lake:/lake']));
      expect(s?.environment?.TEMPORAL_ADDRESS).toBe('temporal:7233');
      expect(s?.environment?.CRMSYNC_DB?.startsWith('/data/')).toBe(true);
    }
    expect(services.worker?.command).toEqual(['worker']);
    expect(services.webhooks?.command).toEqual(['webhooks', 'serve']);
    expect(Object.keys(volumes).sort()).toEqual(['lake', 'temporal-db', 'warehouse']);
    // Every named volume a service mounts is declared.
    for (const s of Object.values(services)) {
      for (const v of s.volumes ?? []) expect(Object.keys(volumes)).toContain(v.split(':')[0]);
    }
  });

  it('is valid for `docker compose config` where the tool exists', () => {
    const probe = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' });
    if (probe.status !== 0) return; // no compose plugin here: the parse checks above stand in
    const r = spawnSync('docker', ['compose', '-f', 'docker-compose.yml', 'config', '--quiet'], { encoding: 'utf8', env: { ...process.env } });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});

describe('the crmsync image', () => {
  it('has the Dockerfile compose builds, with the compiled CLI and the SQL migrations', () => {
    const services = compose.services;
    expect(services.worker?.build).toBe('.');
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    expect(dockerfile).toMatch(/RUN npm run build/);
    expect(dockerfile).toMatch(/COPY sql \.\/sql/);
    expect(dockerfile).toMatch(/ENTRYPOINT \["node", "bin\/crmsync\.js"\]/);
  });

  it("gives the worker its launch settings in the image and its service, so it starts once; the receiver keeps V8's own", () => {
    const finalStage =
      readFileSync('Dockerfile', 'utf8')
        .split(/^FROM /m)
        .at(-1) ?? '';
    const image = Object.fromEntries([...finalStage.matchAll(/^ENV (\w+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
    const { services } = compose;
    expect(missingWorkerLaunchSettings({ ...image, ...services.worker?.environment }, [])).toBeUndefined();
    expect(missingWorkerLaunchSettings({ ...image, ...services.webhooks?.environment }, [])?.execArgv).toEqual([WORKER_SEMI_SPACE_FLAG]);
  });

  it('publishes the unauthenticated Temporal port and UI on loopback only', () => {
    const raw = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as { services: Record<string, { ports?: string[] }> };
    for (const name of ['temporal', 'temporal-ui']) {
      for (const p of raw.services[name]?.ports ?? []) expect(p, name).toMatch(/^127\.0\.0\.1:/);
    }
  });
});
