import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Structured logs to stderr (stdout is for command output). Keys that may hold credentials are
 * censored whatever their depth; secrets are also wrapped in `Secret`, which prints redacted.
 */
export function createLogger(level: string = 'info', bindings: Record<string, unknown> = {}): Logger {
  return pino(
    {
      level,
      base: bindings,
      redact: {
        paths: ['password', '*.password', 'secret', '*.secret', 'authorization', '*.authorization', 'headers.authorization', '*.headers.authorization', 'secrets', '*.secrets'],
        censor: '[redacted]',
      },
    },
    pino.destination({ dest: 2, sync: false }),
  );
}

export const silentLogger: Logger = pino({ level: 'silent' });
