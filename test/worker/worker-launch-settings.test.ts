import { describe, expect, it } from 'vitest';
import { missingWorkerLaunchSettings, WORKER_SEMI_SPACE_FLAG } from '../../src/worker/worker-launch-settings.js';

describe('the worker launch settings', () => {
  it('adds both to a worker started without them', () => {
    expect(missingWorkerLaunchSettings({}, [])).toEqual({ env: { MALLOC_ARENA_MAX: '2' }, execArgv: [WORKER_SEMI_SPACE_FLAG] });
  });

  it("leaves each one the user set to the user's value", () => {
    expect(missingWorkerLaunchSettings({ MALLOC_ARENA_MAX: '8' }, [])).toEqual({ env: {}, execArgv: [WORKER_SEMI_SPACE_FLAG] });
    expect(missingWorkerLaunchSettings({ NODE_OPTIONS: '--max-old-space-size=900 --max-semi-space-size=16' }, [])).toEqual({ env: { MALLOC_ARENA_MAX: '2' }, execArgv: [] });
    expect(missingWorkerLaunchSettings({}, ['--max_semi_space_size=2'])).toEqual({ env: { MALLOC_ARENA_MAX: '2' }, execArgv: [] });
  });

  it('asks for nothing once they are set (no second start) or when turned off', () => {
    expect(missingWorkerLaunchSettings({ MALLOC_ARENA_MAX: '2' }, [WORKER_SEMI_SPACE_FLAG])).toBeUndefined();
    expect(missingWorkerLaunchSettings({ CRMSYNC_WORKER_LAUNCH_DEFAULTS: '0' }, [])).toBeUndefined();
    expect(missingWorkerLaunchSettings({ CRMSYNC_WORKER_LAUNCH_DEFAULTS: 'off' }, [])).toBeUndefined();
    expect(missingWorkerLaunchSettings({ CRMSYNC_WORKER_LAUNCH_DEFAULTS: '1' }, [])).toBeDefined();
  });
});
