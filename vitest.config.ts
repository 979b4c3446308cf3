import { defineConfig } from 'vitest/config';

// forks: the Temporal core bridge and DuckDB are native addons and must not share a thread.
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    fileParallelism: true,
    maxWorkers: 2,
  },
});
