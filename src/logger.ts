import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

export type { Logger };

export type LogFormat = 'auto' | 'json' | 'human';
let format: LogFormat = 'auto';

/** `--log-json` (or tests) choose the format of every logger created after; `auto` decides by the terminal. */
export function setLogFormat(f: LogFormat): void {
  format = f;
}

/** JSON when asked, or when stdout is not a terminal (a pipe, a file, a service); human lines on a terminal. */
export function logsAsJson(): boolean {
  return format === 'json' || (format === 'auto' && process.stdout.isTTY !== true);
}

const REDACT = ['password', '*.password', 'secret', '*.secret', 'authorization', '*.authorization', 'headers.authorization', '*.headers.authorization', 'secrets', '*.secrets'];

/**
 * Logs to stderr (stdout is for command output). Structured JSON lines when stdout is not a
 * terminal or with `--log-json`; on a terminal, where progress is shown, only warnings and errors
 * as short human lines (unless CRMSYNC_LOG_LEVEL asks for debug or trace). Keys that may hold
 * credentials are censored at the top level and one level down (REDACT's paths); at any depth
 * it is `Secret`, which every credential is wrapped in, that prints as `[redacted]`.
 */
export function createLogger(level: string = 'info', bindings: Record<string, unknown> = {}): Logger {
  const options = { level, base: bindings, redact: { paths: REDACT, censor: '[redacted]' } };
  if (logsAsJson()) return pino(options, pino.destination({ dest: 2, sync: false }));
  const humanLevel = level === 'debug' || level === 'trace' || level === 'silent' ? level : level === 'info' ? 'warn' : level;
  return pino({ ...options, level: humanLevel }, humanStream(process.stderr));
}

/** JSON lines to `stream` whatever the terminal (the background worker's log file), with the same redaction. */
export function createJsonLogger(level: string, bindings: Record<string, unknown>, stream: NodeJS.WritableStream): Logger {
  return pino({ level, base: bindings, redact: { paths: REDACT, censor: '[redacted]' } }, stream);
}

const LEVEL_NAMES: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warning', 50: 'error', 60: 'fatal' };
const SKIP = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'cmd']);

/** One pino JSON line as `crmsync: warning: message (key=value ...)`. */
export function formatHumanLine(line: string): string {
  try {
    const o = JSON.parse(line) as Record<string, unknown>;
    const extras = Object.entries(o)
      .filter(([k]) => !SKIP.has(k))
      .map(([k, v]) => `${k}=${typeof v === 'object' && v !== null ? (k === 'err' && 'message' in v ? String(v.message) : JSON.stringify(v)) : String(v)}`);
    return `crmsync: ${LEVEL_NAMES[Number(o.level)] ?? 'log'}: ${String(o.msg ?? '')}${extras.length ? ` (${extras.join(', ')})` : ''}\n`;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
}

function humanStream(out: NodeJS.WritableStream): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) out.write(formatHumanLine(line));
      done();
    },
  });
}

export const silentLogger: Logger = pino({ level: 'silent' });
