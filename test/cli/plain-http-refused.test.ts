import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, requireCrm, type Config } from '../../src/config.js';
import { InsecureTransportError } from '../../src/crm/index.js';
import { silentLogger } from '../../src/logger.js';
import { parsePushOptions, dryRunCommand, pushCommand } from '../../src/cli/push.js';
import { parseSyncOptions, syncCommand } from '../../src/cli/sync.js';
import { verifyCommand } from '../../src/cli/verify.js';
import { DeadLettersOptions, runDeadLetters } from '../../src/cli/webhook-dead-letters.js';
import { serveWebhooks } from '../../src/cli/webhooks.js';
import { WorkerOptions, workerCommand } from '../../src/cli/worker.js';
import { runCli } from './run-cli.js';

/**
 * Plain http to a CRM other than loopback is refused by every command that sends the credentials
 * or has a worker send them, before it starts or joins anything. Some of them hand the requests
 * to a worker (push, the worker itself, webhooks serve, dead-letters --retry): the client's own
 * check would come only in that worker, after a Temporal and a DuckDB file were opened, or not at
 * all in this process when another worker serves. TEMPORAL_ADDRESS points at a port nobody
 * listens on: a command that went past the check fails there instead, with another error.
 */
const PASSWORD = 'plain-http-password-1';
let dir: string;
let env: Record<string, string>;
let config: Config;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crmsync-plain-http-'));
  env = {
    CRM_BASE_URL: 'http://crm.example.test/wp-json/fluent-crm/v2',
    CRM_USERNAME: 'api',
    CRM_PASSWORD: PASSWORD,
    CRM_WEBHOOK_SECRET: 'plain-http-webhook-secret',
    CRMSYNC_DATA_DIR: dir,
    CRMSYNC_DB: join(dir, 'crm.duckdb'),
    CRMSYNC_LAKE: join(dir, 'lake'),
    CRMSYNC_WEBHOOK_PORT: '0',
    CRMSYNC_EMBEDDED_IDLE: '0',
    TEMPORAL_ADDRESS: '127.0.0.1:1',
  };
  config = loadConfig(env);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function refusal(run: () => Promise<unknown>): Promise<unknown> {
  return await run().then(
    () => new Error('the command ran'),
    (e: unknown) => e,
  );
}

describe('plain http to a CRM other than loopback', () => {
  const commands: [string, () => Promise<unknown>][] = [
    ['sync', () => syncCommand(config, parseSyncOptions({}), silentLogger)],
    ['verify', () => verifyCommand(config, [])],
    ['push', () => pushCommand(config, parsePushOptions({ from: 'upserts' }), silentLogger, undefined)],
    ['push --dry-run', () => dryRunCommand(config, parsePushOptions({ from: 'upserts', dryRun: true }))],
    ['worker (also the background worker a command starts)', () => workerCommand(config, WorkerOptions.parse({ background: true }), silentLogger)],
    ['webhooks serve', () => serveWebhooks(config, { path: '/webhooks/crm', apply: true, maxBodyKb: 1024 }, silentLogger)],
    ['webhooks dead-letters --retry', () => runDeadLetters(config, DeadLettersOptions.parse({ retry: true }), silentLogger, () => undefined)],
  ];

  it.each(commands)('%s refuses it before it starts anything, naming CRM_ALLOW_INSECURE_HTTP', async (_name, run) => {
    const e = await refusal(run);
    expect(e).toBeInstanceOf(InsecureTransportError);
    expect((e as Error).message).toMatch(/use https in CRM_BASE_URL, or set CRM_ALLOW_INSECURE_HTTP=1/);
    expect((e as Error).message).not.toContain(PASSWORD);
  });

  it('is allowed when asked for, and loopback needs no permission', () => {
    expect(() => requireCrm(loadConfig({ ...env, CRM_ALLOW_INSECURE_HTTP: '1' }))).not.toThrow();
    for (const host of ['127.0.0.1:8080', 'localhost', '[::1]:8080']) {
      expect(() => requireCrm(loadConfig({ ...env, CRM_BASE_URL: `http://${host}/v2` }))).not.toThrow();
    }
    for (const host of ['127.0.0.1.example.test', 'localhost.example.test', '10.0.0.5', '[::ffff:127.0.0.1]']) {
      expect(() => requireCrm(loadConfig({ ...env, CRM_BASE_URL: `http://${host}/v2` })), host).toThrow(InsecureTransportError);
    }
  });

  it('the push command says so and exits 1, with nothing sent and no credential printed', { timeout: 60_000 }, async () => {
    const r = await runCli(['push', '--from', 'upserts'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Refusing to send CRM credentials over plain http to crm\.example\.test.*\[CRM_INSECURE_TRANSPORT\]/);
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);
  });
});
