import { describe, expect, it } from 'vitest';
import { applyDuckdbAllocatorDefaults } from '../../src/worker/duckdb-allocator-defaults.js';

// That the settings reach DuckDB's allocator: test/cli/duckdb-allocator.test.ts.
describe('applyDuckdbAllocatorDefaults', () => {
  it("puts the defaults in front of the user's settings, once", () => {
    const env: NodeJS.ProcessEnv = {};
    applyDuckdbAllocatorDefaults(env);
    expect(env.DUCKDB_JE_MALLOC_CONF).toBe('narenas:1');
    // A background worker inherits its command's environment: nothing is added twice.
    applyDuckdbAllocatorDefaults(env);
    expect(env.DUCKDB_JE_MALLOC_CONF).toBe('narenas:1');
    const user: NodeJS.ProcessEnv = { DUCKDB_JE_MALLOC_CONF: 'dirty_decay_ms:0,muzzy_decay_ms:0' };
    applyDuckdbAllocatorDefaults(user);
    expect(user.DUCKDB_JE_MALLOC_CONF).toBe('narenas:1,dirty_decay_ms:0,muzzy_decay_ms:0');
  });
});
