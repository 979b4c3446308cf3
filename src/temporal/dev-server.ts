import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { freePort } from './free-port.js';
import { TemporalDevServerError } from './errors.js';
import { waitForTemporal } from './wait-for-temporal.js';

export interface DevServerOptions {
  cliPath: string;
  /** SQLite file for durable state (schedules survive restarts); in memory when unset. */
  dbFile?: string | undefined;
  namespace?: string | undefined;
  /** Time allowed for the server to become ready; generous because CI machines are loaded. */
  readyTimeoutMs?: number | undefined;
  /**
   * Let the server outlive this process: a small shell keeper runs it and stops it once
   * `leaseFile` has not been touched for `idleMs` (commands touch it while they use the server),
   * then removes `recordFile` if it still names the keeper. Output goes to `logFile`.
   */
  keepAlive?: { leaseFile: string; idleMs: number; recordFile: string; logFile: string } | undefined;
}

export interface DevServer {
  address: string;
  namespace: string;
  pid: number;
  stop(): Promise<void>;
}

const OUTPUT_TAIL_BYTES = 8 * 1024;

/**
 * Runs the CLI under a shell that also watches our stdin pipe: when this process dies in any
 * way (even SIGKILL, where no exit hook runs) the pipe closes and the server gets SIGTERM, so a
 * killed test run or CLI leaves no server behind. `$0 "$@"` is the CLI and its arguments.
 */
const WATCHDOG = [
  'exec 3<&0',
  '"$0" "$@" </dev/null &',
  'c=$!',
  '( read -r _ <&3; kill -TERM "$c" 2>/dev/null ) &',
  'w=$!',
  `trap 'kill -TERM "$c" 2>/dev/null' TERM INT`,
  'wait "$c"; s=$?',
  // wait returns early when a trapped signal arrives: keep waiting for the real exit.
  'while kill -0 "$c" 2>/dev/null; do wait "$c"; s=$?; done',
  'kill "$w" 2>/dev/null',
  'exit $s',
].join('\n');
const PORT_ATTEMPTS = 3;

/**
 * The server commits every history event to its SQLite file. In SQLite's default rollback
 * journal each commit waits for several fsyncs, and a run's events queue behind them (children
 * started one by one, each activity's result late): most of a sync with nothing to do was spent
 * there. A write-ahead log with `synchronous=normal` syncs at checkpoints only: the file stays
 * consistent after any crash; a power loss can lose the last commits (a deployment that must
 * not sets TEMPORAL_ADDRESS to a real Temporal). Figures: `bench/results/cli-latency.json`.
 */
export const SQLITE_PRAGMAS = ['journal_mode=wal', 'synchronous=normal'] as const;

/**
 * The keeper of a server that outlives its command: `$0 "$@"` is the CLI, the environment names
 * the lease, the idle limit in seconds and the record. It checks the lease's age every second
 * (stat on Linux, BSD stat elsewhere) and stops the server on SIGTERM as well.
 */
const KEEPER = [
  '"$0" "$@" </dev/null &',
  'c=$!',
  `trap 'kill -TERM "$c" 2>/dev/null' TERM INT HUP`,
  'while kill -0 "$c" 2>/dev/null; do',
  '  sleep 1 & wait $!',
  '  m=$(stat -c %Y "$CRMSYNC_LEASE" 2>/dev/null || stat -f %m "$CRMSYNC_LEASE" 2>/dev/null || echo 0)',
  '  if [ $(( $(date +%s) - m )) -gt "$CRMSYNC_IDLE_S" ]; then kill -TERM "$c" 2>/dev/null; break; fi',
  'done',
  'wait "$c"; s=$?',
  'while kill -0 "$c" 2>/dev/null; do wait "$c"; s=$?; done',
  `grep -q '"pid":'"$$"'[,}]' "$CRMSYNC_RECORD" 2>/dev/null && rm -f "$CRMSYNC_RECORD"`,
  'exit $s',
].join('\n');

/**
 * Starts `temporal server start-dev --headless` on a free 127.0.0.1 port and resolves once it
 * serves `namespace`. The child is killed if this process exits or gets SIGINT/SIGTERM, so an
 * interrupted run leaves nothing behind.
 */
