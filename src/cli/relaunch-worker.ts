import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { Socket } from 'node:net';
import { LAUNCH_DEFAULTS_OPT_OUT, type WorkerLaunchSettings } from '../worker/worker-launch-settings.js';

/** The signals a launcher passes on; the worker drains on SIGINT and SIGTERM. */
const FORWARDED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR2'];

/** Names the pipe a relaunched worker watches to learn that its launcher is gone. */
const LAUNCHER_FD_VARIABLE = 'CRMSYNC_WORKER_LAUNCHER_FD';
const LAUNCHER_FD = 3;

/**
 * Runs this command again with `settings` (node cannot take them once started) and mirrors the
 * new process: the same stdio, every signal this one gets passed on once, and its end as this
 * one's (its exit code, or death by the same signal). Never returns.
 *
 * The worker runs in a session of its own, so a terminal's Ctrl-C reaches it once, through this
 * process, and not a second time directly: a second SIGINT stops a draining worker at once. It
 * watches a pipe from this process and drains (SIGTERM) if this one dies without passing a
 * signal on (SIGKILL), so it never outlives its launcher.
 */
export async function relaunchWorker(settings: WorkerLaunchSettings, argv: readonly string[] = process.argv): Promise<never> {
  const child = spawn(process.execPath, [...process.execArgv, ...settings.execArgv, ...argv.slice(1)], {
    env: { ...process.env, ...settings.env, [LAUNCHER_FD_VARIABLE]: String(LAUNCHER_FD) },
    stdio: ['inherit', 'inherit', 'inherit', 'pipe'],
    detached: true,
  });
  const forward = (signal: NodeJS.Signals): void => {
    child.kill(signal);
  };
  for (const s of FORWARDED) process.on(s, forward);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
    child.once('error', (err) => {
      process.stderr.write(`crmsync: could not start the worker (${process.execPath}): ${err.message}; set ${LAUNCH_DEFAULTS_OPT_OUT}=0 to run it in this process\n`);
      resolve([70, null]);
    });
    child.once('exit', (c, s) => resolve([c, s]));
  });
  for (const s of FORWARDED) process.off(s, forward);
  if (signal) {
    // Die the way the worker died, so a shell or supervisor sees the same status.
    process.kill(process.pid, signal);
    await new Promise((r) => setTimeout(r, 1_000));
    process.exit(128 + (constants.signals[signal] ?? 0));
  }
  process.exit(code ?? 70);
}

/**
 * In a worker a launcher started: drains (SIGTERM to itself) when the launcher's pipe closes,
 * i.e. the launcher died without passing a signal on. Does nothing in a worker started directly.
 */
export function watchLauncher(env: NodeJS.ProcessEnv = process.env): void {
  const fd = Number(env[LAUNCHER_FD_VARIABLE]);
  delete env[LAUNCHER_FD_VARIABLE];
  if (!Number.isInteger(fd) || fd < 3) return;
  let pipe: Socket;
  try {
    pipe = new Socket({ fd, readable: true, writable: false });
  } catch {
    return;
  }
  let told = false;
  const gone = (): void => {
    // Once: a second SIGTERM would stop the drain.
    if (!told) process.kill(process.pid, 'SIGTERM');
    told = true;
  };
  pipe.once('end', gone);
  pipe.once('error', gone);
  pipe.resume();
  pipe.unref();
}
