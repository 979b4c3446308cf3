import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';

/**
 * The Temporal worker logs every state change at INFO on stderr; for a person running
 * `crmsync sync` that is noise. Keeps warnings (or everything at debug/trace). Once per process.
 *
 * `shutdownSignals: []`: by default the SDK stops every worker on SIGINT/SIGTERM, before the
 * command has cancelled its workflow, so the cancellation has no worker left to run it and the
 * command hangs. The commands that use this runtime handle the signals themselves.
 */
export function quietTemporalRuntime(logLevel: string): void {
  const level: LogLevel = logLevel === 'trace' ? 'TRACE' : logLevel === 'debug' ? 'DEBUG' : logLevel === 'silent' ? 'ERROR' : 'WARN';
  try {
    Runtime.install({ logger: new DefaultLogger(level), shutdownSignals: [] });
  } catch {
    // Installed already (an earlier command in this process): keep it.
  }
}
