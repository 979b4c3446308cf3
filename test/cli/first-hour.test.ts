import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { SIMULATOR_DEFAULT_PASSWORD, SIMULATOR_DEFAULT_USERNAME } from '../../src/cli/simulator.js';
import { formatDuration, parseDuration } from '../../src/sync/parse-duration.js';
import { runCli } from './run-cli.js';

// Issue 16, problem 9: the small things a new user trips over in the first hour.
const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'crmsync-first-hour-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the first hour of a new user', () => {
  it('reports a malformed TEMPORAL_ADDRESS as malformed, not as unreachable', { timeout: 60_000 }, async () => {
    const cwd = tempDir();
    const results = await Promise.all(['http://127.0.0.1:7233', '127.0.0.1', 'temporal:7233/default'].map((a) => runCli(['schedule', 'list'], { TEMPORAL_ADDRESS: a }, 60_000, cwd)));
    for (const r of results) {
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/TEMPORAL_ADDRESS is malformed: it must be host:port.*\[CONFIG_INVALID\]/s);
      expect(r.stderr).not.toMatch(/Cannot reach/);
    }
  });

  it('`schedule list` and `status` in a fresh folder create no ./data and start no server', { timeout: 60_000 }, async () => {
    const cwd = tempDir();
    const [list, pause] = await Promise.all([runCli(['schedule', 'list'], {}, 60_000, cwd), runCli(['schedule', 'pause'], {}, 60_000, cwd)]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toBe('no schedules\n');
    expect(pause.code).toBe(1);
    expect(pause.stderr).toMatch(/No schedule "crmsync-sync-schedule".*\[SCHEDULE_NOT_FOUND\]/);
    const status = await runCli(['status', '--json'], {}, 60_000, cwd);
    expect(status.code, status.stderr).toBe(0);
    expect(readdirSync(cwd)).toEqual([]);
    expect(existsSync(join(cwd, 'data'))).toBe(false);
  });

  it('a schedule created before its interval text was kept lists the shortest text for it', () => {
    const shown = { '15m': '15m', '1h30m': '1h30m', '90s': '1m30s', '24h': '1d', '2d': '2d' };
    for (const [every, text] of Object.entries(shown)) expect(formatDuration(parseDuration(every, '--every'))).toBe(text);
  });

  it('the simulator prints the username and password it accepts', { timeout: 60_000 }, async () => {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/entry.ts', 'simulator', '--contacts', '5', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    try {
      await new Promise<void>((resolve, reject) => {
        createInterface({ input: child.stderr }).on('line', (l) => l.includes('Ctrl-C') && resolve());
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
      });
      expect(stderr).toMatch(new RegExp(`^ {2}CRM_USERNAME=${SIMULATOR_DEFAULT_USERNAME}$`, 'm'));
      expect(stderr).toMatch(new RegExp(`^ {2}CRM_PASSWORD=${SIMULATOR_DEFAULT_PASSWORD}\\b`, 'm'));
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });
});
