import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ENTRY = fileURLToPath(new URL('../../src/cli/entry.ts', import.meta.url));
// Absolute, so the CLI also runs from a folder outside the checkout (`cwd`).
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the crmsync CLI from source in a child process with exactly `env` (plus PATH and HOME).
 * An embedded Temporal stops with its command unless `env` sets CRMSYNC_EMBEDDED_IDLE: a test
 * leaves no server behind.
 */
export function runCli(args: string[], env: Record<string, string | undefined>, timeoutMs = 120_000, cwd?: string): Promise<CliResult> {
  return startCli(args, env, timeoutMs, cwd).done;
}

/** The same, returning the child too (to signal it) and its output so far. */
export function startCli(args: string[], env: Record<string, string | undefined>, timeoutMs = 120_000, cwd?: string): { child: ChildProcess; output: () => CliResult; done: Promise<CliResult> } {
  const child = spawn(process.execPath, ['--import', TSX, ENTRY, ...args], {
    ...(cwd ? { cwd } : {}),
    env: { PATH: process.env.PATH, HOME: process.env.HOME, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME, TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH, CRMSYNC_EMBEDDED_IDLE: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CliResult>((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  return { child, output: () => ({ code: child.exitCode, stdout, stderr }), done };
}
