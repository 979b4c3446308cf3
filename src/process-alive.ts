/** Whether a process with this pid exists (EPERM: it does, but belongs to another user). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Stops `pid`: SIGTERM (it may drain and flush its files), then SIGKILL once `timeoutMs` passed
 * and it still runs. Resolves once it is gone.
 */
export async function terminateProcess(pid: number, timeoutMs: number): Promise<void> {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return; // gone already
  }
  const deadline = Date.now() + timeoutMs;
  while (isProcessAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (isProcessAlive(pid)) process.kill(pid, 'SIGKILL');
}
