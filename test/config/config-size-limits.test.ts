import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, MAX_CONFIG_VALUE, MAX_ENV_FILE_BYTES, readEnv } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';

/** A value of `length` characters that says where it came from, to look for it in messages. */
const valueOf = (length: number): string => `MARKER-${'v'.repeat(length - 7)}`;

function errorOf(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a throw');
}

describe('configuration values have a size limit', () => {
  it.each([
    ['CRM_BASE_URL', 2048],
    ['CRM_USERNAME', 256],
    ['CRM_PASSWORD', 1024],
    ['CRM_WEBHOOK_SECRET', 1024],
    ['CRMSYNC_DB', MAX_CONFIG_VALUE],
    ['CRMSYNC_WEBHOOK_SECRETS_FILE', MAX_CONFIG_VALUE],
    ['TEMPORAL_NAMESPACE', MAX_CONFIG_VALUE],
    ['CRMSYNC_TASK_QUEUE', MAX_CONFIG_VALUE],
  ])('%s: up to %i characters, and one more is refused naming the variable, not the value', (key, max) => {
    expect(() => loadConfig({ [key]: valueOf(max) })).not.toThrow();
    const e = errorOf(() => loadConfig({ [key]: valueOf(max + 1) }));
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.message).toContain(`${key}: is ${max + 1} characters, more than the ${max} it may have`);
    expect(e.message).not.toContain('MARKER');
    expect(e.message.length).toBeLessThan(500);
  });

  it('checks every variable crmsync reads, and ignores the ones it does not', () => {
    const e = errorOf(() => loadConfig({ CRM_TIMEZONE: valueOf(MAX_CONFIG_VALUE + 1), CRMSYNC_LOG_LEVEL: valueOf(MAX_CONFIG_VALUE + 1) }));
    expect(e.message).toMatch(/CRM_TIMEZONE: is 4097 characters/);
    expect(e.message).toMatch(/CRMSYNC_LOG_LEVEL: is 4097 characters/);
    expect(() => loadConfig({ SOMETHING_ELSE: 'x'.repeat(100_000) })).not.toThrow();
  });
});

describe('the .env file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'crmsync-env-file-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('adds its variables under those of the environment; a missing file adds nothing', async () => {
    const file = join(dir, 'small.env');
    await writeFile(file, 'CRM_USERNAME=from-file\nCRM_PASSWORD="file password"\n# a comment\n');
    const env = readEnv(file, { CRM_USERNAME: 'from-env' });
    expect(env).toEqual({ CRM_USERNAME: 'from-env', CRM_PASSWORD: 'file password' });
    expect(loadConfig(env).crm.password?.reveal()).toBe('file password');
    expect(readEnv(join(dir, 'absent.env'), { A: '1' })).toEqual({ A: '1' });
  });

  it('is refused unread past 1 MiB, naming the fix and no value', async () => {
    const file = join(dir, 'big.env');
    const head = 'CRM_PASSWORD=MARKER-secret\n';
    await writeFile(file, head.padEnd(MAX_ENV_FILE_BYTES + 1, '#'));
    const env = {};
    const e = errorOf(() => readEnv(file, env));
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.message).toMatch(/larger than 1 MiB; it should hold only crmsync's variables/);
    expect(e.message).not.toContain('MARKER');
    expect(env).toEqual({});
    await writeFile(file, head.padEnd(MAX_ENV_FILE_BYTES, '#'));
    expect(readEnv(file, {})).toEqual({ CRM_PASSWORD: 'MARKER-secret' });
  });
});
