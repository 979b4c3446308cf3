import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { checkBaseUrl } from '../../src/crm/transport.js';

describe('configuration keeps secrets out of errors', () => {
  it('does not echo a malformed CRM_BASE_URL, which may carry a password', () => {
    let message = '';
    try {
      checkBaseUrl('https://user:s3cretpw@ho st/v2', false);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/CRM_BASE_URL is not a valid URL/);
    expect(message).not.toContain('s3cretpw');
  });

  it('rejects a webhook secret shorter than 16 characters, naming the fix', () => {
    expect(() => loadConfig({ CRM_WEBHOOK_SECRET: 'x' })).toThrow(/at least 16 characters/);
    expect(loadConfig({ CRM_WEBHOOK_SECRET: 'a'.repeat(32) }).webhooks.secret?.reveal()).toBe('a'.repeat(32));
  });

  it('prints secrets redacted wherever the config is logged or serialised', () => {
    const config = loadConfig({ CRM_PASSWORD: 'hunter2-long-password', CRM_WEBHOOK_SECRET: 'b'.repeat(20) });
    const text = `${JSON.stringify(config)} ${String(config.crm.password)}`;
    expect(text).not.toContain('hunter2-long-password');
    expect(text).not.toContain('b'.repeat(20));
  });
});
