import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { sizeBytes } from '../../src/size-bytes.js';
import { defaultSyncMemoryLimit, defaultSyncThreads } from '../../src/worker/owner-memory-defaults.js';

const GB = 1e9;

describe("the warehouse owner's memory defaults", () => {
  it("give the owner 128MB and one DuckDB thread on a machine with memory to spare, not DuckDB's 80% of it", () => {
    const config = loadConfig({}, { memoryBytes: 24 * GB, cores: 2 });
    expect(config.syncMemoryLimit).toBe('128MB');
    expect(config.syncThreads).toBe(1);
    expect(config.syncCheckpointThreshold).toBe('128MB');
    expect(config.workerHeapGrowthPercent).toBe(50);
  });

  it('take a sixteenth of a small machine (or container), not less than 64MB', () => {
    expect(defaultSyncMemoryLimit({ memoryBytes: 1.6 * GB, cores: 1 })).toBe('100MB');
    expect(defaultSyncMemoryLimit({ memoryBytes: 0.5 * GB, cores: 1 })).toBe('64MB');
    expect(defaultSyncMemoryLimit({ memoryBytes: 256 * GB, cores: 64 })).toBe('128MB');
  });

  it('refuse a limit under 32MB, naming the variable and the floor', () => {
    expect(() => loadConfig({ CRMSYNC_SYNC_MEMORY_LIMIT: '1KB' }, { memoryBytes: 24 * GB, cores: 4 })).toThrow(/CRMSYNC_SYNC_MEMORY_LIMIT must be at least 32MB/);
    expect(() => loadConfig({ CRMSYNC_SYNC_MEMORY_LIMIT: '31MB' }, { memoryBytes: 24 * GB, cores: 4 })).toThrow(/at least 32MB/);
    expect(() => loadConfig({ CRMSYNC_SYNC_MEMORY_LIMIT: 'lots' }, { memoryBytes: 24 * GB, cores: 4 })).toThrow(/must look like 256MB or 2GB/);
    expect(loadConfig({ CRMSYNC_SYNC_MEMORY_LIMIT: '32MB' }, { memoryBytes: 24 * GB, cores: 4 }).syncMemoryLimit).toBe('32MB');
  });

  it('give a raised limit one thread per 128MB, at most one per core', () => {
    expect(loadConfig({ CRMSYNC_SYNC_MEMORY_LIMIT: '1GB' }, { memoryBytes: 24 * GB, cores: 4 }).syncThreads).toBe(4);
    expect(loadConfig({ CRMSYNC_SYNC_MEMORY_LIMIT: '512MiB' }, { memoryBytes: 24 * GB, cores: 8 }).syncThreads).toBe(4);
    expect(defaultSyncThreads('64MB', { memoryBytes: GB, cores: 2 })).toBe(1);
  });

  it('stay overridable, each setting on its own', () => {
    const config = loadConfig(
      { CRMSYNC_SYNC_MEMORY_LIMIT: '256MB', CRMSYNC_SYNC_THREADS: '2', CRMSYNC_SYNC_CHECKPOINT_THRESHOLD: '256MB', CRMSYNC_WORKER_HEAP_GROWTH_PERCENT: '0' },
      { memoryBytes: 24 * GB, cores: 2 },
    );
    expect(config).toMatchObject({ syncMemoryLimit: '256MB', syncThreads: 2, syncCheckpointThreshold: '256MB', workerHeapGrowthPercent: 0 });
  });

  it('refuse malformed values, naming the variable', () => {
    expect(() => loadConfig({ CRMSYNC_SYNC_CHECKPOINT_THRESHOLD: 'lots' })).toThrow(/CRMSYNC_SYNC_CHECKPOINT_THRESHOLD must look like 64MB/);
    expect(() => loadConfig({ CRMSYNC_WORKER_HEAP_GROWTH_PERCENT: '-5' })).toThrow(/CRMSYNC_WORKER_HEAP_GROWTH_PERCENT must be a whole number of percent/);
  });

  it('read sizes in the units DuckDB takes', () => {
    expect(sizeBytes('128MB')).toBe(128e6);
    expect(sizeBytes('1.5 GiB')).toBe(1.5 * 1024 ** 3);
    expect(() => sizeBytes('12 parsecs')).toThrow(/256MB/);
  });
});
