import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('CRMSYNC_SYNC_CONTACT_PAGES', () => {
  it('defaults to raw pages DuckDB parses, takes parsed, and names the choices when wrong', () => {
    expect(loadConfig({}).syncContactPages).toBe('raw');
    expect(loadConfig({ CRMSYNC_SYNC_CONTACT_PAGES: 'parsed' }).syncContactPages).toBe('parsed');
    expect(() => loadConfig({ CRMSYNC_SYNC_CONTACT_PAGES: 'json' })).toThrow(/CRMSYNC_SYNC_CONTACT_PAGES must be raw .* or parsed/);
  });
});