export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  let lastError: unknown;
  for (let attempt = 1; attempt <= PORT_ATTEMPTS; attempt++) {
    try {
      return await startOnce(options, await freePort());
    } catch (err) {
      lastError = err;
      // Only a lost race is worth another try: for the port, or between the server's own SQLite
      // connections while one turns a new file to the write-ahead log (SQLITE_BUSY, seen once
      // under heavy load; the next start finds the file converted).
      if (!(err instanceof TemporalDevServerError) || !/address already in use|SQLITE_BUSY/i.test(err.message)) throw err;
    }
  }
  throw lastError;
}

async function startOnce(options: DevServerOptions, port: number): Promise<DevServer> {
  const namespace = options.namespace ?? 'default';
  const address = `127.0.0.1:${port}`;
  const args = ['server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'warn'];
  if (namespace !== 'default') args.push('--namespace', namespace);
  if (options.dbFile) args.push('--db-filename', options.dbFile);
  if (options.dbFile) args.push(...SQLITE_PRAGMAS.flatMap((p) => ['--sqlite-pragma', p]));

  const keepAlive = options.keepAlive;
  let output = '';
  let child: ChildProcess;
  if (keepAlive) {
    // Detached with its output in a file: nothing ties the server to this process any more.
    const log = openSync(keepAlive.logFile, 'w');
    const env = { ...serverEnv(), CRMSYNC_LEASE: keepAlive.leaseFile, CRMSYNC_IDLE_S: String(Math.max(1, Math.round(keepAlive.idleMs / 1000))), CRMSYNC_RECORD: keepAlive.recordFile };
    try {
      child = spawn('/bin/sh', ['-c', KEEPER, options.cliPath, ...args], { stdio: ['ignore', log, log], detached: true, env });
    } finally {
      closeSync(log);
    }
    child.unref();
  } else {
    // Own process group: a terminal's Ctrl-C reaches only us, so workers can drain against a live
    // server before stop(); the watchdog and the hooks below still end it with this process.
    child = spawn('/bin/sh', ['-c', WATCHDOG, options.cliPath, ...args], { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: serverEnv() });
    // The pipe only signals our death; nothing is written, and its errors mean the shell is gone.
    child.stdin?.on('error', () => undefined);
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-OUTPUT_TAIL_BYTES);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
  }
  const exited = new Promise<number | string | null>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal));
    child.once('error', (err) => resolve(err.message));
  });
  const unhook = keepAlive ? () => undefined : killOnParentExit(child);

  const ready = await waitForTemporal({ address, namespace, timeoutMs: options.readyTimeoutMs ?? 60_000, abort: exited });
  if (!ready) {
    unhook();
    await terminate(child, exited);
    if (keepAlive) output = readFileSync(keepAlive.logFile, 'utf8').slice(-OUTPUT_TAIL_BYTES);
    throw new TemporalDevServerError(
      `The embedded Temporal dev server (${options.cliPath}) did not become ready on ${address}. ` +
        `Its output:\n${output.trim() || '(none)'}\nCheck the CLI runs (\`${options.cliPath} --version\`), or set TEMPORAL_ADDRESS to a running Temporal.`,
    );
  }

  let stopping: Promise<void> | undefined;
  return {
    address,
    namespace,
    pid: child.pid ?? -1,
    stop: () => {
      stopping ??= (async () => {
        unhook();
        await terminate(child, exited);
      })();
      return stopping;
    },
  };
}

/** SIGTERM lets the server flush its SQLite file; SIGKILL if it hangs. */
async function terminate(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  // Closing the watchdog's pipe stops the server even if the shell itself is SIGKILLed below.
  child.stdin?.destroy();
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  try {
    await exited;
  } finally {
    clearTimeout(timer);
  }
}

function killOnParentExit(child: ChildProcess): () => void {
  const onExit = (): void => {
    child.kill('SIGTERM');
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    // Another handler (a worker draining) owns the graceful shutdown; the server must outlive it,
    // and stop() or the exit hook ends it afterwards.
    if (process.listenerCount(signal) > 1) return;
    child.kill('SIGTERM');
    unhook();
    // We were the only handler: keep the default behaviour of dying on the signal.
    process.kill(process.pid, signal);
  };
  process.once('exit', onExit);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  function unhook(): void {
    process.off('exit', onExit);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return unhook;
}

/** The server needs no CRM credentials or webhook secrets: pass only what a process needs to run. */
function serverEnv(): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'TMPDIR', 'TMP', 'TEMP', 'LANG', 'LC_ALL', 'TZ', 'USER'];
  return Object.fromEntries(keep.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]));
}
