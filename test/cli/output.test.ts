import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { stopEmbeddedServer } from '../../src/temporal/stop-embedded-server.js';
import { withSyncEnv } from '../sync/helpers/sync-env.js';
import { runCli } from './run-cli.js';

// Issue 16, problem 4: progress interleaved with pino JSON and Temporal's own
// "[WARN] No activities registered" lines in every sync, push, worker and demo.
describe('command output', () => {
  it('off a terminal, stderr holds only JSON log lines, Temporal’s included, and no expected-worker warnings', { timeout: 240_000 }, async () => {
    await withSyncEnv({ worker: false, sim: { contacts: 120, seed: 5 } }, async (env) => {
      const embedded: Record<string, string> = { ...env.env, CRMSYNC_LOG_LEVEL: 'debug' };
      delete embedded.TEMPORAL_ADDRESS;
      try {
        const sync = await runCli(['sync', '--stream', 'tags', '--stream', 'contacts'], embedded, 200_000);
        expect(sync.code, sync.stderr).toBe(0);
        const lines = sync.stderr.split('\n').filter((l) => l.trim() !== '');
        expect(lines.length).toBeGreaterThan(0);
        const parsed = lines.map((l) => {
          try {
            return JSON.parse(l) as { level: number; msg: string; temporal?: boolean };
          } catch {
            throw new Error(`not a JSON log line on stderr: ${l}`);
          }
        });
        // The SDK's lines come through our logger (marked temporal), its expected notes at debug.
        expect(parsed.some((p) => p.temporal === true)).toBe(true);
        for (const p of parsed.filter((x) => /No (activities|workflows) registered/.test(x.msg))) expect(p.level).toBe(20);
        // stdout: progress lines and the summary only.
        expect(sync.stdout).not.toMatch(/"level":/);
        expect(sync.stdout).toMatch(/^ {2}tags\s+\S+\s+rows/m);
      } finally {
        await stopEmbeddedServer(env.dir);
      }
    });
  });

  it('on a terminal, logs are short human warning lines; --log-json asks for JSON there too', { timeout: 120_000 }, () => {
    // script(1) gives the process a real pty, as a person's terminal.
    const inPty = (json: boolean): string => {
      const code = `const m = await import('./src/logger.ts'); ${json ? "m.setLogFormat('json');" : ''} const l = m.createLogger('info'); l.info('routine detail'); l.warn({ table: 'contacts' }, 'the lake is behind'); l.flush?.();`;
      const r = spawnSync('script', ['-qec', `node --import tsx --input-type=module -e "${code.replaceAll('"', '\\"')}"`, '/dev/null'], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'dumb' },
      });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout;
    };
    const human = inPty(false);
    expect(human).toMatch(/crmsync: warning: the lake is behind \(table=contacts\)/);
    expect(human).not.toMatch(/routine detail|"level":/);
    const json = inPty(true);
    expect(json).toMatch(/"level":40.*"msg":"the lake is behind"/);
    expect(json).toMatch(/"msg":"routine detail"/);
  });
});
