import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('webhook receiver limits in the configuration', () => {
  it('reads the event-time window and the per-address cap, leaving the receiver defaults when unset', () => {
    expect(loadConfig({}).webhooks).toMatchObject({ maxEventAgeHours: undefined, maxClockSkewSeconds: undefined, maxConnectionsPerAddress: undefined });
    const c = loadConfig({ CRMSYNC_WEBHOOK_MAX_EVENT_AGE_HOURS: '48', CRMSYNC_WEBHOOK_MAX_CLOCK_SKEW_SECONDS: '30', CRMSYNC_WEBHOOK_MAX_CONNECTIONS_PER_ADDRESS: '512' });
    expect(c.webhooks).toMatchObject({ maxEventAgeHours: 48, maxClockSkewSeconds: 30, maxConnectionsPerAddress: 512 });
  });

  it('refuses values that are not positive, naming the variable', () => {
    expect(() => loadConfig({ CRMSYNC_WEBHOOK_MAX_EVENT_AGE_HOURS: '-1' })).toThrow(/CRMSYNC_WEBHOOK_MAX_EVENT_AGE_HOURS must be a positive number/);
    expect(() => loadConfig({ CRMSYNC_WEBHOOK_MAX_CONNECTIONS_PER_ADDRESS: '1.5' })).toThrow(/CRMSYNC_WEBHOOK_MAX_CONNECTIONS_PER_ADDRESS must be a whole number/);
  });
});
