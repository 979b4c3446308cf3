import { statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { hasProcessLockWaiters } from './process-locks.js';

/**
 * How a process that wants the DuckDB file asks the process holding it for a turn. DuckDB lets
 * one process open a file for writing and no other process open it meanwhile, so a writer that
 * keeps its file across many jobs (the sync's write queue) must hear when someone else is
 * waiting: a process locked out touches `<db>.turn-request`; the holder checks it between jobs,
 * checkpoints, closes, and stays away while the request is fresh.
 */
const SUFFIX = '.turn-request';
/** A request older than this is from a process that gave up or died: ignored. */
const FRESH_MS = 5_000;

/** Asks for a turn at `dbPath` (idempotent; call again on every failed open to keep it fresh). */
export function requestTurn(dbPath: string): void {
  const file = dbPath + SUFFIX;
  try {
    const now = new Date();
    try {
      utimesSync(file, now, now);
    } catch {
      writeFileSync(file, `${process.pid}\n`);
    }
  } catch {
    // A read-only directory: the holder's own hold limit still gives the file back.
  }
}

/** Withdraws the request (the file was opened, or the caller gave up). */
export function withdrawTurnRequest(dbPath: string): void {
  try {
    unlinkSync(dbPath + SUFFIX);
  } catch {
    // already gone
  }
}

/** True when another process (a fresh request file) or another scope of this process waits for `dbPath`. */
export function turnRequested(dbPath: string, now = Date.now()): boolean {
  if (hasProcessLockWaiters(dbPath)) return true;
  try {
    return now - statSync(dbPath + SUFFIX).mtimeMs < FRESH_MS;
  } catch {
    return false;
  }
}
