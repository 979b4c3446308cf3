import { DefaultLogger, Runtime, type LogEntry, type LogLevel } from '@temporalio/worker';
import type { Logger } from '../logger.js';

/** Temporal's notes about a worker that serves only workflows or only activities, as crmsync's do by design. */
const EXPECTED = /^No (activities|workflows) registered/;

/**
 * Routes the Temporal SDK's own log lines through crmsync's logger, so they share its format
 * (JSON or human lines) and level: the SDK's INFO (every worker state change) becomes debug,
 * its warnings stay warnings, except the expected "No activities registered" notes (debug).
 * Without a logger, only the SDK's warnings are printed. Once per process.
 *
 * `shutdownSignals: []`: by default the SDK stops every worker on SIGINT/SIGTERM, before the
 * command has cancelled its workflow, so the cancellation has no worker left to run it and the
 * command hangs. The commands that use this runtime handle the signals themselves.
 */
export function quietTemporalRuntime(logLevel: string, logger?: Logger): void {
  const level: LogLevel = logLevel === 'trace' ? 'TRACE' : logLevel === 'debug' ? 'DEBUG' : logLevel === 'silent' ? 'ERROR' : 'WARN';
  const forward = logger ? (entry: LogEntry) => forwardEntry(logger, entry) : undefined;
  try {
    Runtime.install({ logger: new DefaultLogger(logger ? 'DEBUG' : level, forward), shutdownSignals: [] });
  } catch {
    // Installed already (an earlier command in this process): keep it.
  }
}

function forwardEntry(logger: Logger, entry: LogEntry): void {
  const meta = { ...entry.meta, temporal: true };
  const message = entry.message;
  switch (entry.level) {
    case 'TRACE':
      return logger.trace(meta, message);
    case 'DEBUG':
    case 'INFO':
      return logger.debug(meta, message);
    case 'WARN':
      return EXPECTED.test(message) ? logger.debug(meta, message) : logger.warn(meta, message);
    default:
      return logger.error(meta, message);
  }
}
