import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { CATALOG_FILE } from '../../src/warehouse/lake-layout.js';

describe('catalog and publish cadence configuration', () => {
  it('finds the catalog where the publisher writes it: <lake>/catalog.duckdb unless CRMSYNC_CATALOG says otherwise', () => {
    expect(loadConfig({ CRMSYNC_LAKE: '/srv/lake' }).catalogPath).toBe(join('/srv/lake', CATALOG_FILE));
    expect(loadConfig({}).catalogPath).toBe(join('./data/lake', CATALOG_FILE));
    expect(loadConfig({ CRMSYNC_LAKE: '/srv/lake', CRMSYNC_CATALOG: '/srv/cat.duckdb' }).catalogPath).toBe('/srv/cat.duckdb');
  });

  it('reads CRMSYNC_PUBLISH_EVERY as a duration (default 5m; 0 turns publishes between runs off) and names the fix for a bad one', () => {
    expect(loadConfig({}).publishEveryMs).toBe(300_000);
    expect(loadConfig({ CRMSYNC_PUBLISH_EVERY: '30s' }).publishEveryMs).toBe(30_000);
    expect(loadConfig({ CRMSYNC_PUBLISH_EVERY: '1h 30m' }).publishEveryMs).toBe(5_400_000);
    expect(loadConfig({ CRMSYNC_PUBLISH_EVERY: '0' }).publishEveryMs).toBe(0);
    expect(() => loadConfig({ CRMSYNC_PUBLISH_EVERY: 'soon' })).toThrow(/CRMSYNC_PUBLISH_EVERY must be 0 .* or a duration such as 30s/);
  });
});
