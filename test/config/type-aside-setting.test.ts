import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('CRMSYNC_SYNC_TYPE_ASIDE', () => {
  it('types the next load aside by default, turns it off with off/0/false/no, and names the choices when wrong', () => {
    expect(loadConfig({}).syncTypeAside).toBe(true);
    expect(loadConfig({ CRMSYNC_SYNC_TYPE_ASIDE: '' }).syncTypeAside).toBe(true);
    for (const on of ['on', '1', 'true', 'yes']) expect(loadConfig({ CRMSYNC_SYNC_TYPE_ASIDE: on }).syncTypeAside).toBe(true);
    for (const off of ['off', '0', 'false', 'no']) expect(loadConfig({ CRMSYNC_SYNC_TYPE_ASIDE: off }).syncTypeAside).toBe(false);
    expect(() => loadConfig({ CRMSYNC_SYNC_TYPE_ASIDE: 'sometimes' })).toThrow(/CRMSYNC_SYNC_TYPE_ASIDE must be on .* or off/);
  });
});
