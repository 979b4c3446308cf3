import { Connection } from '@temporalio/client';

export interface WaitForTemporalOptions {
  address: string;
  namespace: string;
  timeoutMs: number;
  /** Resolves when waiting is pointless (for example the server process exited). */
  abort?: Promise<unknown> | undefined;
}

/**
 * Polls until the frontend answers and `namespace` is registered: a listening port alone is not
 * enough, the dev server registers namespaces a moment later.
 */
export async function waitForTemporal(options: WaitForTemporalOptions): Promise<boolean> {
  const deadline = Date.now() + options.timeoutMs;
  let aborted = false;
  // A rejected abort signal also means waiting is pointless.
  const stop = (): void => {
    aborted = true;
  };
  options.abort?.then(stop, stop);
  while (!aborted && Date.now() < deadline) {
    if (await answers(options.address, options.namespace)) return true;
    await new Promise((r) => setTimeout(r, 150));
  }
  return false;
}

async function answers(address: string, namespace: string): Promise<boolean> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address, connectTimeout: 1_000 });
    await connection.workflowService.describeNamespace({ namespace });
    return true;
  } catch {
    return false;
  } finally {
    await connection?.close().catch(() => undefined);
  }
}
