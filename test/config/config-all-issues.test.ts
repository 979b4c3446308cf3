import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';

function messageOf(env: NodeJS.ProcessEnv): string {
  try {
    loadConfig(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('expected the configuration to be refused');
}

describe('a configuration with several mistakes', () => {
  it('names every bad variable in one message, the time zone among them', () => {
    const message = messageOf({ CRM_TIMEZONE: 'Mars/Phobos', CRM_MAX_RPS: 'fast', CRM_MAX_CONCURRENCY: '1.5', CRMSYNC_LOG_LEVEL: 'loud' });
    expect(message).toMatch(/CRM_TIMEZONE "Mars\/Phobos" is not an IANA time zone/);
    expect(message).toMatch(/CRM_MAX_RPS must be a positive number, got "fast"/);
    expect(message).toMatch(/CRM_MAX_CONCURRENCY must be a whole number/);
    expect(message).toMatch(/CRMSYNC_LOG_LEVEL/);
  });

  it('refuses an empty time zone and a fractional concurrency, and takes whole ones', () => {
    expect(messageOf({ CRM_TIMEZONE: '' })).toMatch(/CRM_TIMEZONE "" is not an IANA time zone/);
    expect(messageOf({ CRM_MAX_CONCURRENCY: '0.5' })).toMatch(/CRM_MAX_CONCURRENCY/);
    const config = loadConfig({ CRM_TIMEZONE: 'America/St_Johns', CRM_MAX_CONCURRENCY: '4' });
    expect(config.crm.timezone).toBe('America/St_Johns');
    expect(config.crm.maxConcurrency).toBe(4);
  });
});
