import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Runs `node --import tsx <script> --child ...args` and returns the JSON of the last line it
 * prints: one setting of a benchmark in a process of its own, so the peak memory the child reads
 * from /proc is its alone. `what` names the setting in the error when the child fails.
 */
export function runChildJson<T>(scriptUrl: string, args: readonly string[], what: string): T {
  const r = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(scriptUrl), '--child', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) throw new Error(`${what}: child exited with ${String(r.status ?? r.signal)}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as T;
}
