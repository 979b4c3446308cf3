// Pure, shared by the sync workflow and the CLI's run reader (values only, no imports), so a failed
// run and the command that reports it name the same message.

/**
 * The message of a failure that names the fix: the first crmsync failure down the cause chain (an
 * ApplicationFailure whose type is a crmsync code, such as SYNC_MEMORY_LIMIT: its message is ours),
 * else the innermost error's. Deeper causes are what that failure was made from (DuckDB's own
 * advice names SQL settings, not the variable to change).
 */
export function failureMessage(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error && !isCrmsyncFailure(e)) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}

function isCrmsyncFailure(e: Error): boolean {
  const type = (e as { type?: unknown }).type;
  return e.name === 'ApplicationFailure' && typeof type === 'string' && /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$/.test(type);
}
